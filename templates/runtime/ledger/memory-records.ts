/**
 * The memory ledger's records and claims (memory.ts; ledger.ts putRecord, getRecord, claimRecord),
 * also a2a/task-store.ts's for a ledger of your own without them. Part of your project: edit freely.
 */
import { type Ledger, LedgerUnavailableError } from "./ledger.js";

/** How often expired entries are swept out (they are also dropped when read). */
export const SWEEP_EVERY_MS = 60_000;

/** Most records of each class kept (putRecord): see memoryRecords. */
const MAX_RECORDS = 10_000;
/** Default most bytes of A2A task records kept (MemoryLedgerOptions.maxTaskRecordBytes). */
const MAX_TASK_RECORD_BYTES = 64 * 1024 * 1024;
/**
 * The key class of A2A tasks' records (a2a/task-store.ts): kept apart from every other record, see
 * memoryRecords.
 */
export const TASK_RECORD_PREFIX = "a2a-task:";
/**
 * Most claims kept (claimRecord). A claim is never evicted while it lives (that would let a second
 * payment run a claimed task's job): when this many live, a new claim is refused instead.
 */
const MAX_CLAIMS = 100_000;

type Kept = Map<string, { value: string; expiresAt: number }>;

/** Drops (with `drop`) the expired entries of `kept`, at most once every SWEEP_EVERY_MS. */
function sweeper<E extends { expiresAt: number }>(
  kept: Map<string, E>,
  drop: (key: string) => void = (key) => kept.delete(key),
): () => void {
  let nextSweep = 0;
  return () => {
    const now = Date.now();
    if (now < nextSweep) return;
    nextSweep = now + SWEEP_EVERY_MS;
    for (const [key, entry] of kept) if (entry.expiresAt <= now) drop(key);
  };
}

type Shelved = Map<string, { value: string; expiresAt: number; bytes: number }>;

/** The share of its bounds a full task shelf is brought down to at once (one sort for many puts). */
const TASKS_KEPT_WHEN_FULL = 0.9;

/**
 * Records kept within `maxCount` entries and `maxBytes` (their strings' UTF-16 size, as
 * resultBytes). When over, `order` says which go first, never the one just kept: "oldest" (as
 * kept); or "soonest", the soonest to expire, which would go soonest anyway (an unpaid A2A task,
 * kept for the payment window, before a paid one running, kept until its deadline and more), down
 * to TASKS_KEPT_WHEN_FULL of the bounds.
 */
function recordShelf(maxCount: number, maxBytes: number, order: "oldest" | "soonest") {
  const kept: Shelved = new Map();
  let bytes = 0;
  const drop = (key: string): void => {
    bytes -= kept.get(key)?.bytes ?? 0;
    kept.delete(key);
  };
  /** Drops the expired records, at most once every SWEEP_EVERY_MS (not only when full). */
  const sweep = sweeper(kept, drop);
  const over = (share: number) => kept.size > maxCount * share || bytes > maxBytes * share;
  const makeRoom = (key: string): void => {
    if (!over(1)) return;
    const share = order === "soonest" ? TASKS_KEPT_WHEN_FULL : 1;
    const byExpiry = () => [...kept].sort(([, a], [, b]) => a.expiresAt - b.expiresAt);
    const keys = order === "soonest" ? byExpiry().map(([k]) => k) : kept.keys();
    for (const other of keys) {
      if (!over(share)) return;
      if (other !== key) drop(other); // one record over maxBytes alone: kept (its task lives)
    }
  };
  return {
    put(key: string, value: string, ttlMs: number): void {
      const now = Date.now();
      drop(key);
      sweep();
      const entry = { value, expiresAt: now + ttlMs, bytes: (key.length + value.length) * 2 };
      kept.set(key, entry);
      bytes += entry.bytes;
      makeRoom(key);
    },
    get(key: string): string | undefined {
      const entry = kept.get(key);
      if (entry && entry.expiresAt > Date.now()) return entry.value;
      drop(key);
      return undefined;
    },
  };
}

/**
 * putRecord, getRecord and claimRecord, in memory (also a2a/task-store.ts's, for a ledger of your
 * own without them). A2A tasks' records (TASK_RECORD_PREFIX: one per first turn, unpaid, as large
 * as a request body) are kept apart from the others (settlement notes, jobs/settling.ts; cancel
 * marks, queue/cancel.ts: the money's), each within MAX_RECORDS, the tasks also within
 * `maxTaskRecordBytes`: a flood of first turns evicts tasks only, never a note or a mark. A key
 * class rather than a Ledger method of its own, so a ledger of your own needs no change (Redis
 * keeps both alike, bounded by their TTLs: the README's "A2A").
 */
export function memoryRecords(
  maxTaskRecordBytes = MAX_TASK_RECORD_BYTES,
): Required<Pick<Ledger, "putRecord" | "getRecord" | "claimRecord">> {
  const tasks = recordShelf(MAX_RECORDS, maxTaskRecordBytes, "soonest");
  const others = recordShelf(MAX_RECORDS, Infinity, "oldest");
  const shelf = (key: string) => (key.startsWith(TASK_RECORD_PREFIX) ? tasks : others);
  const claims: Kept = new Map();
  const sweepClaims = sweeper(claims);
  return {
    putRecord: async (key, value, ttlMs) => shelf(key).put(key, value, ttlMs),
    getRecord: async (key) => shelf(key).get(key),
    async claimRecord(key, value, ttlMs) {
      const claim = claims.get(key);
      if (claim && claim.expiresAt > Date.now()) return claim.value;
      if (claims.size >= MAX_CLAIMS) sweepClaims();
      if (claims.size >= MAX_CLAIMS)
        throw new LedgerUnavailableError(
          `payment ledger: in memory: ${MAX_CLAIMS} claims live, none expired: no new one is taken`,
        );
      claims.set(key, { value, expiresAt: Date.now() + ttlMs });
      return undefined;
    },
  };
}
