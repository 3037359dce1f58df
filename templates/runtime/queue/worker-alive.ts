/**
 * Whether a worker takes the shared queue's jobs (BullMQ on Redis), so that a web instance without
 * its own worker (WORKER=off) refuses a new async job (accept.ts: 503, nothing reserved, run or
 * charged) instead of queueing it for nobody until its deadline passes.
 *
 * Each running worker (`npm run worker`'s, or a web instance's own) beats every BEAT_MS: it writes
 * its id into one sorted set under the queue's prefix, scored with the moment it stops counting
 * (Redis' own clock plus ALIVE_MS, so machines' clocks never matter). A clean shutdown removes its
 * id at once; a worker killed, or cut off from Redis, stops counting once ALIVE_MS passed. A dev-mode
 * worker beats under dev mode's own prefix: it never counts for production's queue.
 *
 * Not BullMQ's Queue.getWorkers(): it lists Redis connections by name (CLIENT LIST, CLIENT SETNAME),
 * which managed Redis services often deny or leave out, and a connection's name says nothing of
 * whether its worker still takes jobs. Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../types.js";

/** How often a running worker says it is alive, and how long one beat counts. */
const BEAT_MS = 5_000;
const ALIVE_MS = 15_000;
/** How long a web instance trusts a worker seen (the check is one Redis call per async job otherwise). */
const SEEN_CACHE_MS = 2_000;
/** Longest wait for Redis' answer (BullMQ's client waits for a Redis never reached since start-up). */
const REDIS_WAIT_MS = 2_000;

/** What this module uses of a Redis client (the queue's own: no connection of its own). */
export interface RedisConnection {
  call(command: string, ...args: string[]): Promise<unknown>;
}

// Redis' clock, in ms: every machine's beats and checks read the same one.
const NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) ";
/** A beat: this worker counts until ALIVE_MS from now; entries already expired go. */
const BEAT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
/** How many workers count now. */
const COUNT = `${NOW}
return redis.call('ZCOUNT', KEYS[1], string.format('(%d', now), '+inf')`;

/** The sorted set of a queue's workers (its BullMQ prefix and name). */
export const workersKey = (prefix: string, queueName: string): string =>
  `${prefix}:${queueName}:workers-alive`;

export interface WorkerLiveness {
  /** This process's worker began taking jobs: it beats (the first beat done when this resolves). */
  start(): Promise<void>;
  /** It stopped taking jobs: it no longer counts. */
  stop(): Promise<void>;
  /** Whether a worker counts now (this process's, or another's); throws when Redis cannot say. */
  seen(): Promise<boolean>;
}

/** `work`'s result, or an error once `ms` passed. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function workerLiveness(
  redis: () => Promise<RedisConnection>,
  key: string,
  logger: Logger,
): WorkerLiveness {
  const id = randomUUID();
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let beatFailed = false;
  let seenUntil = 0;
  let lastSeen: boolean | undefined;
  const run = (command: string, ...args: string[]) =>
    within(
      REDIS_WAIT_MS,
      redis().then((client) => client.call(command, ...args)),
    );
  const beat = async () => {
    try {
      await run("EVAL", BEAT, "1", key, id, String(ALIVE_MS));
      beatFailed = false;
    } catch (err) {
      // Said once per outage (BullMQ's own error lines say Redis is away).
      if (!beatFailed)
        logger.warn(
          `job worker: could not say it is alive (Redis away?): web instances without a worker refuse async jobs ${ALIVE_MS / 1000} s after its last beat, until it beats again`,
          { error: String(err) },
        );
      beatFailed = true;
    }
  };
  const report = (now: boolean) => {
    if (now === lastSeen) return;
    if (!now)
      logger.warn(
        "job queue: no worker is running for async jobs: they are refused (503) until one runs (npm run worker); synchronous jobs are unaffected",
      );
    else if (lastSeen === false)
      logger.info("job queue: a worker is running again: async jobs are accepted");
    lastSeen = now;
  };
  return {
    async start() {
      if (timer) return;
      timer = setInterval(() => void (beating = beat()), BEAT_MS);
      timer.unref();
      await (beating = beat());
    },
    async stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      await beating; // a beat landing after the removal would count it again
      await run("ZREM", key, id).catch(() => undefined); // else it expires after ALIVE_MS
    },
    async seen() {
      if (timer || Date.now() < seenUntil) return true;
      const count = Number(await run("EVAL", COUNT, "1", key));
      report(count > 0);
      if (count > 0) seenUntil = Date.now() + SEEN_CACHE_MS;
      return count > 0;
    },
  };
}
