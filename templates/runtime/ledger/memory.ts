/**
 * The in-memory payment ledger (the default): reservations, spent authorizations and cached
 * results live in this process. It protects this one process only: behind a load balancer, set
 * REDIS_URL so every instance shares one ledger (redis.ts). Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import { LedgerUnavailableError, type Ledger, type StoredResult } from "./ledger.js";

export interface MemoryLedgerOptions {
  /** Most cached results kept (default 1000). */
  maxResults?: number;
  /** Most bytes of cached results kept (default 64 MiB); one result over a quarter of it is not cached. */
  maxResultBytes?: number;
}

type AuthEntry =
  { state: "pending"; token: string; expiresAt: number } | { state: "settled"; expiresAt: number };

interface ResultEntry {
  value: StoredResult;
  bytes: number;
  expiresAt: number;
}

/** A lock holder's turn: granted in arrival order, or timed out. */
interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

/** How often reserve() sweeps out expired entries (they are also dropped when read). */
const SWEEP_EVERY_MS = 60_000;

/**
 * Approximate memory a result takes: its strings' UTF-16 length * 2 (how JavaScript holds them;
 * O(1) to compute, unlike encoding them).
 */
function resultBytes(result: StoredResult): number {
  let chars = result.body.length;
  for (const [name, value] of Object.entries(result.headers)) chars += name.length + value.length;
  return chars * 2;
}

export function createMemoryLedger(options: MemoryLedgerOptions = {}): Ledger {
  const maxResults = options.maxResults ?? 1000;
  const maxResultBytes = options.maxResultBytes ?? 64 * 1024 * 1024;

  const auths = new Map<string, AuthEntry>();
  const results = new Map<string, ResultEntry>(); // insertion order = least recently used first
  let resultTotalBytes = 0;
  let nextSweep = 0;
  const locks = new Map<string, { waiters: Waiter[] }>(); // present = held

  const resultKey = (auth: string, jobId: string): string => JSON.stringify([auth, jobId]);

  const dropResult = (key: string): void => {
    const entry = results.get(key);
    if (!entry) return;
    results.delete(key);
    resultTotalBytes -= entry.bytes;
  };

  /** The live entry of `auth`, dropping it if expired. */
  const authEntry = (auth: string): AuthEntry | undefined => {
    const entry = auths.get(auth);
    if (entry && entry.expiresAt <= Date.now()) {
      auths.delete(auth);
      return undefined;
    }
    return entry;
  };

  const sweep = (): void => {
    const now = Date.now();
    for (const [auth, entry] of auths) if (entry.expiresAt <= now) auths.delete(auth);
    for (const [key, entry] of results) if (entry.expiresAt <= now) dropResult(key);
  };

  const storeResult = (key: string, value: StoredResult, expiresAt: number): void => {
    dropResult(key); // a new result for the same key replaces the old one
    const bytes = resultBytes(value);
    if (bytes > maxResultBytes / 4) return; // too big to cache: the retry gets "already settled"
    results.set(key, { value, bytes, expiresAt });
    resultTotalBytes += bytes;
    while (results.size > maxResults || resultTotalBytes > maxResultBytes) {
      dropResult(results.keys().next().value!);
    }
  };

  /** Releases the lock `name`: the next waiter in line gets it, or it is free. */
  const unlock = (name: string): void => {
    const lock = locks.get(name);
    const next = lock?.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      next.grant();
    } else {
      locks.delete(name);
    }
  };

  /** Resolves once we hold the lock `name`; rejects after `holdMs` of waiting. */
  const lock = (name: string, holdMs: number): Promise<void> => {
    const held = locks.get(name);
    if (!held) {
      locks.set(name, { waiters: [] });
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        timer: setTimeout(() => {
          held.waiters.splice(held.waiters.indexOf(waiter), 1);
          reject(
            new LedgerUnavailableError(
              `payment ledger: timed out after ${holdMs} ms waiting for the lock "${name}"`,
            ),
          );
        }, holdMs),
      };
      held.waiters.push(waiter);
    });
  };

  return {
    describe: () =>
      "payment ledger: in memory: protects this process only; with several instances set REDIS_URL so they share one",

    async reserve(auth, leaseMs) {
      if (Date.now() >= nextSweep) {
        sweep();
        nextSweep = Date.now() + SWEEP_EVERY_MS;
      }
      const entry = authEntry(auth);
      if (entry) return { status: entry.state === "settled" ? "settled" : "in-flight" };
      const token = randomUUID();
      auths.set(auth, { state: "pending", token, expiresAt: Date.now() + leaseMs });
      return { status: "reserved", token };
    },

    async renew(auth, token, leaseMs) {
      const entry = authEntry(auth);
      if (entry?.state !== "pending" || entry.token !== token) return false;
      entry.expiresAt = Date.now() + leaseMs;
      return true;
    },

    async release(auth, token) {
      const entry = auths.get(auth);
      if (entry?.state === "pending" && entry.token === token) auths.delete(auth);
    },

    async markSettled(auth, ttlMs, result) {
      const expiresAt = Date.now() + ttlMs;
      auths.set(auth, { state: "settled", expiresAt });
      if (result) storeResult(resultKey(auth, result.jobId), result.value, expiresAt);
    },

    async getResult(auth, jobId) {
      const key = resultKey(auth, jobId);
      const entry = results.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        dropResult(key);
        return undefined;
      }
      results.delete(key); // move to the most recently used end
      results.set(key, entry);
      return entry.value;
    },

    async exclusive(name, holdMs, work) {
      await lock(name, holdMs);
      try {
        return await work();
      } finally {
        unlock(name);
      }
    },

    ping: async () => true,
    close: async () => {},
  };
}
