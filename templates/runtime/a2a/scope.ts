/**
 * What the A2A executor (executor.ts) needs to know about the HTTP request it serves, which the
 * SDK's request handler does not pass along: whether its caller is still connected (a paid job is
 * settled only then, as on POST /execute and /mcp), the request's logger and the endpoint's URL.
 * route.ts runs the SDK inside `runInScope`; the executor, called from that request's promise
 * chain, reads it with `currentScope`. Part of your project: edit freely.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../types.js";

export interface A2aScope {
  /** Aborted once the caller's connection closed before its answer was written. */
  callerGone: AbortSignal;
  logger: Logger;
  /** Absolute URL of POST /a2a for this request (the resource its offers are for). */
  resourceUrl(): string;
}

const storage = new AsyncLocalStorage<A2aScope>();

export const runInScope = <T,>(scope: A2aScope, work: () => T): T => storage.run(scope, work);

/** The scope of the request being served (undefined outside one: e.g. a test calling the executor). */
export const currentScope = (): A2aScope | undefined => storage.getStore();
