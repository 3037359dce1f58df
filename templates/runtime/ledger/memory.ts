/**
 * Replay protection: one payment authorization pays for one job. The pipeline reserves the
 * authorization (from, nonce) before the handler runs, releases it if the job fails before
 * settlement (the payer may retry with the same authorization), and marks it settled afterwards.
 * A completed job's response is kept so that an identical retry (same job_id, same authorization)
 * gets the same result again without a second run or charge.
 *
 * The in-memory store only protects one process. Behind a load balancer, implement ReplayStore on
 * a shared store (e.g. Redis: reserve = SET key "pending" NX EX ttl) and pass it as
 * `createApp(agent, { replayStore })`. Part of your project: edit freely.
 */
import type { VerifiedPayment } from "../types.js";

/** A response as the pipeline returns it (execute.ts's JobResponse). */
export interface CachedJobResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What reserve() found: the key is now ours, another request holds it, or it was already spent. */
export type Reservation = "reserved" | "in-flight" | "settled";

export interface ReplayStore {
  /** Atomically claims `key` for `ttlSeconds`, unless it is already pending or settled. */
  reserve(key: string, ttlSeconds: number): Promise<Reservation>;
  /** Forgets a pending reservation (never a settled one). */
  release(key: string): Promise<void>;
  /** Marks `key` as spent for `ttlSeconds`; reserve() then answers "settled". */
  markSettled(key: string, ttlSeconds: number): Promise<void>;
  getResult(key: string): Promise<CachedJobResult | undefined>;
  putResult(key: string, result: CachedJobResult, ttlSeconds: number): Promise<void>;
}

/** `chainId:asset:from:nonce`, lowercased: the identity of an EIP-3009 authorization. */
export function authorizationKey(payment: VerifiedPayment): string {
  const { chainId, asset, authorization: a } = payment;
  return `${chainId}:${asset}:${a.from}:${a.nonce}`.toLowerCase();
}

/** The key of a job's cached result: the authorization plus the caller's job_id. */
export function resultKey(payment: VerifiedPayment, jobId: string): string {
  return `${authorizationKey(payment)}:${jobId}`;
}

/**
 * Seconds to remember an authorization: until its validBefore (after that the token contract
 * refuses it anyway, so forgetting it is safe), and at least 1.
 */
export function authorizationTtl(payment: VerifiedPayment, nowMs = Date.now()): number {
  const left = Number(payment.authorization.validBefore) - Math.floor(nowMs / 1000);
  return Math.max(1, left);
}

interface Entry<T> {
  value: T;
  expiresAt: number;
}

export function createMemoryReplayStore(options: { maxResults?: number } = {}): ReplayStore {
  const maxResults = options.maxResults ?? 1000;
  const reservations = new Map<string, Entry<"pending" | "settled">>();
  const results = new Map<string, Entry<CachedJobResult>>(); // insertion order = LRU order

  const live = <T>(map: Map<string, Entry<T>>, key: string): Entry<T> | undefined => {
    const entry = map.get(key);
    if (entry === undefined || entry.expiresAt > Date.now()) return entry;
    map.delete(key);
    return undefined;
  };
  const expiry = (ttlSeconds: number): number => Date.now() + ttlSeconds * 1000;
  // Expired reservations are dropped on access and by this sweep, so the map cannot grow forever.
  const sweep = (): void => {
    for (const [key, entry] of reservations)
      if (entry.expiresAt <= Date.now()) reservations.delete(key);
  };
  let nextSweep = 0;

  return {
    async reserve(key, ttlSeconds) {
      if (Date.now() >= nextSweep) {
        sweep();
        nextSweep = Date.now() + 60_000;
      }
      const existing = live(reservations, key);
      if (existing) return existing.value === "settled" ? "settled" : "in-flight";
      reservations.set(key, { value: "pending", expiresAt: expiry(ttlSeconds) });
      return "reserved";
    },
    async release(key) {
      if (reservations.get(key)?.value === "pending") reservations.delete(key);
    },
    async markSettled(key, ttlSeconds) {
      reservations.set(key, { value: "settled", expiresAt: expiry(ttlSeconds) });
    },
    async getResult(key) {
      const entry = live(results, key);
      if (!entry) return undefined;
      results.delete(key); // move to the most recently used end
      results.set(key, entry);
      return entry.value;
    },
    async putResult(key, result, ttlSeconds) {
      results.delete(key);
      results.set(key, { value: result, expiresAt: expiry(ttlSeconds) });
      while (results.size > maxResults) results.delete(results.keys().next().value!);
    },
  };
}
