/**
 * Which ledger the app uses: yours (option `ledger`), Redis when REDIS_URL is set (shared by every
 * instance; the `redis` feature, ledger/redis/, reached through features.ts and loaded only then),
 * else memory (this process only). Part of your project: edit freely.
 */
import { howToSet, SERVICES } from "../features.js";
import type { ResolvedConfig } from "../config.js";
import { serviceAbsent } from "../ops/config-services.js";
import { ConfigError } from "../ops/settings.js";
import type { Logger } from "../types.js";
import type { Ledger } from "./ledger.js";
import { createMemoryLedger } from "./memory.js";

/** What the `redis` feature (ledger/redis/redis.ts) gives the core. */
export interface RedisLedgerModule {
  createRedisLedger(options: { url: string; keyPrefix: string; logger: Logger }): Ledger;
}

export function selectLedger(
  config: ResolvedConfig,
  agentName: string,
  logger: Logger,
  own: Ledger | undefined,
): Ledger {
  if (own) return own;
  // Dev mode never reserves or settles: no Redis connection for it.
  if (!config.redis || config.devMode)
    return createMemoryLedger({
      maxResultBytes: config.resultCacheMaxBytes,
      maxTaskRecordBytes: config.a2a.taskMemoryBytes,
      shareHint: howToSet("REDIS_URL", "redis"),
    });
  const { url, keyPrefix = `create-agent:${agentName}:` } = config.redis;
  const load = SERVICES.redisLedger;
  // resolveConfig refuses REDIS_URL without the feature; this is for configurations made by hand.
  if (!load) throw new ConfigError([serviceAbsent("redis", "REDIS_URL")]);
  const loading = load().then((m) => m.createRedisLedger({ url, keyPrefix, logger }));
  return deferred(
    loading,
    `payment ledger: Redis (${new URL(url).host}), key prefix "${keyPrefix}": shared by every instance using it`,
  );
}

/** A ledger whose implementation is still loading: every call waits for it. */
function deferred(loading: Promise<Ledger>, description: string): Ledger {
  loading.catch(() => undefined); // reported by the first call instead of crashing startup
  return {
    describe: () => description,
    reserve: async (...a) => (await loading).reserve(...a),
    renew: async (...a) => (await loading).renew(...a),
    release: async (...a) => (await loading).release(...a),
    markSettled: async (...a) => (await loading).markSettled(...a),
    hold: async (...a) => (await loading).hold(...a),
    claimHeld: async (...a) => (await loading).claimHeld(...a),
    returnHeld: async (...a) => (await loading).returnHeld(...a),
    getResult: async (...a) => (await loading).getResult(...a),
    listUnconfirmed: async (...a) => (await loading).listUnconfirmed(...a),
    forgetUnconfirmed: async (...a) => (await loading).forgetUnconfirmed(...a),
    exclusive: async (name, holdMs, work) => (await loading).exclusive(name, holdMs, work),
    putRecord: async (...a) => (await loading).putRecord?.(...a),
    getRecord: async (...a) => (await loading).getRecord?.(...a),
    claimRecord: async (...a) => (await loading).claimRecord!(...a), // Redis's has it
    ping: async () => (await loading).ping(),
    close: async () => (await loading).close(),
  };
}
