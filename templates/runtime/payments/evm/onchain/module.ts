/**
 * The `onchain` feature's entry point: what the EVM family loads from it (../chain.ts
 * EvmOnchainModule) when X402_RPC_URL (checks on chain before a job runs) or X402_SETTLER_KEY
 * (direct settlement) is set. Loading it loads viem, this feature's dependency. Added by
 * `npm run add -- onchain`, removed by `npm run remove -- onchain`. Part of your project: edit freely.
 */
import { loadViemAccounts } from "./viem.js";

export { createChainChecks } from "./checks.js";
export { createDirectSettler } from "./direct-settlement.js";

const { privateKeyToAddress } = await loadViemAccounts();

/** The address of a settler key. */
export const settlerAddress = async (key: `0x${string}`): Promise<`0x${string}`> =>
  privateKeyToAddress(key);
