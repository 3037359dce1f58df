// Async jobs (the `queue` feature) on the in-process queue: POST /execute with Prefer: respond-async
// answers 202 after the payment is verified and reserved, GET /jobs/<id> answers the credential's
// holder only, and the payment is settled only once the job completed with a valid output. The
// settler records what it is asked (on-chain settlement: test/chain/async-jobs.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import {
  anvilAccount,
  job,
  makeAgent,
  nowSeconds,
  paymentSignature,
  post,
  production,
  recordingSettler,
  startApp,
  type TestAgent,
} from "./helpers.js";
import { finished as finishedAfter, poll } from "./async-poll.js";

const payer = anvilAccount();
const ASYNC = { prefer: "respond-async" };

let app: Awaited<ReturnType<typeof startApp>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function paidApp(agent: TestAgent, env: Record<string, string> = {}) {
  const settler = recordingSettler();
  app = await startApp(agent, { ...production(settler), env });
  return { url: app.url, settler };
}

/** Polls until the job is no longer queued or running. */
const finished = (url: string, location: string, token: string, ms = 10_000) =>
  finishedAfter(url, location, token, ms, 50);

describe("POST /execute with Prefer: respond-async", () => {
  it("answers 202 with Location and a credential, settles once the job completed, and only its holder reads it", async () => {
    const agent = makeAgent();
    const { url, settler } = await paidApp(agent);
    const body = job("slow", { ms: 400 });
    const res = await post(url, body, {
      ...ASYNC,
      "payment-signature": await paymentSignature(payer),
    });
    expect(res.status).toBe(202);
    expect(res.headers.get("preference-applied")).toBe("respond-async");
    expect(res.headers.get("job-status")).toBe("queued"); // an answer about the job: it says so
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/jobs\/job_[0-9a-f]{32}$/);
    expect(res.body).toMatchObject({
      service_version: "1.0",
      job_id: body.job_id,
      status: "queued",
    });
    const token: string = res.body.job_token;
    expect(token.length).toBeGreaterThanOrEqual(40);

    // While it runs: nothing charged; the holder sees it running; anyone else gets 404.
    const running = await poll(url, location, token);
    expect(running.status).toBe(200);
    expect(["queued", "running"]).toContain(running.body.status);
    expect(running.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(running.headers.get("job-status")).toBe(running.body.status);
    expect(settler.settled()).toBe(0);
    expect((await poll(url, location)).status).toBe(404);
    expect((await poll(url, location)).headers.get("job-status")).toBeNull(); // not the job's answer
    expect((await poll(url, location, "x".repeat(token.length))).status).toBe(404);
    expect((await poll(url, "/jobs/job_00000000000000000000000000000000", token)).status).toBe(404);

    const done = await finished(url, location, token);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      job_id: body.job_id,
      status: "completed",
      output: { text: "done" },
    });
    expect(done.headers.get("payment-response")).toBeTruthy();
    expect(done.headers.get("job-status")).toBe("completed");
    expect(settler.settled()).toBe(1);
    expect(agent.calls.slow).toBe(1);
    // Polled again: the same answer, no second charge; still 404 for anyone else.
    expect((await poll(url, location, token)).body).toEqual(done.body);
    expect((await poll(url, location)).status).toBe(404);
    expect(settler.settled()).toBe(1);
  });

  it("without the header, /execute answers as before (200, no Preference-Applied)", async () => {
    const { url, settler } = await paidApp(makeAgent());
    const res = await post(url, job("echo", { text: "hi" }), {
      "payment-signature": await paymentSignature(payer),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("preference-applied")).toBeNull();
    expect(settler.settled()).toBe(1);
  });

  it("asks for payment (402) and validates input (400) before queueing anything", async () => {
    const agent = makeAgent();
    const { url } = await paidApp(agent);
    expect((await post(url, job("echo", { text: "hi" }), ASYNC)).status).toBe(402);
    const bad = await post(url, job("echo", {}), {
      ...ASYNC,
      "payment-signature": await paymentSignature(payer),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error_type).toBe("validation");
    expect(agent.calls.echo).toBeUndefined();
  });

  it.each([
    ["a handler that throws", "throws", { text: "internal" }, 500, "internal"],
    ["an output that breaks its schema", "bad_output", { text: "hi" }, 500, "internal"],
    [
      "a handler whose upstream is down (UnavailableError)",
      "throws",
      { text: "unavailable" },
      503,
      "internal",
    ],
  ])(
    "%s: the failed body, marked final (Job-Status), nothing charged, the authorization free again",
    async (_n, cap, input, status, type) => {
      const { url, settler } = await paidApp(makeAgent());
      const signature = await paymentSignature(payer);
      const res = await post(url, job(cap, input), { ...ASYNC, "payment-signature": signature });
      expect(res.status).toBe(202);
      const done = await finished(url, res.headers.get("location")!, res.body.job_token);
      expect(done.status).toBe(status);
      expect(done.body).toMatchObject({ status: "failed", error_type: type });
      // The job's own answer, not an outage's: a poller stops here, a 503 too.
      expect(done.headers.get("job-status")).toBe("failed");
      expect(done.headers.get("payment-response")).toBeNull();
      expect(settler.settled()).toBe(0);
      // Nothing was spent: the same authorization pays for another job.
      const again = await post(url, job("echo", { text: "ok" }), {
        "payment-signature": signature,
      });
      expect(again.status).toBe(200);
      expect(settler.settled()).toBe(1);
    },
  );

  it("a deadline that passes while the job is queued: 408, the handler never runs, nothing charged", async () => {
    const agent = makeAgent();
    const { url, settler } = await paidApp(agent, { WORKER_CONCURRENCY: "1" });
    // One worker slot, taken by a 3.5 s job; the next job is due in 2 s.
    const first = await post(url, job("slow", { ms: 3500 }), {
      ...ASYNC,
      "payment-signature": await paymentSignature(payer),
    });
    expect(first.status).toBe(202);
    const late = await post(url, job("echo", { text: "late" }, { deadline: nowSeconds() + 2 }), {
      ...ASYNC,
      "payment-signature": await paymentSignature(payer),
    });
    expect(late.status).toBe(202);
    const location = late.headers.get("location")!;
    await new Promise((r) => setTimeout(r, 2600));
    const expired = await poll(url, location, late.body.job_token);
    expect(expired.status).toBe(408);
    expect(expired.headers.get("job-status")).toBe("failed");
    expect(expired.body).toMatchObject({ status: "failed", error_type: "deadline" });
    await finished(url, first.headers.get("location")!, first.body.job_token);
    const done = await finished(url, location, late.body.job_token);
    expect(done.status).toBe(408);
    expect(agent.calls.echo).toBeUndefined();
    expect(settler.settled()).toBe(1); // the first job's, only
  });

  it("the identical request again (its 202 lost) finds the same job and credential; the payment runs one job", async () => {
    const agent = makeAgent();
    const { url, settler } = await paidApp(agent);
    const body = job("slow", { ms: 300 });
    const headers = { ...ASYNC, "payment-signature": await paymentSignature(payer) };
    const first = await post(url, body, headers);
    const second = await post(url, body, headers);
    expect(second.status).toBe(202);
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(second.body.job_token).toBe(first.body.job_token);
    // The same payment for another job_id while it runs: refused, in use.
    const other = await post(url, { ...body, job_id: "another" }, headers);
    expect(other.status).toBe(402);
    expect(other.body.error).toMatch(/in use/);
    await finished(url, first.headers.get("location")!, first.body.job_token);
    expect(agent.calls.slow).toBe(1);
    expect(settler.settled()).toBe(1);
  });

  it("dev mode: queued and run, nothing to pay", async () => {
    app = await startApp(makeAgent(), { devMode: true });
    const res = await post(app.url, job("echo", { text: "dev" }), ASYNC);
    expect(res.status).toBe(202);
    const done = await finished(app.url, res.headers.get("location")!, res.body.job_token);
    expect(done.body).toMatchObject({ status: "completed", output: { text: "dev" } });
  });
});
