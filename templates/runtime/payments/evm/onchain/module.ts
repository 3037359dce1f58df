/**
 * The `onchain` feature's entry point: what the EVM family loads from it (../chain.ts
 * EvmOnchainModule) when X402_RPC_URL (checks on chain before a job runs) or X402_SETTLER_KEY
 * (direct settlement) is set. Loading it loads no viem, this feature's dependency: the checks, the
 * settler and the settler's address load it when first asked for, so the start-up route checks
 * (route-health.ts, plain JSON-RPC) stay light. Added by `npm run add -- onchain`, removed by
 * `npm run remove -- onchain`. Part of your project: edit freely.
 */
import type { ResolvedNetwork } from "../../networks.js";
import type { Settler } from "../../settlement.js";
import type { ChainChecks, DirectSettlerOptions } from "../chain.js";

export { settlerAddress, watchChain } from "./route-health.js";

export const createChainChecks = async (
  rpcUrl: string,
  network: ResolvedNetwork,
): Promise<ChainChecks> => (await import("./checks.js")).createChainChecks(rpcUrl, network);

export const createDirectSettler = async (options: DirectSettlerOptions): Promise<Settler> =>
  (await import("./direct-settlement.js")).createDirectSettler(options);
