/**
 * Deadline enforcement: run a handler so that the job fails with a DeadlineError at the deadline,
 * whether or not the handler notices. Part of your project: edit freely.
 */
import { DeadlineError } from "../errors.js";

/** setTimeout silently fires after 1 ms for delays above this (2^31-1 ms, about 24.8 days). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** True if the deadline (Unix seconds) is now or in the past. */
export function deadlinePassed(deadlineSeconds: number, nowMs: number = Date.now()): boolean {
  return deadlineSeconds * 1000 <= nowMs;
}

/**
 * Calls `fire` once the wall clock reaches `atMs`. Long waits are split into several timers so a
 * far deadline never fires early; every wake-up re-checks the clock. Returns a cancel function.
 */
export function onDeadline(atMs: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const check = (): void => {
    const remaining = atMs - Date.now();
    if (remaining <= 0) {
      timer = undefined;
      fire();
      return;
    }
    timer = setTimeout(check, Math.min(remaining, MAX_TIMER_DELAY_MS));
  };
  check();
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
}

/** A handler started under a deadline. */
export interface DeadlineRun<T> {
  /** The handler's result, or a DeadlineError at the deadline (or when it returned too late). */
  result: Promise<T>;
  /**
   * Resolves when the handler has really stopped, which may be long after `result` rejected with a
   * DeadlineError if it ignores its signal. Never rejects.
   */
  stopped: Promise<void>;
}

/**
 * Starts `work` with an AbortSignal that aborts at the deadline (reason: a DeadlineError).
 * `result` rejects with that DeadlineError at the deadline even if the work ignores the signal and
 * keeps running, and also when the work returns after the deadline (a CPU-bound handler blocks
 * the timer, so the clock is checked again when it returns: spec 4.5, not returned by the
 * deadline means 408).
 */
export function startWithDeadline<T>(
  deadlineSeconds: number,
  work: (signal: AbortSignal) => Promise<T>,
): DeadlineRun<T> {
  const controller = new AbortController();
  const missed = () =>
    new DeadlineError(`the handler did not finish before the deadline (${deadlineSeconds})`);
  let running: Promise<T>;
  try {
    running = Promise.resolve(work(controller.signal));
  } catch (err) {
    running = Promise.reject(err); // a handler that throws synchronously
  }
  const stopped = running.then(
    () => undefined,
    () => undefined,
  );
  const result = new Promise<T>((resolve, reject) => {
    const cancel = onDeadline(deadlineSeconds * 1000, () => {
      const err = missed();
      controller.abort(err);
      reject(err);
    });
    // Both callbacks are always attached, so when the work is abandoned at the deadline and rejects
    // later, that rejection is handled here (a no-op: the promise has settled) and never "unhandled".
    running.then(
      (value) => {
        cancel();
        if (!deadlinePassed(deadlineSeconds)) return resolve(value);
        const err = missed();
        controller.abort(err);
        reject(err);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
  return { result, stopped };
}

/** startWithDeadline's result alone, for callers that do not care when abandoned work stops. */
export function runWithDeadline<T>(
  deadlineSeconds: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return startWithDeadline(deadlineSeconds, work).result;
}
