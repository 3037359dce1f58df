import { constants } from "node:os";

/**
 * Until the returned function is called: on Ctrl-C (SIGINT) or SIGTERM, run `handler` (once). Removing the
 * listeners restores Node's default, so a second Ctrl-C while the handler's work finishes still kills the process.
 */
export function onStopSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  const once = (signal: NodeJS.Signals) => {
    off();
    handler(signal);
  };
  const off = () => {
    process.off("SIGINT", once).off("SIGTERM", once);
  };
  process.on("SIGINT", once).on("SIGTERM", once);
  return off;
}

/**
 * Ctrl-C (SIGINT) or SIGTERM as an AbortSignal, until `off()`: aborted with the signal's name as its reason,
 * for work that checks where it may stop (and hands the signal on to what it starts, such as an install).
 */
export function watchStopSignals(): { signal: AbortSignal; off: () => void } {
  const controller = new AbortController();
  const off = onStopSignals((signal) => controller.abort(signal));
  return { signal: controller.signal, off };
}

/** The exit code of a run stopped by `signal`, as a shell reports it (128 + its number: 130 for Ctrl-C). */
export function stoppedExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 2);
}
