// The job queue on BullMQ (REDIS_URL) against Debian's redis-server: the start-up check says what
// to change when Redis may lose jobs (an eviction policy other than noeviction), and async jobs run
// on it (dev mode here: nothing to pay; paid ones: test/chain/async-jobs.test.ts). An instance with
// metrics reports the shared queue's depth, even one that serves HTTP only and was never asked a job.
// A web instance without a worker (WORKER=off) refuses async jobs while no worker says it is alive.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { createBullQueue } from "../../templates/runtime/queue/bullmq-queue.js";
import { createMemoryQueue } from "../../templates/runtime/queue/memory-queue.js";
import type { JobQueue, QueuedJob } from "../../templates/runtime/queue/queue.js";
import { workersKey } from "../../templates/runtime/queue/worker-alive.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { finished, scrape } from "./async-poll.js";
import {
  anvilAccount,
  captureLogger,
  job,
  listen,
  logText,
  makeAgent,
  paymentSignature,
  post,
  production,
  recordingSettler,
} from "./helpers.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function redisCommand(...args: string[]): Promise<void> {
  const { Redis } = await import("ioredis");
  const client = new Redis(redis.url);
  try {
    await client.call(args[0]!, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

describe("the BullMQ job queue", () => {
  // accept.ts refuses a job whose id is already another's (queued with another token): add() says
  // whose job is under the id, from one read, on both queues.
  it("add() answers the token of the job under its id: its own, or the one kept there", async () => {
    const queued = (token: string): QueuedJob => ({
      id: "job_same",
      token,
      jobId: "j1",
      capability: "echo",
      input: { text: "a" },
      deadline: Math.floor(Date.now() / 1000) + 60,
    });
    const bull = await createBullQueue({
      url: redis.url,
      prefix: "add-test:bull",
      resultTtlSeconds: 60,
      lockSeconds: 30,
      logger: captureLogger(),
    });
    const queues: JobQueue[] = [createMemoryQueue(60_000), bull];
    try {
      for (const queue of queues) {
        expect(await queue.add(queued("first"))).toBe("first");
        expect(await queue.add(queued("second"))).toBe("first");
        expect((await queue.get("job_same"))?.data.token).toBe("first");
      }
    } finally {
      await bull.close();
    }
  });

  it("warns at start-up when Redis may evict its keys, and runs async jobs", async () => {
    await redisCommand("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
    const logger = captureLogger();
    const app = createApp(makeAgent(), {
      devMode: true,
      logger,
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "queue-test:" },
    });
    const jobs = app.locals.asyncJobs as { load(): Promise<{ close(): Promise<void> }> };
    const running = await listen(app);
    try {
      const until = Date.now() + 10_000;
      while (!/maxmemory-policy is "allkeys-lru": set it to noeviction/.test(logText(logger))) {
        if (Date.now() > until) throw new Error(`no warning in:\n${logText(logger)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(logText(logger)).toMatch(/job queue: BullMQ on Redis \(127\.0\.0\.1:\d+\)/);
      const res = await post(running.url, job("echo", { text: "queued" }), {
        prefer: "respond-async",
      });
      expect(res.status).toBe(202);
      const location = res.headers.get("location")!;
      let answer: any;
      for (let i = 0; i < 100; i++) {
        const poll = await fetch(`${running.url}${location}`, {
          headers: { authorization: `Bearer ${res.body.job_token}` },
        });
        answer = await poll.json();
        if (answer.status === "completed") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(answer).toMatchObject({ status: "completed", output: { text: "queued" } });
    } finally {
      await (await jobs.load()).close();
      await running.close();
      await redisCommand("CONFIG", "SET", "maxmemory-policy", "noeviction");
    }
  });
});

describe("the BullMQ job queue's metrics", () => {
  it("an HTTP-only instance reports the shared queue's depth; the worker's instance, the jobs it ran", async () => {
    const token = "a-long-enough-metrics-token";
    const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "queue-metrics:" };
    const instance = async (extra: Record<string, string>) => {
      const app = createApp(makeAgent(), {
        devMode: true,
        logger: captureLogger(),
        env: { ...env, ...extra },
      });
      const jobs = app.locals.asyncJobs as { load(): Promise<{ close(): Promise<void> }> };
      return { running: await listen(app), jobs };
    };
    // Watched: serves HTTP only, with metrics, and is sent no job. Front: takes the jobs, no worker.
    const watched = await instance({ WORKER: "off", METRICS_TOKEN: token });
    const front = await instance({ WORKER: "off" });
    // A worker elsewhere says it is alive (busy: the jobs wait), so the front takes jobs (dev mode: its prefix).
    await redisCommand(
      "ZADD",
      workersKey("queue-metrics:dev:bull", "jobs"),
      `${Date.now() + 60_000}`,
      "busy",
    );
    const started: Array<Awaited<ReturnType<typeof instance>>> = [watched, front];
    try {
      const sent = [];
      for (const text of ["one", "two"]) {
        const res = await post(front.running.url, job("echo", { text }), {
          prefer: "respond-async",
        });
        expect(res.status).toBe(202);
        sent.push({ location: res.headers.get("location")!, token: res.body.job_token as string });
      }
      const depth = async () => {
        const text = await scrape(watched.running.url, token);
        return text.match(/^agent_async_jobs_queued (\d+)$/m)?.[1];
      };
      expect(await depth()).toBe("2");
      // A worker with metrics runs them.
      const worker = await instance({ WORKER: "on", METRICS_TOKEN: token });
      started.push(worker);
      for (const { location, token: credential } of sent)
        expect((await finished(front.running.url, location, credential, 10_000, 50)).status).toBe(
          200,
        );
      // One read of the queue serves a scrape's gauges for a short window (metrics/async-jobs.ts).
      await new Promise((r) => setTimeout(r, 250));
      expect(await depth()).toBe("0");
      expect(await scrape(worker.running.url, token)).toContain(
        'agent_async_jobs_total{capability="echo",state="completed"} 2',
      );
    } finally {
      for (const { running, jobs } of started.reverse()) {
        await (await jobs.load()).close();
        await running.close();
      }
    }
  });
});

describe("a poll while Redis is away", () => {
  it("answers 503 with Retry-After, saying the job is unaffected (never the 500 of a failed job); once Redis is back, it answers again", async () => {
    const app = createApp(makeAgent(), {
      devMode: true,
      logger: captureLogger(),
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "queue-away:" },
    });
    const jobs = app.locals.asyncJobs as { load(): Promise<{ close(): Promise<void> }> };
    const running = await listen(app);
    try {
      const res = await post(running.url, job("echo", { text: "kept" }), {
        prefer: "respond-async",
      });
      expect(res.status).toBe(202);
      const location = res.headers.get("location")!;
      const token = res.body.job_token as string;
      const done = await finished(running.url, location, token, 10_000, 50);
      expect(done.status).toBe(200);
      expect(done.headers.get("job-status")).toBe("completed");
      await redis.stop();
      const away = await fetch(`${running.url}${location}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(away.status).toBe(503);
      expect(away.headers.get("retry-after")).toBe("2");
      // Not the job's answer (a job that failed with a 503 says so): pollers ask again.
      expect(away.headers.get("job-status")).toBeNull();
      const body = (await away.json()) as { error: string };
      expect(body).toMatchObject({ status: "failed", error_type: "internal" });
      expect(body.error).toMatch(/job queue is unreachable right now: the job is unaffected/);
      expect(body.error).not.toMatch(/failed on the server/);
      // Back (empty: it kept nothing): the poll answers again, as for any job it does not know.
      await redis.restart();
      let back = away;
      for (let i = 0; i < 200 && back.status === 503; i++) {
        await new Promise((r) => setTimeout(r, 50));
        back = await fetch(`${running.url}${location}`, {
          headers: { authorization: `Bearer ${token}` },
        });
      }
      expect(back.status).toBe(404);
    } finally {
      await (await jobs.load()).close();
      await running.close();
    }
  });
});

describe("async jobs while no worker runs (WORKER=off)", () => {
  it("refused 503 with Retry-After before anything is reserved (unpaid: before its offer); a synchronous job runs; once a worker runs, the same payment is queued and charged; a worker stopped cleanly no longer counts", async () => {
    const settler = recordingSettler();
    const instance = async (WORKER: string) => {
      const logger = captureLogger();
      const app = createApp(makeAgent(), {
        ...production(settler),
        logger,
        env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "queue-idle:", WORKER },
      });
      const jobs = app.locals.asyncJobs as { load(): Promise<{ close(): Promise<void> }> };
      return { running: await listen(app), jobs, logger };
    };
    const web = await instance("off");
    const started = [web];
    const async = { prefer: "respond-async" };
    try {
      const body = job("echo", { text: "later" });
      const header = await paymentSignature(anvilAccount());
      // No offer for a job nobody would run; paid: refused once verified, nothing reserved or settled.
      expect((await post(web.running.url, body, async)).status).toBe(503);
      const refused = await post(web.running.url, body, { ...async, "payment-signature": header });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(refused.body).toMatchObject({ status: "failed", error_type: "internal" });
      expect(refused.body.error).toMatch(
        /^no worker is running for async jobs, so the job was not queued; nothing was run or charged: start one with npm run worker, or send the job without Prefer: respond-async/,
      );
      expect(settler.settled()).toBe(0);
      expect(logText(web.logger)).toMatch(/no worker is running for async jobs: they are refused/);
      // Synchronously, on the same instance: run and charged at once.
      const sync = await post(web.running.url, job("echo", { text: "now" }), {
        "payment-signature": await paymentSignature(anvilAccount()),
      });
      expect(sync.status, sync.text).toBe(200);
      expect(settler.settled()).toBe(1);

      // A worker runs: the same payment is queued, run, and charged once.
      const worker = await instance("on");
      started.push(worker);
      await worker.jobs.load();
      const accepted = await post(web.running.url, body, { ...async, "payment-signature": header });
      expect(accepted.status, accepted.text).toBe(202);
      const location = accepted.headers.get("location")!;
      const done = await finished(web.running.url, location, accepted.body.job_token, 10_000, 50);
      expect(done.status).toBe(200);
      expect(done.body.output).toEqual({ text: "later" });
      expect(settler.settled()).toBe(2);

      // Its clean shutdown removes it at once (its last beat would count 15 s): refused again
      // once the web instance's 2 s trust in the worker it saw has passed.
      await (await worker.jobs.load()).close();
      const until = Date.now() + 4_000;
      let after = await post(web.running.url, job("echo", { text: "x" }), async);
      while (after.status === 402 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 100));
        after = await post(web.running.url, job("echo", { text: "x" }), async);
      }
      expect(after.status, after.text).toBe(503);
      // The identical retry of the job it ran (its answer lost) still gets it, worker or not.
      const again = await post(web.running.url, body, { ...async, "payment-signature": header });
      expect([200, 202], again.text).toContain(again.status);
      expect(JSON.stringify(again.body)).toContain(accepted.body.job_id);
      expect(settler.settled()).toBe(2);
    } finally {
      for (const { running, jobs } of started.reverse()) {
        await (await jobs.load()).close();
        await running.close();
      }
    }
  });
});
