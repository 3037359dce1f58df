/**
 * Where the payer's guard (guard.ts) lives in create-agent's own folder: one source, compiled into the CLI
 * for `call` and copied verbatim into every generated client, so create-agent ships it as a file too.
 */
export const CLIENT_GUARD_FILE = "src/caller/guard.ts";
