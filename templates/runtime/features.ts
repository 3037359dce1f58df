/**
 * The optional features this project includes, and the one place that names them (a network family,
 * a transport besides POST /execute, an optional service). Each feature is a folder of src/runtime
 * with its own dependencies. `npm run add -- <feature>` and `npm run remove -- <feature>` rewrite
 * this file: a line ending in a `feature: <name>` comment is kept only while the project has that
 * feature. Part of your project: edit freely.
 */
import type { EvmOnchainModule } from "./payments/evm/chain.js";
import { createEvmFamily } from "./payments/evm/family.js";
import type { NetworkFamily } from "./payments/family.js";
import { svmFamily } from "./payments/svm/family.js"; // feature: solana
import { CONSOLE_TRANSPORT } from "./console/transport.js"; // feature: console
import { EXECUTE_TRANSPORT } from "./http/execute.js";
import { MCP_TRANSPORT } from "./mcp/transport.js"; // feature: mcp
import { A2A_TRANSPORT } from "./a2a/transport.js"; // feature: a2a
import { QUEUE_TRANSPORT } from "./queue/transport.js"; // feature: queue
import type { Transport } from "./transport.js";
import type { RedisLedgerModule } from "./ledger/select.js";
import type { MetricsModule } from "./ops/metrics-loader.js";
import type { CdpAuthModule, CdpKeyKind } from "./payments/facilitator-credentials.js";
import type { WorkerModule } from "./server.js";
import { cdpKeyKind } from "./payments/facilitator-auth/key-kind.js"; // feature: facilitator-auth

/** The features this project has (create-agent's names; `evm` and the core are always there). */
export const FEATURES: readonly string[] = [
  "evm",
  "solana", // feature: solana
  "onchain", // feature: onchain
  "mcp", // feature: mcp
  "a2a", // feature: a2a
  "console", // feature: console
  "redis", // feature: redis
  "queue", // feature: queue
  "metrics", // feature: metrics
  "facilitator-auth", // feature: facilitator-auth
];

/** Whether this project includes a feature. */
export function hasFeature(name: string): boolean {
  return FEATURES.includes(name);
}

/** What configuration that asks for an absent feature is told (fail closed, with the fix). */
export function missingFeature(feature: string, asked: string): string {
  return `${asked}, which this project does not include: run npm run add -- ${feature}`;
}

/** How an owner turns on `setting` of an optional `feature`: set it, or first add the feature. */
export function howToSet(setting: string, feature: string): string {
  return hasFeature(feature)
    ? `set ${setting}`
    : `add the ${feature} feature (npm run add -- ${feature}) and set ${setting}`;
}

/**
 * The optional services' entry points, as the core reaches them, each loaded only when configuration
 * asks for it (REDIS_URL, METRICS_PORT or METRICS_TOKEN, CDP_API_KEY_ID; npm run worker; X402_RPC_URL or
 * X402_SETTLER_KEY): a member is undefined when
 * the project lacks its feature, and the configuration asking for it is then refused (missingFeature).
 */
export interface OptionalServices {
  /** `redis` (ledger/redis/): the shared payment ledger. */
  redisLedger?: () => Promise<RedisLedgerModule>;
  /** `metrics` (metrics/): Prometheus metrics, GET /metrics and the metrics port. */
  metrics?: () => Promise<MetricsModule>;
  /** `facilitator-auth` (payments/facilitator-auth/): CDP API-key JWTs, signed with jose. */
  facilitatorAuth?: () => Promise<CdpAuthModule>;
  /** `facilitator-auth`: what kind of key a CDP_API_KEY_SECRET is (checked with the configuration). */
  cdpKeyKind?: (secret: string) => CdpKeyKind;
  /** `queue` (queue/): a process that only runs async jobs (npm run worker). */
  worker?: () => Promise<WorkerModule>;
  /** `onchain` (payments/evm/onchain/): EVM checks on chain and direct settlement, with viem. */
  evmOnchain?: () => Promise<EvmOnchainModule>;
}

export const SERVICES: OptionalServices = {
  redisLedger: () => import("./ledger/redis/redis.js"), // feature: redis
  metrics: () => import("./metrics/service.js"), // feature: metrics
  facilitatorAuth: () => import("./payments/facilitator-auth/cdp-jwt.js"), // feature: facilitator-auth
  cdpKeyKind, // feature: facilitator-auth
  worker: () => import("./queue/worker-main.js"), // feature: queue
  evmOnchain: () => import("./payments/evm/onchain/module.js"), // feature: onchain
};

/**
 * The network families payments are taken on (payments/family.ts), in the order their names are
 * listed in messages; the first one is the family of a configuration that lists no network. Each
 * is its folder plus its line here.
 */
export const FAMILIES: NetworkFamily[] = [
  createEvmFamily(SERVICES.evmOnchain, (asked) => missingFeature("onchain", asked)),
  svmFamily, // feature: solana
];

/**
 * How configuration names each optional network family: its networks, settings and options.
 * Naming one while the project lacks that feature fails closed, saying how to add it.
 */
export const FAMILY_NAMES: readonly {
  feature: string;
  label: string;
  networks: RegExp;
  settings: readonly string[];
  options: readonly string[];
}[] = [
  {
    feature: "solana",
    label: "Solana",
    networks: /^solana(-devnet)?$|^solana:/,
    settings: [
      "PAY_TO_SOLANA",
      "SOLANA_FEE_PAYER_KEY",
      "SOLANA_MAX_COMPUTE_UNITS",
      "SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS",
    ],
    options: ["payToSolana", "solanaFeePayerKey"],
  },
];

/**
 * The ways in, mounted in this order (transport.ts): POST /execute (the core's, always first), then
 * each feature's. They drive the routes, CORS, and what the discovery documents describe.
 */
export const TRANSPORTS: readonly Transport[] = [
  EXECUTE_TRANSPORT,
  MCP_TRANSPORT, // feature: mcp
  A2A_TRANSPORT, // feature: a2a
  CONSOLE_TRANSPORT, // feature: console
  QUEUE_TRANSPORT, // feature: queue
];
