/**
 * The payer's token rule, shared like guard.ts by `create-agent call` and every generated client (copied
 * verbatim after it): a payer pays in the network's USDC only, from the one network table, unless its user
 * allows another token explicitly (`--asset`, `allowedAssets`). An offer in any other token (USDT, a token
 * a hostile service deployed) is refused before anything is signed, and what is reported as paid names the
 * token that was signed.
 *
 * Web-standard code only, like guard.ts: generated clients run in Node, Deno, Bun and browsers.
 */
import type { PaymentOffer } from "./guard.js";
import { networkId } from "./payer-families.js";

/**
 * The USDC of every network the payer knows by name, by CAIP-2 id: the server's network table
 * (templates/runtime/payments/networks.ts, same addresses; a repo test keeps them equal). A payer pays in
 * these only, unless its user allows another token explicitly (AllowedAsset).
 */
export const NETWORK_USDC: Readonly<Record<string, string>> = {
  "eip155:8453": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  "eip155:84532": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  "eip155:137": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
  "eip155:42161": "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
  "eip155:421614": "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d",
  "eip155:43114": "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
  "eip155:1": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
};

/** A token other than the network's USDC that the user allows paying with (`--asset`, `allowedAssets`). */
export interface AllowedAsset {
  /** CAIP-2 ("eip155:84532") or x402 v1 name ("base-sepolia"); undefined: on any network. */
  network?: string;
  /** The token contract (EVM) or mint (Solana). */
  asset: string;
}

/** Two token addresses are the same: EVM addresses in any letter case, Solana mints exactly. */
function sameAsset(a: string, b: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** Whether `asset` is the USDC of `network` (a name or CAIP-2 id) in the network table. */
export function isNetworkUsdc(network: string, asset: string): boolean {
  const usdc = NETWORK_USDC[networkId(network)];
  return usdc !== undefined && sameAsset(usdc, asset);
}

/** Whether a payer may pay in `asset` on `network`: the network's USDC, or a token the user allowed there. */
export function assetAllowed(
  network: string,
  asset: string,
  allowed: readonly AllowedAsset[],
): boolean {
  if (isNetworkUsdc(network, asset)) return true;
  return allowed.some(
    (a) =>
      (a.network === undefined || networkId(a.network) === networkId(network)) &&
      sameAsset(a.asset, asset),
  );
}

/**
 * Why none of `offers` (one network's) can be paid, in the payer's words: the tokens they ask and the
 * network's USDC. `allowHow` says how the user allows another token (a flag, an option).
 */
export function assetProblem(offers: readonly PaymentOffer[], allowHow: string): string {
  const network = offers[0]?.network ?? "this network";
  const asked = [...new Set(offers.map((o) => o.asset))].join(", ");
  const usdc = NETWORK_USDC[networkId(network)];
  return (
    `the service asks to be paid in the token ${asked} on ${network}, which is not ` +
    (usdc ? `that network's USDC (${usdc})` : "a USDC this payer knows on that network") +
    `: to pay in it anyway, ${allowHow}`
  );
}
