// The job queue on BullMQ (REDIS_URL) against Debian's redis-server: the start-up check says what
// to change when Redis may lose jobs (an eviction policy other than noeviction), and async jobs run
// on it (dev mode here: nothing to pay; paid ones: test/chain/async-jobs.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
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
