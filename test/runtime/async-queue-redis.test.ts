// The job queue on BullMQ (REDIS_URL) against Debian's redis-server: the start-up check says what
// to change when Redis may lose jobs (an eviction policy other than noeviction), and async jobs run
// on it (dev mode here: nothing to pay; paid ones: test/chain/async-jobs.test.ts). An instance with
// metrics reports the shared queue's depth, even one that serves HTTP only and was never asked a job.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { finished, scrape } from "./async-poll.js";
import { captureLogger, job, listen, logText, makeAgent, post } from "./helpers.js";

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
