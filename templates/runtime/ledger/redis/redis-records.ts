/**
 * The Redis ledger's records and claims (redis.ts; ledger.ts putRecord, getRecord, claimRecord):
 * values kept under a key with a TTL, shared by every instance using the same Redis and key prefix
 * (the A2A transport's tasks, and its claim of a task by the first payment sent for it). A claim
 * is taken by one Lua script (redis-scripts.ts), so two instances never both take one.
 * Part of your project: edit freely.
 */
import type { Ledger } from "../ledger.js";
import type { RedisClient } from "./redis.js";

/** Runs one Redis command, any failure a LedgerUnavailableError (redis.ts's `command`). */
type Command = <T>(what: string, run: () => Promise<T>) => Promise<T>;

/** A PX argument: a whole number of milliseconds, at least 1. */
const px = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs));

export function redisRecords(
  client: RedisClient,
  command: Command,
  claimScript: (...args: (string | number)[]) => Promise<unknown>,
  keyPrefix: string,
): Required<Pick<Ledger, "putRecord" | "getRecord" | "claimRecord">> {
  const recordKey = (key: string) => `${keyPrefix}record:{${key}}`;
  const claimKey = (key: string) => `${keyPrefix}claim:{${key}}`;
  return {
    putRecord: async (key, value, ttlMs) => {
      await command("keep a record", () => client.set(recordKey(key), value, "PX", px(ttlMs)));
    },
    getRecord: async (key) =>
      (await command("read a record", () => client.get(recordKey(key)))) ?? undefined,
    claimRecord: async (key, value, ttlMs) => {
      const kept = await command("take a claim", () =>
        claimScript(claimKey(key), value, px(ttlMs)),
      );
      return typeof kept === "string" ? kept : undefined;
    },
  };
}
