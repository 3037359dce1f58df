// The seller every `create-agent call` chain test pays (call.test.ts over POST /execute, call-mcp.test.ts
// over /mcp): the test agent of call-helpers.ts served in production on the shared anvil, paid in Circle's
// USDC at Base Sepolia's address through the reference facilitator; its payers minted fresh, its chain read
// directly.
import { join } from "node:path";
import { execa } from "execa";
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { inject } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import {
  callAgent,
  type CallAgent,
  type CountingServer,
  startCounted,
} from "../cli/call-helpers.js";
import { PAYEE } from "./accounts.js";
import { localChain } from "./anvil.js";
import { BASE_SEPOLIA_USDC, ensureBaseSepoliaUsdc, mintUsdc, usdcBalance } from "./usdc.js";

const { rpcUrl, chainId, facilitatorUrl } = inject("chain");

/** The shared chain, read with a short polling interval. */
export const chainClient = createPublicClient({
  chain: localChain(rpcUrl, chainId),
  transport: http(rpcUrl),
  pollingInterval: 20,
});
/** echo's price: 0.01 USDC. */
export const PRICE = 10_000n;
export const balance = (address: Hex, token: Hex = BASE_SEPOLIA_USDC) =>
  usdcBalance(rpcUrl, token, address);

/** A new payer key holding `usdc` atomic units of `token` (the facilitator pays the gas). */
export async function fundedPayer(
  usdc: bigint,
  token: Hex = BASE_SEPOLIA_USDC,
): Promise<{ key: Hex; address: Hex }> {
  const key = generatePrivateKey();
  const address = privateKeyToAddress(key);
  await mintUsdc(rpcUrl, token, address, usdc);
  return { key, address };
}

export const sellerPayment: AppOptions["payment"] = {
  payTo: PAYEE,
  network: "base-sepolia",
  asset: BASE_SEPOLIA_USDC,
  facilitatorUrl,
};

export interface CallSeller {
  agent: CallAgent;
  server: CountingServer;
  /** How many payments the server has settled so far. */
  settlements(): number;
}

/** The CLI built (dist, without deleting it first) and the seller started; close its server after. */
export async function startCallSeller(): Promise<CallSeller> {
  // `npm run build` would delete dist under other running tests; tsc still writes every file when someone
  // else's work in progress has a type error.
  await execa("npx", ["tsc", "-p", "tsconfig.build.json"], {
    reject: false,
    cwd: join(import.meta.dirname, "../.."),
  });
  await ensureBaseSepoliaUsdc(rpcUrl);
  const agent = callAgent({ slowMs: 3000 });
  const server = await startCounted(agent, { devMode: false, payment: sellerPayment });
  const settlements = () =>
    server.logger.lines.filter((l) => l.message === "payment settled").length;
  return { agent, server, settlements };
}
