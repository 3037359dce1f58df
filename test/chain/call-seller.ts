// The seller every `create-agent call` chain test pays (call.test.ts over POST /execute, call-mcp.test.ts
// over /mcp): the test agent of call-helpers.ts served in production on the shared anvil, paid in Circle's
// USDC at Base Sepolia's address through the reference facilitator; its payers minted fresh, its chain read
// directly.
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { expect, inject } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import {
  callAgent,
  type CallAgent,
  type CountingServer,
  startCounted,
} from "../cli/call-helpers.js";
import { PAYEE } from "./accounts.js";
import { type DropProxy, dropProxy } from "./call-proxy.js";
import { localChain } from "./anvil.js";
import { BASE_SEPOLIA_USDC, ensureBaseSepoliaUsdc, mintUsdc, usdcBalance } from "./usdc.js";
import { buildCli } from "../cli/client-project.js";

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
  await buildCli();
  await ensureBaseSepoliaUsdc(rpcUrl);
  const agent = callAgent({ slowMs: 3000 });
  const server = await startCounted(agent, { devMode: false, payment: sellerPayment });
  const settlements = () =>
    server.logger.lines.filter((l) => l.message === "payment settled").length;
  return { agent, server, settlements };
}

/** What a paid call must have changed: see beforePaidCall. */
export interface PaidCall {
  chargedOnce(): Promise<void>;
  notYetPaid(): Promise<void>;
}

/**
 * What a paid call must change, read before it; `chargedOnce()` then checks that `capability` ran once, one
 * payment was settled and exactly PRICE moved from `payer` to the payee, on chain; `notYetPaid()` that the
 * payer still holds what it held.
 */
export async function beforePaidCall(
  seller: CallSeller,
  payer: Hex,
  capability: string,
): Promise<PaidCall> {
  const runs = () => seller.agent.seen[capability]?.length ?? 0;
  const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
  const [settledBefore, runsBefore] = [seller.settlements(), runs()];
  return {
    async chargedOnce() {
      expect(runs() - runsBefore).toBe(1);
      expect(seller.settlements()).toBe(settledBefore + 1);
      expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
      expect(await balance(payer)).toBe(payerBefore - PRICE);
    },
    async notYetPaid() {
      expect(await balance(payer)).toBe(payerBefore);
    },
  };
}

/**
 * The answers a drop proxy (call-proxy.ts) loses, for `it.each`: when, its mode, and the capability paid
 * (slow, when the retry must find the job still running).
 */
export const LOST_ANSWERS = [
  ["after the server answered (the job ran and was settled)", "after-answer", "echo"],
  ["while the server still runs the job (the retry is told it is in use)", "at-once", "slow"],
] as const;

/**
 * A new funded payer paying `capability` through a drop proxy (call-proxy.ts) in front of the seller that
 * loses an answer as `mode` says: `test` gets the payer, the proxy and the money before; the proxy is closed
 * after.
 */
export async function throughLostAnswer(
  seller: CallSeller,
  mode: "after-answer" | "at-once",
  capability: string,
  test: (payer: { key: Hex; address: Hex }, proxy: DropProxy, paid: PaidCall) => Promise<void>,
): Promise<void> {
  const payer = await fundedPayer(1_000_000n);
  const proxy = await dropProxy(seller.server.url, mode);
  try {
    await test(payer, proxy, await beforePaidCall(seller, payer.address, capability));
  } finally {
    await proxy.close();
  }
}

/**
 * The receipt `create-agent call` printed for a paid call from this machine's seller: the price on Base
 * Sepolia, the payer, a transaction mined on chain (a transfer of the USDC contract), no public explorer
 * link (the agent runs on loopback, its chain may be a local one), and never the payer's key.
 */
export async function expectLocalReceipt(
  run: { stdout: string; stderr: string },
  payer: { key: Hex; address: Hex },
): Promise<void> {
  const tx = /transaction: (0x[0-9a-f]{64})/.exec(run.stderr)?.[1] as Hex | undefined;
  expect(tx, run.stderr).toBeDefined();
  const mined = await chainClient.getTransactionReceipt({ hash: tx! });
  expect(mined.status).toBe("success");
  expect(mined.to?.toLowerCase()).toBe(BASE_SEPOLIA_USDC.toLowerCase());
  expect(run.stderr).toContain("paid 0.01 USDC on eip155:84532");
  expect(run.stderr).not.toContain("basescan.org");
  expect(run.stderr).toContain("explorer:    none: the agent runs on this machine");
  expect(run.stderr).toContain(`payer:       ${payer.address}`);
  expect(run.stderr + run.stdout).not.toContain(payer.key.slice(2));
}
