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

/**
 * Runs `work` with an AbortSignal that aborts at the deadline (reason: a DeadlineError).
 * Settles with the work's result, or rejects with that DeadlineError at the deadline even if the
 * work ignores the signal and keeps running.
 */
export function runWithDeadline<T>(
  deadlineSeconds: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const cancel = onDeadline(deadlineSeconds * 1000, () => {
      const err = new DeadlineError(
        `the handler did not finish before the deadline (${deadlineSeconds})`,
      );
      controller.abort(err);
      reject(err);
    });
    let running: Promise<T>;
    try {
      running = Promise.resolve(work(controller.signal));
    } catch (err) {
      running = Promise.reject(err); // a handler that throws synchronously
    }
    // Both callbacks are always attached, so when the work is abandoned at the deadline and rejects
    // later, that rejection is handled here (a no-op: the promise has settled) and never "unhandled".
    running.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
}
