/**
 * The in-memory payment ledger (the default): reservations, spent authorizations and cached
 * results live in this process. It protects this one process only: behind a load balancer, set
 * REDIS_URL so every instance shares one ledger (ledger/redis/, the `redis` feature).
 * Part of your project: edit freely.
 */
import { randomUUID } from "node:crypto";
import { type FoundResult, type JobResult, LedgerUnavailableError, type Ledger } from "./ledger.js";
import { memoryRecords, SWEEP_EVERY_MS } from "./memory-records.js";

export { memoryRecords } from "./memory-records.js"; // where it was before memory-records.ts

export interface MemoryLedgerOptions {
  /** Most cached results kept (default 1000). */
  maxResults?: number;
  /** Most bytes of cached results kept (default 64 MiB); one result over a quarter of it is not cached. */
  maxResultBytes?: number;
  /** Most bytes of A2A task records kept (default 64 MiB): see memoryRecords. */
  maxTaskRecordBytes?: number;
  /** How its start-up line tells the owner to share a ledger (default "set REDIS_URL"). */
  shareHint?: string;
}

/** `heldUntil`: a claim on a held authorization, which is held again (until then) when its lease ends. */
type AuthEntry =
  | { state: "pending"; token: string; expiresAt: number; heldUntil?: number }
  | { state: "settled"; expiresAt: number }
  | { state: "held"; expiresAt: number };

interface ResultEntry {
  value: FoundResult;
  bytes: number;
  expiresAt: number;
}

/** A lock holder's turn: granted in arrival order, or timed out. */
interface Waiter {
  grant: () => void;
  timer: NodeJS.Timeout;
}

/**
 * Approximate memory a result takes: its strings' UTF-16 length * 2 (how JavaScript holds them;
 * O(1) to compute, unlike encoding them).
 */
function resultBytes({ value: result }: JobResult): number {
  let chars = result.body.length;
  for (const [name, value] of Object.entries(result.headers)) chars += name.length + value.length;
  return chars * 2;
}

export function createMemoryLedger(options: MemoryLedgerOptions = {}): Ledger {
  const maxResults = options.maxResults ?? 1000;
  const maxResultBytes = options.maxResultBytes ?? 64 * 1024 * 1024;

  const auths = new Map<string, AuthEntry>();
  // Held (unsettled) results, one per held authorization: never evicted, they leave with it.
  const heldResults = new Map<string, JobResult>();
  const results = new Map<string, ResultEntry>(); // by authorization; insertion order = least recently used first
  let resultTotalBytes = 0;
  let nextSweep = 0;
  const locks = new Map<string, { waiters: Waiter[] }>(); // present = held

  const dropResult = (key: string): void => {
    const entry = results.get(key);
    if (!entry) return;
    results.delete(key);
    resultTotalBytes -= entry.bytes;
  };

  /** The live entry of `auth`, dropping it if expired (an expired claim on a held one: held again). */
  const authEntry = (auth: string): AuthEntry | undefined => {
    const entry = auths.get(auth);
    const now = Date.now();
    if (!entry || entry.expiresAt > now) return entry;
    if (entry.state === "pending" && entry.heldUntil !== undefined && entry.heldUntil > now) {
      const held: AuthEntry = { state: "held", expiresAt: entry.heldUntil };
      auths.set(auth, held);
      return held;
    }
    auths.delete(auth);
    heldResults.delete(auth);
    return undefined;
  };

  const sweep = (): void => {
    const now = Date.now();
    for (const [auth, entry] of auths) if (entry.expiresAt <= now) authEntry(auth);
    for (const [key, entry] of results) if (entry.expiresAt <= now) dropResult(key);
  };

  const storeResult = (key: string, value: FoundResult, expiresAt: number): void => {
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
      `payment ledger: in memory: protects this process only; with several instances ${options.shareHint ?? "set REDIS_URL"} so they share one`,

    async reserve(auth, leaseMs) {
      if (Date.now() >= nextSweep) {
        sweep();
        nextSweep = Date.now() + SWEEP_EVERY_MS;
      }
      const entry = authEntry(auth);
      if (entry) return { status: entry.state === "pending" ? "in-flight" : entry.state };
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
      if (entry?.state !== "pending" || entry.token !== token) return;
      if (entry.heldUntil === undefined) auths.delete(auth);
      else auths.set(auth, { state: "held", expiresAt: entry.heldUntil });
    },

    async markSettled(auth, ttlMs, result) {
      const expiresAt = Date.now() + ttlMs;
      auths.set(auth, { state: "settled", expiresAt });
      heldResults.delete(auth);
      if (result) storeResult(auth, { ...result, settled: true }, expiresAt);
    },

    async hold(auth, ttlMs, result) {
      auths.set(auth, { state: "held", expiresAt: Date.now() + ttlMs });
      heldResults.set(auth, result);
    },

    async claimHeld(auth, leaseMs) {
      const entry = authEntry(auth);
      if (entry?.state !== "held") {
        if (!entry) return { status: "settled" }; // expired: it can no longer be charged
        return { status: entry.state === "pending" ? "in-flight" : entry.state };
      }
      const token = randomUUID();
      const expiresAt = Math.min(Date.now() + leaseMs, entry.expiresAt);
      auths.set(auth, { state: "pending", token, expiresAt, heldUntil: entry.expiresAt });
      return { status: "reserved", token };
    },

    async returnHeld(auth, token) {
      const entry = auths.get(auth);
      if (entry?.state === "pending" && entry.token === token && entry.heldUntil !== undefined)
        auths.set(auth, { state: "held", expiresAt: entry.heldUntil });
    },

    async getResult(auth) {
      const held = heldResults.get(auth);
      const state = held && authEntry(auth)?.state;
      if (held && (state === "held" || state === "pending")) return { ...held, settled: false };
      const entry = results.get(auth);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        dropResult(auth);
        return undefined;
      }
      results.delete(auth); // move to the most recently used end
      results.set(auth, entry);
      return entry.value;
    },

    async listUnconfirmed(limit) {
      const listed: Array<{ auth: string; jobId: string }> = [];
      for (const [auth, held] of heldResults) {
        if (listed.length >= limit) break;
        if (held.unconfirmed && authEntry(auth)) listed.push({ auth, jobId: held.jobId });
      }
      return listed;
    },

    async forgetUnconfirmed() {}, // a resolved one is no longer held, so no longer listed

    async exclusive(name, holdMs, work) {
      await lock(name, holdMs);
      try {
        return await work();
      } finally {
        unlock(name);
      }
    },

    ...memoryRecords(options.maxTaskRecordBytes),
    ping: async () => true,
    close: async () => {},
  };
}
