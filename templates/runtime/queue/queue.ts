/**
 * The job queue async jobs run on, as the rest of queue/ sees it: BullMQ on Redis when REDIS_URL is
 * set (bullmq-queue.ts: shared by every web instance and worker, a worker that dies has its job
 * taken over by another), else in this process (memory-queue.ts: one instance; its jobs die with
 * it). What a queued job carries (QueuedJob) is the request as checked, its read credential, and for
 * a paid job the payment as sent and the ledger reservation the worker ends.
 * Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import type { PaymentIdClaim } from "../jobs/identifier.js";
import type { StoredResult } from "../ledger/ledger.js";
import type { AsyncQueueCounts } from "../ops/metrics.js";
import type { SentPayment } from "../payments/scheme.js";
import type { Logger } from "../types.js";
import { createMemoryQueue } from "./memory-queue.js";

/** Where a job is polled: GET /jobs/<id>. */
export const JOBS_PATH = "/jobs";

/** A paid job's payment, as the worker needs it to check and settle it (never logged). */
export interface QueuedPayment {
  /** The payment header (or MCP payload) as sent; the worker verifies it again. */
  sent: SentPayment;
  /** The resource it paid for (its verification checks it). */
  resourceUrl: string;
  /** Its identity in the ledger (gate.replayKey). */
  auth: string;
  /** The ledger reservation made at acceptance: the worker renews, spends or releases it. */
  reservation: string;
  /** identity.ts's hashes of the payment as sent and of the request. */
  payment: string;
  request: string;
  /** Its payment-identifier id, claimed at acceptance: the worker keeps the answer under it, or frees it. */
  paymentId?: PaymentIdClaim;
}

export interface QueuedJob {
  /** The URL id (GET /jobs/<id>). */
  id: string;
  /** The read credential returned in the 202 (Authorization: Bearer <token>). */
  token: string;
  jobId: string;
  capability: string;
  /** The input as validated (coerced, defaults filled in). */
  input: unknown;
  deadline: number;
  /** When it was accepted (ms since the epoch): its time in the queue is measured from it (metrics). */
  queuedAt?: number;
  /** Absent in dev mode. */
  paid?: QueuedPayment;
}

/** Where a job is: waiting for a worker, running, or done with its answer. */
export interface JobRecord {
  data: QueuedJob;
  state: "queued" | "running" | "done";
  /** The finished job's answer as POST /execute would send it. */
  answer?: StoredResult;
}

/** A job cut by a shutdown: back to the queue for another worker (BullMQ), its reservation kept. */
export class RunAgainLater extends Error {}

export type Processor = (job: QueuedJob) => Promise<StoredResult>;

export interface JobQueue {
  /** One line for the start-up log. */
  describe(): string;
  /**
   * Queues a job (a job with the same id already there is kept as it is), and says whose job is now
   * under its id: the token of the one stored there (`job.token` when this one was queued; undefined
   * when it cannot be read). `fresh`: the id was drawn at random, so nothing can be there (not read back).
   */
  add(job: QueuedJob, fresh?: boolean): Promise<string | undefined>;
  get(id: string): Promise<JobRecord | undefined>;
  /** Jobs waiting for a worker and jobs running (every worker's, for a shared queue): the metrics' depth. */
  counts(): Promise<AsyncQueueCounts>;
  /** Starts this process's worker: up to `concurrency` jobs at once. */
  work(processor: Processor, concurrency: number): Promise<void>;
  /**
   * Whether a worker takes this queue's jobs now: this process's, or (a shared queue) one that said
   * it is alive in Redis (worker-alive.ts). Throws when the queue cannot be reached.
   */
  workerSeen(): Promise<boolean>;
  /** Stops taking jobs; resolves once the running ones have finished. */
  stopWorking(): Promise<void>;
  close(): Promise<void>;
}

/** What the BullMQ queue module (bullmq-queue.ts) gives. */
export interface BullQueueOptions {
  url: string;
  /** Every key starts with it (REDIS_KEY_PREFIX's, then "bull"; in dev mode "dev:bull"). */
  prefix: string;
  resultTtlSeconds: number;
  lockSeconds: number;
  logger: Logger;
}

/** BullMQ on REDIS_URL, else the in-process queue (warned about in production). */
export async function selectQueue(
  config: ResolvedConfig,
  agentName: string,
  logger: Logger,
): Promise<JobQueue> {
  const settings = config.queue!;
  if (!config.redis) {
    if (process.env.NODE_ENV === "production")
      logger.warn(
        "job queue: in this process (REDIS_URL is not set): one instance only, and queued or running async jobs are lost when it stops (nothing is charged for them); set REDIS_URL to run them on BullMQ",
      );
    return createMemoryQueue(settings.resultTtlSeconds * 1000);
  }
  const { createBullQueue } = await import("./bullmq-queue.js");
  const { url, keyPrefix = `create-agent:${agentName}:` } = config.redis;
  return createBullQueue({
    url,
    // Dev mode's own queue: a dev worker on the production Redis (a copied .env) would run paid jobs
    // unpaid, and a production worker would refuse dev mode's unpaid ones.
    prefix: `${keyPrefix}${config.devMode ? "dev:" : ""}bull`,
    resultTtlSeconds: settings.resultTtlSeconds,
    lockSeconds: settings.lockSeconds,
    logger,
  });
}
