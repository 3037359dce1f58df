/**
 * The job queue on BullMQ (REDIS_URL set): every web instance adds to it and reads from it, every
 * worker (`npm start`'s, or `npm run worker`'s) takes jobs from it. BullMQ holds each running job
 * under a lock its worker renews; a worker that dies (SIGKILL, a lost machine) stops renewing, and
 * after JOB_LOCK_SECONDS its job goes back to the queue for another worker (stalled-job recovery).
 * That is at-least-once execution: the ledger, not the queue, makes the charge happen at most once
 * (work.ts). A finished job's answer is kept JOB_RESULT_TTL_SECONDS.
 *
 * Redis for BullMQ needs `maxmemory-policy noeviction` (an evicted key loses a job) and persistence
 * (appendonly yes): both are checked at start-up, and a warning says what to change.
 * Every running worker says it is alive in Redis (worker-alive.ts): a web instance without its own
 * worker refuses async jobs while none is (accept.ts).
 * Part of your project: edit freely.
 */
import { createRequire } from "node:module";
import type { StoredResult } from "../ledger/ledger.js";
import type { Logger } from "../types.js";
import {
  type BullQueueOptions,
  type JobQueue,
  type JobRecord,
  type Processor,
  type QueuedJob,
  RunAgainLater,
} from "./queue.js";
import { type RedisConnection, workerLiveness, workersKey } from "./worker-alive.js";

/** The queue's name under the prefix. */
const QUEUE_NAME = "jobs";
/** A job cut by a shutdown is tried again this many times in all, a second apart. */
const ATTEMPTS = 5;
/** BullMQ's states of a job no worker runs yet (delayed: cut by a shutdown, tried again soon). */
const WAITING = ["waiting", "delayed", "prioritized", "paused"];
/** Times a job may lose its worker (stall) before it fails (nothing charged). */
const MAX_STALLS = 3;

// What this module uses of bullmq: named here, so its declarations (and those of the Redis client
// they reach, ~900 KB) stay out of the project's typecheck; it is loaded with require() only here.
interface BullJob {
  data: QueuedJob;
  returnvalue: unknown;
  getState(): Promise<string>;
}
interface BullQueue {
  /** The Redis backend (its raw client: the durability check). */
  backend?: { client?: Promise<RedisConnection> };
  add(name: string, data: QueuedJob, options: Record<string, unknown>): Promise<unknown>;
  /** A key of this queue (a job's hash: its id). */
  toKey(type: string): string;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
  on(event: string, listener: (...args: any[]) => void): unknown;
}
interface BullWorker {
  close(force?: boolean): Promise<void>;
  on(event: string, listener: (...args: any[]) => void): unknown;
}
interface BullMq {
  Queue: new (name: string, options: Record<string, unknown>) => BullQueue;
  Worker: new (
    name: string,
    processor: (job: BullJob) => Promise<unknown>,
    options: Record<string, unknown>,
  ) => BullWorker;
  Job: { fromId(queue: BullQueue, id: string): Promise<BullJob | undefined> };
}

/** BullMQ's connection options for a redis:// or rediss:// URL (host, port, credentials, db, TLS). */
export function connectionOf(url: string, name: string): Record<string, unknown> {
  const parsed = new URL(url);
  const db = Number(parsed.pathname.slice(1) || "0");
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port: Number(parsed.port || 6379),
    ...(parsed.username && { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password && { password: decodeURIComponent(parsed.password) }),
    ...(Number.isSafeInteger(db) && db > 0 && { db }),
    ...(parsed.protocol === "rediss:" && { tls: { servername: parsed.hostname } }),
    connectionName: name,
  };
}

/** Says what to change when Redis may lose jobs: an eviction policy, or no persistence. */
async function checkDurability(queue: BullQueue, logger: Logger): Promise<void> {
  try {
    const redis = await queue.backend?.client;
    if (!redis) return;
    const [, policy] = (await redis.call("CONFIG", "GET", "maxmemory-policy")) as string[];
    if (policy !== "noeviction")
      logger.warn(
        `job queue: Redis maxmemory-policy is ${JSON.stringify(policy)}: set it to noeviction (an evicted key loses a queued job or its answer)`,
      );
    const [, aof] = (await redis.call("CONFIG", "GET", "appendonly")) as string[];
    if (aof !== "yes" && process.env.NODE_ENV === "production")
      logger.warn(
        "job queue: Redis has appendonly no: a Redis restart loses queued jobs and spent authorizations; set appendonly yes",
      );
  } catch {
    // CONFIG may be disabled (managed Redis): the docs say what it needs.
  }
}

export async function createBullQueue(options: BullQueueOptions): Promise<JobQueue> {
  const bull = createRequire(import.meta.url)("bullmq") as BullMq;
  const { url, prefix, logger } = options;
  // Adding and reading fail at once while Redis is away (a 503), never wait for it.
  const connection = { ...connectionOf(url, "job-queue"), enableOfflineQueue: false };
  const queue = new bull.Queue(QUEUE_NAME, { connection, prefix });
  queue.on("error", () => undefined); // it reconnects by itself; an add that fails is a 503
  void checkDurability(queue, logger);
  const keep = { age: options.resultTtlSeconds };
  let worker: BullWorker | undefined;
  const client = async (): Promise<RedisConnection> => {
    const redis = await queue.backend?.client;
    if (!redis) throw new Error("the job queue has no Redis client");
    return redis;
  };
  const alive = workerLiveness(client, workersKey(prefix, QUEUE_NAME), logger);

  return {
    describe: () =>
      `job queue: BullMQ on Redis (${new URL(url).host}), prefix "${prefix}": shared by every web instance and worker`,
    async add(job, fresh) {
      await queue.add(QUEUE_NAME, job, {
        jobId: job.id,
        attempts: ATTEMPTS,
        backoff: { type: "fixed", delay: 1000 },
        removeOnComplete: keep,
        removeOnFail: keep,
      });
      if (fresh) return job.token;
      // BullMQ keeps a job already under this id and does not say so: its data field says whose it is
      // (one HGET, not the whole job and its state: get() costs the queue a third of its throughput).
      const data = await (await client()).call("HGET", queue.toKey(job.id), "data");
      if (typeof data !== "string") return undefined;
      const token = (JSON.parse(data) as Partial<QueuedJob>).token;
      return typeof token === "string" ? token : undefined;
    },
    async get(id): Promise<JobRecord | undefined> {
      const job = await bull.Job.fromId(queue, id);
      if (!job) return undefined;
      const state = await job.getState();
      if (state === "completed") {
        // Read again: the job read before its state may predate its return value.
        const done = (await bull.Job.fromId(queue, id)) ?? job;
        if (done.returnvalue)
          return { data: done.data, state: "done", answer: done.returnvalue as StoredResult };
        return { data: job.data, state: "running" };
      }
      if (state === "failed") return { data: job.data, state: "done", answer: failedAnswer() };
      return { data: job.data, state: state === "active" ? "running" : "queued" };
    },
    async counts() {
      const n = await queue.getJobCounts(...WAITING, "active");
      const queued = WAITING.reduce((sum, state) => sum + (n[state] ?? 0), 0);
      return { queued, running: n.active ?? 0 };
    },
    async work(processor: Processor, concurrency: number) {
      const lockMs = options.lockSeconds * 1000;
      worker = new bull.Worker(QUEUE_NAME, (job) => processor(job.data), {
        connection: connectionOf(url, "job-worker"),
        prefix,
        concurrency,
        lockDuration: lockMs,
        stalledInterval: lockMs,
        maxStalledCount: MAX_STALLS,
      });
      worker.on("error", workerErrorLog(logger));
      worker.on("failed", (_job: unknown, err: unknown) => {
        if (!(err instanceof RunAgainLater))
          logger.warn("job worker: a job failed in the queue", { error: String(err) });
      });
      await alive.start();
    },
    workerSeen: () => alive.seen(),
    async stopWorking() {
      // No longer counted first: no web instance queues a job for this worker while it stops.
      await alive.stop();
      await worker?.close();
    },
    async close() {
      await alive.stop();
      await worker?.close();
      await queue.close();
    },
  };
}

/** A job BullMQ gave up on (it lost its worker too often, or kept being cut): nothing charged. */
function failedAnswer(): StoredResult {
  return {
    status: 500,
    headers: { "Cache-Control": "no-store" },
    body: JSON.stringify({
      status: "failed",
      error_type: "internal",
      error:
        "the job could not be finished (its workers stopped before it did); nothing was charged; send it again with a new payment",
    }),
  };
}

/**
 * The worker's error line: an error text logged again only after a minute (BullMQ reports a Redis outage
 * twice a second), saying how many repeats it left out.
 */
export function workerErrorLog(logger: Logger, everyMs = 60_000): (err: unknown) => void {
  let last = "";
  let at = 0;
  let repeats = 0;
  return (err) => {
    const error = String(err);
    if (error !== last) repeats = 0;
    else if (Date.now() - at < everyMs) return void repeats++;
    logger.warn(
      "job worker: error (Redis away: it reconnects by itself; or a running job's lock lost, the process busy " +
        "longer than JOB_LOCK_SECONDS: another worker may run that job again, charged once)",
      { error, ...(repeats > 0 && { repeats_not_logged: repeats }) },
    );
    [last, at, repeats] = [error, Date.now(), 0];
  };
}
