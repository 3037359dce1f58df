/**
 * Async jobs, assembled (the `queue` feature): the queue (queue.ts), POST /execute's async branch
 * (accept.ts), GET /jobs/<id> (poll.ts) and this process's worker (work.ts), which stops taking
 * jobs once the server begins shutting down and lets the running ones finish (each counts as a
 * job in flight, so SIGTERM's drain waits for them). Loaded by transport.ts when the app is made.
 * Part of your project: edit freely.
 */
import type { HttpAnswer } from "../http/answer.js";
import type { JobAnswer } from "../jobs/outcome.js";
import type { JobCall, JobServices } from "../jobs/pipeline.js";
import type { QueuedJobState } from "../jobs/services.js";
import type { Logger } from "../types.js";
import { acceptJob, queueJob } from "./accept.js";
import { cancelJob } from "./cancel.js";
import { jobState, pollJob } from "./poll.js";
import { selectQueue } from "./queue.js";
import { runQueuedJob } from "./work.js";

/** How often the worker looks whether the server began shutting down. */
const STOP_CHECK_MS = 100;

export interface AsyncJobsService {
  accept(call: JobCall): Promise<HttpAnswer>;
  poll(id: string, authorization: string | undefined): Promise<HttpAnswer>;
  /** JobServices.asyncJobs's enqueue, state and cancel (A2A tasks on the queue). */
  enqueue(call: JobCall): Promise<{ queued: string } | JobAnswer>;
  state(id: string): Promise<QueuedJobState>;
  cancel(id: string): Promise<"cancelled" | "ended" | "unknown">;
  /** Starts this process's worker (WORKER_CONCURRENCY jobs at once). */
  startWorker(concurrency: number): Promise<void>;
  /** Stops the worker (running jobs finish) and closes the queue. */
  close(): Promise<void>;
}

export async function createAsyncJobs(s: JobServices, logger: Logger): Promise<AsyncJobsService> {
  const queue = await selectQueue(s.config, s.agent.name, logger);
  logger.info(queue.describe());
  s.metrics.asyncQueue?.(() => queue.counts());
  let watcher: NodeJS.Timeout | undefined;
  let stopped: Promise<void> | undefined;
  const stopWorking = () => {
    clearInterval(watcher);
    return (stopped ??= queue.stopWorking());
  };
  return {
    accept: (call) => acceptJob(s, queue, call),
    poll: (id, authorization) => pollJob(s, queue, id, authorization, logger),
    async enqueue(call) {
      const got = await queueJob(s, queue, call);
      return "kind" in got ? got : { queued: got.id };
    },
    async state(id) {
      const record = await queue.get(id);
      return record ? jobState(s, queue, record, logger) : "unknown";
    },
    cancel: (id) => cancelJob(s, queue, id),
    async startWorker(concurrency) {
      const requeue = s.config.redis !== undefined;
      await queue.work((job) => runQueuedJob(s, job, logger, { requeue }), concurrency);
      logger.info(`job worker: up to ${concurrency} async jobs at once`);
      // Shutdown began (SIGTERM): take no new job; the drain waits for the running ones.
      watcher = setInterval(() => {
        if (s.drain.stopping) void stopWorking();
      }, STOP_CHECK_MS);
      watcher.unref();
    },
    async close() {
      await stopWorking();
      await queue.close();
    },
  };
}
