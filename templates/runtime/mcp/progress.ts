/**
 * Progress notifications for a tool call that asked for them (`params._meta.progressToken`): one
 * when the job starts, then one every MCP_PROGRESS_SECONDS while it runs, so a client that resets
 * its request timeout on progress (the official SDKs' `resetTimeoutOnProgress`) keeps waiting for
 * a long job instead of giving up on it. The endpoint answers such a call as an SSE stream (a JSON
 * answer cannot carry notifications). Part of your project: edit freely.
 */
import type { Logger } from "../types.js";
import { isObject } from "../ops/json-object.js";
import { messagesOf } from "./messages.js";
import type { McpNotification } from "./sdk.js";

/** The progress token a tools/call asked for progress with, if it sent one (a string or an integer). */
export function progressTokenOf(
  meta: Record<string, unknown> | undefined,
): string | number | undefined {
  const token = meta?.progressToken;
  return typeof token === "string" || (typeof token === "number" && Number.isInteger(token))
    ? token
    : undefined;
}

/** Whether a JSON-RPC body (one message or a batch) holds a tools/call that asked for progress. */
export function wantsProgress(body: unknown): boolean {
  return messagesOf(body).some((m) => {
    if (!isObject(m)) return false;
    const { method, params } = m as { method?: unknown; params?: { _meta?: unknown } };
    const meta = typeof params === "object" && params !== null ? params._meta : undefined;
    return (
      method === "tools/call" &&
      typeof meta === "object" &&
      meta !== null &&
      progressTokenOf(meta as Record<string, unknown>) !== undefined
    );
  });
}

/**
 * Sends notifications/progress for `token` now and every `periodSeconds` until stopped (progress:
 * the seconds the job has run; total: the seconds it may run, until its deadline).
 */
export function reportProgress(
  send: (notification: McpNotification) => Promise<void>,
  token: string | number,
  options: { periodSeconds: number; deadline: number; logger: Logger },
): { stop(): void } {
  const started = Date.now();
  const total = Math.max(1, Math.ceil(options.deadline - started / 1000));
  const tick = (): void => {
    const progress = Math.floor((Date.now() - started) / 1000);
    send({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress,
        total,
        message: `job running: ${progress} s of at most ${total} s`,
      },
    }).catch((err: unknown) =>
      options.logger.debug("could not send a progress notification", { error: String(err) }),
    );
  };
  tick();
  const timer = setInterval(tick, options.periodSeconds * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
