/**
 * Graceful shutdown's bookkeeping: which jobs are in flight, and whether the server is stopping.
 * On SIGTERM the server stops taking jobs (503 with Retry-After and `Connection: close`), waits up
 * to SHUTDOWN_TIMEOUT_SECONDS for the jobs in flight, then cuts the ones still running their
 * handler (503: nothing charged, their authorizations freed). A job already settling is never cut:
 * it is settled and answered, because a charge must reach the caller with its result.
 * Part of your project: edit freely.
 */
import { setMaxListeners } from "node:events";

export interface Drain {
  /** True once shutdown began: new jobs are refused. */
  readonly stopping: boolean;
  /** Aborts when the drain timeout passed: jobs that have not begun settling give up (503). */
  readonly cut: AbortSignal;
  /** Counts a job in flight; call the returned function when it has been answered. */
  enter(): () => void;
  /** Stops taking jobs, waits up to `timeoutMs` for those in flight, cuts the rest, and resolves when none is left. */
  drain(timeoutMs: number): Promise<{ cut: boolean }>;
}

export function createDrain(): Drain {
  let stopping = false;
  let inFlight = 0;
  let whenIdle: (() => void) | undefined;
  const cutter = new AbortController();
  // Every job in its handler listens to `cut` (and stops listening when it ends): no leak warning.
  setMaxListeners(0, cutter.signal);
  const idle = (): Promise<void> =>
    inFlight === 0 ? Promise.resolve() : new Promise((resolve) => (whenIdle = resolve));

  return {
    get stopping() {
      return stopping;
    },
    cut: cutter.signal,
    enter() {
      inFlight++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        inFlight--;
        if (inFlight === 0) whenIdle?.();
      };
    },
    async drain(timeoutMs) {
      stopping = true;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      const first = await Promise.race([idle().then(() => "idle" as const), timedOut]);
      clearTimeout(timer);
      if (first === "idle") return { cut: false };
      cutter.abort(new Error("shutting down"));
      await idle(); // settling jobs finish (bounded by the settlement timeout); the rest answer 503 now
      return { cut: true };
    },
  };
}
