// Async jobs' metrics (the `queue` and `metrics` features) as Prometheus serves them (prom-client's
// real text on GET /metrics): the queue's depth while one worker slot is taken, then how the jobs
// ended and how long they waited and ran. The in-process queue here; BullMQ: async-queue-redis.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { finished, poll, scrape } from "./async-poll.js";
import {
  anvilAccount,
  job,
  makeAgent,
  paymentSignature,
  post,
  production,
  recordingSettler,
  startApp,
} from "./helpers.js";

const payer = anvilAccount();
const TOKEN = "a-long-enough-metrics-token";

let app: Awaited<ReturnType<typeof startApp>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The value of a sample line `name` (with its labels) in the Prometheus text. */
function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe("async job metrics", () => {
  it("report the queue's depth, the jobs by state, and their time queued and running", async () => {
    const settler = recordingSettler();
    app = await startApp(makeAgent(), {
      ...production(settler),
      env: { WORKER_CONCURRENCY: "1", METRICS_TOKEN: TOKEN },
    });
    const { url } = app;
    const send = async (capability: string, input: unknown) => {
      const res = await post(url, job(capability, input), {
        prefer: "respond-async",
        "payment-signature": await paymentSignature(payer),
      });
      expect(res.status).toBe(202);
      return { location: res.headers.get("location")!, token: res.body.job_token as string };
    };
    // One worker slot: the slow job runs, the failing one waits behind it.
    const slow = await send("slow", { ms: 2500 });
    const throws = await send("throws", { text: "internal" });
    for (let i = 0; (await poll(url, slow.location, slow.token)).body.status !== "running"; i++) {
      if (i > 100) throw new Error("the slow job never ran");
      await new Promise((r) => setTimeout(r, 20));
    }
    const during = await scrape(url, TOKEN);
    expect(during).toContain("# TYPE agent_async_jobs_queued gauge");
    expect(sample(during, "agent_async_jobs_queued")).toBe(1);
    expect(sample(during, "agent_async_jobs_running")).toBe(1);

    expect((await finished(url, slow.location, slow.token, 10_000, 50)).status).toBe(200);
    expect((await finished(url, throws.location, throws.token, 10_000, 50)).status).toBe(500);
    const after = await scrape(url, TOKEN);
    expect(sample(after, "agent_async_jobs_queued")).toBe(0);
    expect(sample(after, "agent_async_jobs_running")).toBe(0);
    expect(sample(after, 'agent_async_jobs_total{capability="slow",state="completed"}')).toBe(1);
    expect(sample(after, 'agent_async_jobs_total{capability="throws",state="failed"}')).toBe(1);
    expect(sample(after, 'agent_async_jobs_total{capability="slow",state="failed"}')).toBe(
      undefined,
    );
    // The failing job waited for the slow one (up to 2.5 s), the slow one hardly at all.
    const queued = (le: string, cap: string) =>
      sample(after, `agent_async_job_queued_seconds_bucket{le="${le}",capability="${cap}"}`);
    expect(queued("1", "slow")).toBe(1);
    expect(queued("1", "throws")).toBe(0);
    expect(queued("5", "throws")).toBe(1);
    // The slow job ran about 2.5 s: above the 1 s bucket, within 5 s.
    const ran = (le: string) =>
      sample(after, `agent_async_job_running_seconds_bucket{le="${le}",capability="slow"}`);
    expect(ran("1")).toBe(0);
    expect(ran("5")).toBe(1);
    expect(sample(after, 'agent_async_job_running_seconds_count{capability="throws"}')).toBe(1);
    expect(settler.settled()).toBe(1);
    // agent_jobs_total counts each async job once, when it ended, beside the synchronous ones.
    expect(sample(after, 'agent_jobs_total{capability="slow",outcome="completed"}')).toBe(1);
    expect(sample(after, 'agent_jobs_total{capability="throws",outcome="internal"}')).toBe(1);
    // A job refused before it was queued (here: unpaid) is counted with its refusal.
    const unpaid = await post(url, job("slow", { ms: 1 }), { prefer: "respond-async" });
    expect(unpaid.status).toBe(402);
    const refused = await scrape(url, TOKEN);
    expect(sample(refused, 'agent_jobs_total{capability="slow",outcome="payment_required"}')).toBe(
      1,
    );
    expect(sample(refused, 'agent_jobs_total{capability="slow",outcome="completed"}')).toBe(1);
  });
});
