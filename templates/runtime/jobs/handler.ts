/**
 * Steps 4, 5, 7 and 8: the deadline on arrival, then the handler under its deadline, with whatever
 * it throws mapped to the error map. A handler that ignores its AbortSignal keeps running after its
 * job was answered (408): it is reported as abandoned, and `stopped` tells when it really ends, so
 * a paid job's authorization stays reserved until then (never two handlers on one payment).
 * Part of your project: edit freely.
 */
import { DeadlineError, fromHandlerError, UnavailableError } from "../errors.js";
import type { Metrics } from "../ops/metrics.js";
import type { Capability, HandlerContext, Logger, VerifiedPayment } from "../types.js";
import { deadlinePassed, type DeadlineRun, startWithDeadline } from "./deadline.js";
import type { JobRequest } from "./request.js";

export interface HandlerRunOptions {
  logger: Logger;
  metrics: Metrics;
  /** The verified payment (absent in dev mode). */
  payment?: VerifiedPayment;
  /** Aborts when a graceful shutdown gives up waiting: the job answers 503 at once. */
  cut?: AbortSignal;
}

/** Step 4: a job whose deadline already passed is refused before anything runs. */
export function checkArrival(job: JobRequest): void {
  if (deadlinePassed(job.deadline))
    throw new DeadlineError(
      `deadline ${job.deadline} has already passed (now ${Math.floor(Date.now() / 1000)}); the handler was not run`,
    );
}

/** Step 5: starts the handler; `result` rejects with an AgentError (errors.ts) on any failure. */
/** A started handler: its result, when it really stops, and whether it still runs. */
export interface HandlerRun extends DeadlineRun<unknown> {
  isRunning(): boolean;
}

export function startHandler(
  job: JobRequest,
  capability: Capability,
  input: unknown,
  options: HandlerRunOptions,
): HandlerRun {
  const { logger, metrics } = options;
  const finished = metrics.handlerStarted(capability.name);
  let running = true;
  const run = startWithDeadline(job.deadline, async (signal) => {
    const ctx: HandlerContext = {
      jobId: job.jobId,
      capability: capability.name,
      deadline: job.deadline,
      signal,
      logger,
    };
    if (options.payment) ctx.payment = options.payment;
    try {
      return await capability.handler(input, ctx);
    } finally {
      running = false; // before anything downstream sees the result
    }
  });
  void run.stopped.then(finished);

  const result = withCut(run.result, options.cut).catch((err: unknown) => {
    if (running) {
      const ended = metrics.handlerAbandoned(capability.name);
      logger.warn(
        "handler still running after its job was answered; it should stop when ctx.signal aborts",
      );
      void run.stopped.then(() => {
        ended();
        logger.info("abandoned handler stopped");
      });
    }
    throw err instanceof UnavailableError ? err : fromHandlerError(err, logger);
  });
  return { result, stopped: run.stopped, isRunning: () => running };
}

/** The 503 of a job cut by a graceful shutdown before it began settling. */
export const shuttingDown = (): UnavailableError =>
  new UnavailableError(
    "the server is shutting down and could not finish this job in time; nothing was charged; send it again",
    1,
  );

/** Rejects with a 503 as soon as `cut` aborts (shutdown), else settles like `work`. */
function withCut<T>(work: Promise<T>, cut: AbortSignal | undefined): Promise<T> {
  if (!cut) return work;
  if (cut.aborted) return Promise.reject(shuttingDown());
  return new Promise<T>((resolve, reject) => {
    const onCut = () => reject(shuttingDown());
    cut.addEventListener("abort", onCut, { once: true });
    work.then(
      (value) => {
        cut.removeEventListener("abort", onCut);
        resolve(value);
      },
      (err: unknown) => {
        cut.removeEventListener("abort", onCut);
        reject(err);
      },
    );
  });
}
