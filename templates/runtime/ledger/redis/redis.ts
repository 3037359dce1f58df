/**
 * The shared payment ledger on Redis (chosen by REDIS_URL; the `redis` feature, loaded by
 * ledger/select.ts through features.ts): every instance using the same Redis
 * and key prefix sees the same reservations, spent authorizations, cached results and locks.
 * Every change is one atomic command or Lua script, so two instances can never both reserve one
 * authorization. Works with Redis Cluster: all keys of one authorization share a hash slot.
 *
 * Keep Redis persistent (appendonly yes): a Redis that restarts empty forgets which authorizations
 * are spent, so a retry could run its job again (the chain still refuses a second charge).
 * Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../../types.js";
import { connect, passwordOf, redactRedisUrl } from "./redis-connect.js";
import { redisRecords } from "./redis-records.js";
import { SCRIPTS } from "./redis-scripts.js";
import {
  type FoundResult,
  type JobResult,
  LedgerUnavailableError,
  type Ledger,
  type Reservation,
  type StoredResult,
} from "../ledger.js";

/**
 * What the ledger uses of an ioredis client (a `Redis` or a `Cluster`: both fit). Named here rather than
 * imported, so ioredis's ~900 KB of declarations stay out of the project's typecheck; a repo test checks
 * that ioredis's real classes still fit it (test/runtime/redis-types.test.ts).
 */
export interface RedisClient {
  readonly status: string;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: "PX", milliseconds: number, nx: "NX"): Promise<"OK" | null>;
  set(key: string, value: string, px: "PX", milliseconds: number): Promise<"OK">;
  ping(): Promise<string>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
  once(event: string, listener: (...args: any[]) => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
}

export interface RedisLedgerOptions {
  /** redis:// or rediss:// URL; the ledger makes (and closes) its own client. */
  url?: string;
  /** Or a client you made and own, an ioredis `Redis` or `Cluster` (close() leaves it open). */
  client?: RedisClient;
  /** Every key starts with it, e.g. "my-agent:". */
  keyPrefix: string;
  /** Longest wait for one Redis answer (default 2000 ms). */
  commandTimeoutMs?: number;
  /** Where connection loss and recovery are reported (once per outage). */
  logger?: Logger;
}

type ScriptName = keyof typeof SCRIPTS;
type Scripted = Record<ScriptName, (...args: (string | number)[]) => Promise<unknown>>;

/** A PX argument: a whole number of milliseconds, at least 1. */
const ms = (value: number): number => Math.max(1, Math.ceil(value));

const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

/** True when `value` is an object whose named fields have the given `typeof`s. */
function hasFields(
  value: unknown,
  types: Record<string, string>,
): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(types).every(([field, type]) => typeof record[field] === type);
}

/** A result as stored: the answer, the identity of its request and payment, settled or held. */
function isFoundResult(value: unknown): value is FoundResult {
  const fields = { jobId: "string", request: "string", payment: "string", settled: "boolean" };
  return hasFields(value, fields) && isStoredResult(value.value);
}

function isStoredResult(value: unknown): value is StoredResult {
  const fields = { status: "number", body: "string", headers: "object" };
  return hasFields(value, fields) && value.headers !== null;
}

export function createRedisLedger(options: RedisLedgerOptions): Ledger {
  const { keyPrefix, logger } = options;
  const commandTimeoutMs = options.commandTimeoutMs ?? 2000;
  const ownsClient = options.client === undefined;
  if (ownsClient && options.url === undefined) {
    throw new Error("createRedisLedger: pass a Redis url or a client");
  }
  const where = options.url
    ? `Redis at ${redactRedisUrl(options.url)}`
    : "Redis (client supplied by the application)";
  const password = options.url ? passwordOf(options.url) : undefined;

  /** An error message with the password (if it ever shows up) blanked out. */
  const clean = (message: string): string =>
    password ? message.split(password).join("***") : message;

  const client = options.client ?? connect(options.url!, commandTimeoutMs);
  for (const [name, definition] of Object.entries(SCRIPTS)) client.defineCommand(name, definition);
  const scripts = client as unknown as Scripted;

  // Until the first connection attempt ends, commands wait for it (up to the command timeout)
  // instead of failing at once: requests that arrive right after startup are served.
  let firstConnect: Promise<void> | undefined;
  if (client.status === "wait" || client.status === "connecting" || client.status === "connect") {
    firstConnect = new Promise<void>((resolve) => {
      const done = () => {
        for (const event of ["ready", "error", "close", "end"]) client.off(event, done);
        firstConnect = undefined;
        resolve();
      };
      for (const event of ["ready", "error", "close", "end"]) client.once(event, done);
    });
  }

  let closing = false;
  if (ownsClient && logger) {
    // One warning per outage (ioredis reports every failed reconnection), one line on recovery.
    let down = false;
    const lost = (reason: string) => {
      if (down || closing) return;
      down = true;
      const message = `payment ledger: ${where} is unreachable; paid jobs are refused until it is back`;
      logger.warn(message, { error: clean(reason) });
    };
    client.on("error", (err: Error) => lost(err.message));
    client.on("close", () => lost("connection closed"));
    client.on("ready", () => {
      if (!down) return;
      down = false;
      logger.info(`payment ledger: ${where} is reachable again`);
    });
  } else if (ownsClient) {
    client.on("error", () => {}); // failures surface as LedgerUnavailableError on each call
  }

  /** Runs one Redis command; any failure becomes a LedgerUnavailableError. */
  async function command<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      if (firstConnect) await Promise.race([firstConnect, sleep(commandTimeoutMs)]);
      return await run();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const reason =
        client.status !== "ready"
          ? "not connected to Redis"
          : /timed out/i.test(message)
            ? `no answer within ${commandTimeoutMs} ms`
            : clean(message);
      throw new LedgerUnavailableError(`payment ledger: Redis ${what} failed: ${reason}`, {
        cause: err,
      });
    }
  }

  const stateKey = (auth: string) => `${keyPrefix}{${auth}}:state`;
  const resultKey = (auth: string) => `${keyPrefix}{${auth}}:result`;
  const lockKey = (name: string) => `${keyPrefix}lock:{${name}}`;
  const unconfirmedKey = `${keyPrefix}unconfirmed`;

  return {
    describe: () =>
      `payment ledger: ${where}, key prefix ${JSON.stringify(keyPrefix)}: shared by every instance using it`,

    async reserve(auth, leaseMs) {
      const token = randomUUID();
      const found = await command("reserve", () =>
        scripts.ledgerReserve(stateKey(auth), token, ms(leaseMs), Date.now()),
      );
      return reservation(found, token);
    },

    async renew(auth, token, leaseMs) {
      const renewed = await command("renew", () =>
        scripts.ledgerRenew(stateKey(auth), token, ms(leaseMs)),
      );
      return renewed === 1;
    },

    async release(auth, token) {
      await command("release", () => scripts.ledgerRelease(stateKey(auth), token));
    },

    async markSettled(auth, ttlMs, result) {
      await command("mark settled", () =>
        result
          ? scripts.ledgerSettle(
              2,
              stateKey(auth),
              resultKey(auth),
              ms(ttlMs),
              JSON.stringify({ ...result, settled: true } satisfies FoundResult),
            )
          : scripts.ledgerSettle(1, stateKey(auth), ms(ttlMs)),
      );
    },

    async hold(auth, ttlMs, result: JobResult) {
      const stored = JSON.stringify({ ...result, settled: false } satisfies FoundResult);
      await command("hold", () =>
        scripts.ledgerHold(stateKey(auth), resultKey(auth), ms(ttlMs), stored),
      );
      if (result.unconfirmed)
        await command("list an unconfirmed settlement", () =>
          scripts.ledgerAddUnconfirmed(
            unconfirmedKey,
            Date.now(),
            JSON.stringify([auth, result.jobId]),
          ),
        );
    },

    async claimHeld(auth, leaseMs) {
      const token = randomUUID();
      const found = await command("claim a held result", () =>
        scripts.ledgerClaimHeld(stateKey(auth), token, Date.now(), ms(leaseMs)),
      );
      return reservation(found, token);
    },

    async returnHeld(auth, token) {
      await command("return a held result", () => scripts.ledgerReturnHeld(stateKey(auth), token));
    },

    async getResult(auth) {
      const stored = await command("get result", () => client.get(resultKey(auth)));
      if (stored === null) return undefined;
      try {
        const value: unknown = JSON.parse(stored);
        return isFoundResult(value) ? value : undefined;
      } catch {
        return undefined; // not ours or damaged: treat as not cached
      }
    },

    async listUnconfirmed(limit) {
      const members = (await command("list unconfirmed settlements", () =>
        scripts.ledgerListUnconfirmed(unconfirmedKey, limit),
      )) as string[];
      return members.flatMap((member) => {
        try {
          const [auth, jobId] = JSON.parse(member) as unknown[];
          return typeof auth === "string" && typeof jobId === "string" ? [{ auth, jobId }] : [];
        } catch {
          return [];
        }
      });
    },

    async forgetUnconfirmed(auth, jobId) {
      await command("forget an unconfirmed settlement", () =>
        scripts.ledgerForgetUnconfirmed(unconfirmedKey, JSON.stringify([auth, jobId])),
      );
    },

    async exclusive(name, holdMs, work) {
      const key = lockKey(name);
      const token = randomUUID();
      const deadline = Date.now() + holdMs;
      for (let delay = 10; ; delay = Math.min(delay * 2, 50)) {
        const taken = await command(`lock "${name}"`, () =>
          client.set(key, token, "PX", ms(holdMs), "NX"),
        );
        if (taken === "OK") break;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new LedgerUnavailableError(
            `payment ledger: timed out after ${holdMs} ms waiting for the lock "${name}"`,
          );
        }
        await sleep(Math.min(delay, left));
      }
      try {
        return await work();
      } finally {
        // If this fails the lock still frees itself holdMs after it was taken.
        await command(`unlock "${name}"`, () => scripts.ledgerUnlock(key, token)).catch(
          (err: Error) => logger?.warn(err.message),
        );
      }
    },

    ...redisRecords(client, command, (...a) => scripts.ledgerClaimRecord(...a), keyPrefix),

    async ping() {
      try {
        return (await command("ping", () => client.ping())) === "PONG";
      } catch {
        return false;
      }
    },

    async close() {
      if (!ownsClient) return;
      closing = true;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

/** A script's answer as a Reservation. */
function reservation(found: unknown, token: string): Reservation {
  if (found === "reserved") return { status: "reserved", token };
  if (found === "settled" || found === "held") return { status: found };
  return { status: "in-flight" };
}
