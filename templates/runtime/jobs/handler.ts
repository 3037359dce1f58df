/**
 * Steps 4, 5, 7 and 8: the deadline on arrival, then the handler under its deadline, with whatever
 * it throws mapped to the error map. A handler that ignores its AbortSignal keeps running after its
 * job was answered (408): it is reported as abandoned, and `stopped` tells when it really ends, so
 * a paid job's authorization stays reserved until then (never two handlers on one payment).
 * Part of your project: edit freely.
 */
import { DeadlineError, fromHandlerError, UnavailableError } from "../errors.js";
import type { Metrics } from "../ops/metrics.js";
import type { Capability, HandlerContext, Logger, PaidPayment } from "../types.js";
import { deadlinePassed, type DeadlineRun, onDeadline } from "./deadline.js";
import type { JobRequest } from "./request.js";

export interface HandlerRunOptions {
  logger: Logger;
  metrics: Metrics;
  /** The verified payment (absent in dev mode). */
  payment?: PaidPayment;
  /** Aborts when a graceful shutdown gives up waiting: the job answers 503 at once. */
  cut?: AbortSignal;
  /** Aborts when the caller cancels the job (A2A CancelTask): ctx.signal aborts, nothing is charged. */
  cancel?: AbortSignal;
}

/** Step 4: a job whose deadline already passed is refused before anything runs. */
export function checkArrival(job: JobRequest): void {
  if (deadlinePassed(job.deadline))
    throw new DeadlineError(
      `deadline ${job.deadline} has already passed (now ${Math.floor(Date.now() / 1000)}); the handler was not run`,
    );
}

/**
 * A handler's ctx (HandlerContext). A class, so `signal` is a getter on its prototype: the signal's
 * AbortController (costly, and most handlers never look at it) is made on first read, already
 * aborted if that is after the deadline. An object literal with a getter would cost every job
 * kilobytes of garbage.
 */
class JobContext implements HandlerContext {
  declare payment?: PaidPayment;
  #controller: AbortController | undefined;
  #abortedWith: DeadlineError | UnavailableError | undefined;

  constructor(
    readonly jobId: string,
    readonly capability: string,
    readonly deadline: number,
    readonly logger: Logger,
  ) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortedWith) this.#controller.abort(this.#abortedWith);
    }
    return this.#controller.signal;
  }

  /** Aborts ctx.signal with `err`, or with the first error it was aborted with; returns that one. */
  static abort(
    ctx: JobContext,
    err: DeadlineError | UnavailableError,
  ): DeadlineError | UnavailableError {
    ctx.#abortedWith ??= err;
    ctx.#controller?.abort(ctx.#abortedWith);
    return ctx.#abortedWith;
  }
}

/** A started handler: its result, when it really stops, and whether it still runs. */
export interface HandlerRun extends DeadlineRun<unknown> {
  isRunning(): boolean;
}

/**
 * Step 5: starts the handler; `result` rejects with an AgentError (errors.ts) on any failure. The
 * deadline works as startWithDeadline's (deadline.ts): `result` rejects with a DeadlineError at the
 * deadline whether or not the handler stops, and when it returns after the deadline; ctx.signal
 * aborts with that error. Written out here, with one timer and a few promises per job, because every
 * job pays for it.
 */
export function startHandler(
  job: JobRequest,
  capability: Capability,
  input: unknown,
  options: HandlerRunOptions,
): HandlerRun {
  const { logger, metrics } = options;
  const { deadline } = job;
  const finished = metrics.handlerStarted(capability.name);
  let running = true;

  const ctx = new JobContext(job.jobId, capability.name, deadline, logger);
  if (options.payment) ctx.payment = options.payment;
  const missed = (): DeadlineError | UnavailableError =>
    JobContext.abort(
      ctx,
      new DeadlineError(`the handler did not finish before the deadline (${deadline})`),
    );

  let work: Promise<unknown>;
  try {
    work = Promise.resolve(capability.handler(input, ctx));
  } catch (err) {
    work = Promise.reject(err); // a handler that throws synchronously
  }

  let resolve!: (value: unknown) => void;
  let reject!: (err: unknown) => void;
  const result = new Promise<unknown>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  let answered = false;
  let cancel = (): void => undefined; // the deadline timer, set below
  let unwatch = (): void => undefined; // the shutdown's cut and the caller's cancel, set below
  const answer = (): boolean => {
    if (answered) return false;
    answered = true;
    cancel();
    unwatch();
    return true;
  };
  /** The job failed: its error as the error map says; a handler still running is abandoned. */
  const fail = (err: unknown): void => {
    if (!answer()) return;
    if (running) {
      const ended = metrics.handlerAbandoned(capability.name);
      logger.warn(
        "handler still running after its job was answered; it should stop when ctx.signal aborts",
      );
      void stopped.then(() => {
        ended();
        logger.info("abandoned handler stopped");
      });
    }
    reject(err instanceof UnavailableError ? err : fromHandlerError(err, logger));
  };

  // Both callbacks are always attached, so work abandoned at the deadline that rejects later is
  // handled here (a no-op: the job was answered) and never "unhandled". `stopped` never rejects.
  const stopped = work.then(
    (value) => {
      running = false; // before anything downstream sees the result
      finished();
      // A handler that blocked the timer (CPU-bound) returned too late: spec 4.5, 408.
      if (deadlinePassed(deadline)) fail(missed());
      else if (answer()) resolve(value);
    },
    (err: unknown) => {
      running = false;
      finished();
      fail(err);
    },
  );
  cancel = onDeadline(deadline * 1000, () => fail(missed()));
  unwatch = onStops(options, ctx, fail);
  return { result, stopped, isRunning: () => running };
}

/**
 * The job's other ends: a shutdown that gives up waiting answers it at once (503), the handler
 * still running; a caller's cancel answers it and aborts ctx.signal. Returns what stops watching.
 */
function onStops(
  { cut, cancel }: HandlerRunOptions,
  ctx: JobContext,
  fail: (err: unknown) => void,
): () => void {
  const onCut = (): void => fail(shuttingDown());
  const onCancel = (): void =>
    fail(
      JobContext.abort(
        ctx,
        new UnavailableError("the caller cancelled the job; nothing was charged", 0),
      ),
    );
  for (const [signal, stop] of [
    [cut, onCut],
    [cancel, onCancel],
  ] as const) {
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
  }
  return () => {
    cut?.removeEventListener("abort", onCut);
    cancel?.removeEventListener("abort", onCancel);
  };
}

/** The 503 of a job cut by a graceful shutdown before it began settling. */
export const shuttingDown = (): UnavailableError =>
  new UnavailableError(
    "the server is shutting down and could not finish this job in time; nothing was charged; send it again",
    1,
  );
