// One local chain per test run: anvil (chain id 84532), Circle's USDC with funded payers, and a real x402
// facilitator. Tests read the addresses with `inject("chain")`.
import { privateKeyToAddress } from "viem/accounts";
import type { TestProject } from "vitest/node";
import { FACILITATOR_KEY, PAYER_KEYS } from "./accounts.js";
import { startAnvil } from "./anvil.js";
import { startFacilitator } from "./facilitator.js";
import { deployUsdc, mintUsdc } from "./usdc.js";

export interface ChainContext {
  rpcUrl: string;
  chainId: number;
  /** The USDC (FiatTokenV2_2) address; EIP-712 domain name "USDC", version "2". */
  asset: `0x${string}`;
  facilitatorUrl: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    chain: ChainContext;
  }
}

/** 1000 USDC (6 decimals) for each payer. */
export const PAYER_FUNDS = 1_000_000_000n;

// The "chain" and "e2e" projects both list this setup; vitest may call it once per project. One chain serves
// the whole run: the first call starts it, later calls share it, and the first teardown stops it (vitest runs
// global teardowns after every project has finished).
let running: Promise<{ context: ChainContext; stop: () => Promise<void> }> | undefined;

export default async function setup(project: TestProject) {
  running ??= startChain();
  const { context, stop } = await running;
  project.provide("chain", context);
  return stop;
}

async function startChain(): Promise<{ context: ChainContext; stop: () => Promise<void> }> {
  const started = performance.now();
  const anvil = await startAnvil({ chainId: 84532 });
  try {
    const asset = await deployUsdc(anvil.rpcUrl, { name: "USDC", version: "2" });
    for (const key of PAYER_KEYS)
      await mintUsdc(anvil.rpcUrl, asset, privateKeyToAddress(key), PAYER_FUNDS);
    const facilitator = await startFacilitator(anvil.rpcUrl, FACILITATOR_KEY);
    if (process.env.CHAIN_SETUP_TIMING) {
      console.log(`chain global setup: ${Math.round(performance.now() - started)} ms`);
    }
    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        try {
          await facilitator.stop();
        } finally {
          await anvil.stop();
        }
      })());
    const context = {
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      asset,
      facilitatorUrl: facilitator.url,
    };
    return { context, stop };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
