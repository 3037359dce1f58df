// The runtime names what it uses of ioredis (RedisClient in ledger/redis.ts) instead of importing its
// declarations, to keep a project's typecheck fast. These checks fail to compile (npm run typecheck) or
// fail here when a real ioredis client no longer fits that interface.
import { Cluster, Redis } from "ioredis";
import { expect, it } from "vitest";
import type { RedisClient } from "../../templates/runtime/ledger/redis/redis.js";

it("ioredis's Redis and Cluster fit the runtime's RedisClient, and Redis is what ioredis exports", () => {
  // Compile-time: each assignment fails `npm run typecheck` if the class no longer fits.
  const fits = (redis: Redis, cluster: Cluster): RedisClient[] => [redis, cluster];
  expect(typeof fits).toBe("function");
  const client: RedisClient = new Redis({ lazyConnect: true });
  expect(typeof client.defineCommand).toBe("function");
  client.disconnect();
});
