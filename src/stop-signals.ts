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
