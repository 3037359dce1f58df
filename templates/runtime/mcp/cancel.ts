/**
 * MCP's cancellation (notifications/cancelled) on a stateless /mcp. Each POST gets its own SDK Server, so the
 * SDK cannot match a cancel, which arrives in a POST of its own, with the call it names, and an official client
 * that cancels (an aborted signal, its timeout) keeps the call's connection open: without this, a cancelled
 * call would run on, and be charged for a result its client no longer waits for.
 *
 * The answer to initialize names the client's session (an Mcp-Session-Id it chose at random; nothing is kept
 * for it); clients send it on every later request, as the MCP specification asks. A tools/call is tracked under
 * its session and JSON-RPC id while it runs, and a notifications/cancelled from the same session aborts it,
 * as a closed connection does: the job stops and nothing is charged unless settlement had already begun. A
 * cancel that names no session, another session's call, or a call on another instance changes nothing.
 * Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isObject } from "../ops/json-object.js";
import { messagesOf } from "./messages.js";

const SESSION_HEADER = "mcp-session-id";

/** The session a request names, if it names one of a sane size. */
function sessionOf(req: IncomingMessage): string | undefined {
  const value = req.headers[SESSION_HEADER];
  return typeof value === "string" && value.length > 0 && value.length <= 200 ? value : undefined;
}

export interface Cancels {
  /** Before the SDK answers: names a new session on initialize; aborts the calls a cancel names. */
  receive(req: IncomingMessage & { body?: unknown }, res: ServerResponse): void;
  /** A tools/call of this request: the signal its cancel aborts, and `done` once it is answered. */
  track(req: IncomingMessage, requestId: unknown): { signal?: AbortSignal; done(): void };
}

export function createCancels(): Cancels {
  const running = new Map<string, AbortController>();
  const keyOf = (session: string, requestId: unknown) => `${session}\n${JSON.stringify(requestId)}`;
  return {
    receive(req, res) {
      const session = sessionOf(req);
      for (const message of messagesOf(req.body)) {
        if (!isObject(message)) continue;
        if (message.method === "initialize" && session === undefined)
          res.setHeader("Mcp-Session-Id", randomUUID());
        if (message.method !== "notifications/cancelled" || session === undefined) continue;
        const params = isObject(message.params) ? message.params : {};
        running.get(keyOf(session, params.requestId))?.abort();
      }
    },
    track(req, requestId) {
      const session = sessionOf(req);
      if (session === undefined || requestId === undefined) return { done: () => {} };
      const key = keyOf(session, requestId);
      const controller = new AbortController();
      running.set(key, controller);
      const done = () => {
        if (running.get(key) === controller) running.delete(key);
      };
      return { signal: controller.signal, done };
    },
  };
}
