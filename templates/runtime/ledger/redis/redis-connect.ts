/**
 * The Redis ledger's connection (redis.ts): the ioredis client it makes from REDIS_URL, and the
 * URL's credentials kept out of every message. Part of your project: edit freely.
 */
import { createRequire } from "node:module";
import { redactUrl } from "../../ops/redact.js";
import type { RedisClient } from "./redis.js";

/** The ioredis constructor, as connect() calls it. */
type RedisConstructor = new (url: string, options: Record<string, unknown>) => RedisClient;

/** The URL without user, password or query (which may also hold a password). */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `redis://${url}`);
    return redactUrl(parsed.href);
  } catch {
    return "(unparsable URL)";
  }
}

export function passwordOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(parsed.password) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A client that never blocks startup (connects in the background), fails commands at once while
 * disconnected and within `commandTimeoutMs` otherwise, and reconnects forever.
 */
export function connect(url: string, commandTimeoutMs: number): RedisClient {
  if (!URL.canParse(url) || !/^rediss?:$/.test(new URL(url).protocol)) {
    // The URL itself is not repeated: it may hold a password.
    throw new Error("payment ledger: REDIS_URL is not a redis:// or rediss:// URL");
  }
  // ioredis through a require() TypeScript does not follow (see RedisClient); loaded only here, when
  // REDIS_URL is set (ledger/select.ts imports this module only then).
  const { Redis } = createRequire(import.meta.url)("ioredis") as { Redis: RedisConstructor };
  return new Redis(url, {
    connectionName: "payment-ledger",
    // RESP2: understood by every Redis version and proxy; the ledger needs nothing newer.
    protocol: 2,
    // Fail fast while disconnected: no queueing until Redis is back (a paid job gets a 503 now,
    // not a hang), and a command lost with its connection is failed, never silently resent.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Never hang: bound each command, the connection attempt, and a connection that stops answering.
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 5000),
    socketTimeout: commandTimeoutMs + 1000,
    // Reconnect forever, backing off to one attempt every 2 s, so service resumes by itself.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
  });
}
