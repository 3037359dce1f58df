// The chain as the e2e tests use it: the global setup's anvil with Circle's USDC (inject("chain")), a viem
// client on it, USDC balances, the production environment of a generated server that settles on it, and a
// fresh v2 payment for what a generated server's 402 asks.
import { createPublicClient, http } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { expect, inject } from "vitest";
import { localChain } from "../chain/anvil.js";
import { usdcBalance } from "../chain/usdc.js";
import { decodeHeader, payer, post, type Requirement, signPayment } from "./helpers.js";

export const chain = inject("chain");
export const anvil = localChain(chain.rpcUrl, chain.chainId);
export const publicClient = createPublicClient({ chain: anvil, transport: http(chain.rpcUrl) });
export const balance = (address: `0x${string}`) => usdcBalance(chain.rpcUrl, chain.asset, address);

/**
 * A generated server's payment settings for this chain: paid to `payTo` on base-sepolia in the chain's USDC
 * (at Base Sepolia's address or not); its settlement route (X402_RPC_URL, X402_FACILITATOR_URL) not included.
 */
export const chainPayment = (payTo: string) => ({
  PAY_TO: payTo,
  X402_NETWORK: "base-sepolia",
  X402_ASSET: chain.asset,
  X402_ASSET_NAME: "USDC",
  X402_ASSET_VERSION: "2",
});

/** A generated server's environment in production, paid to `payTo` in the chain's USDC; `more` on top. */
export const productionEnv = (payTo: string, more: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  NODE_ENV: "production",
  ...chainPayment(payTo),
  X402_RPC_URL: chain.rpcUrl,
  ...more,
});

/** The first offer of the 402 that the server at `url` answers to the unpaid `body`. */
export async function requirement(url: string, body: string): Promise<Requirement> {
  const res = await fetch(`${url}/execute`, post(body));
  expect(res.status).toBe(402);
  return decodeHeader<{ accepts: Requirement[] }>(res.headers.get("payment-required")).accepts[0]!;
}

/** A fresh authorization (random nonce) of exactly what `url`'s 402 to `body` asks, signed by `signer`. */
export async function authorize(
  url: string,
  body: string,
  signer: PrivateKeyAccount = payer,
): Promise<string> {
  return await signPayment(await requirement(url, body), chain.chainId, {}, signer);
}
