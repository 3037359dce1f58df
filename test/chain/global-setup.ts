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

export default async function setup(project: TestProject) {
  const started = performance.now();
  const anvil = await startAnvil({ chainId: 84532 });
  try {
    const asset = await deployUsdc(anvil.rpcUrl, { name: "USDC", version: "2" });
    for (const key of PAYER_KEYS)
      await mintUsdc(anvil.rpcUrl, asset, privateKeyToAddress(key), PAYER_FUNDS);
    const facilitator = await startFacilitator(anvil.rpcUrl, FACILITATOR_KEY);
    project.provide("chain", {
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      asset,
      facilitatorUrl: facilitator.url,
    });
    if (process.env.CHAIN_SETUP_TIMING) {
      console.log(`chain global setup: ${Math.round(performance.now() - started)} ms`);
    }
    return async () => {
      await facilitator.stop();
      await anvil.stop();
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
