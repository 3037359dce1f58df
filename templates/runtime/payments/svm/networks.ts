/**
 * The Solana family's networks: each known by name with its USDC mint (the table equals @x402/svm's
 * default assets; a repo test checks it), and "solana:<genesis hash prefix>" for any other.
 * Part of your project: edit freely.
 */
import { findKnown, type ParsedNetwork, USDC_DECIMALS } from "../networks.js";

/** A Solana network with its token (an SPL mint). */
export interface SolanaNetwork {
  family: "svm";
  /** x402 v1 name ("solana", "solana-devnet"), else the CAIP-2 id. */
  v1Name: string;
  /** "solana:<first 32 characters of the genesis hash>". */
  caip2: string;
  /** The token's mint address (base58). */
  asset: string;
  decimals: number;
}

/** Every Solana network known by name, with its USDC. */
export const SOLANA_NETWORKS = {
  solana: {
    family: "svm",
    v1Name: "solana",
    caip2: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
    asset: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    decimals: USDC_DECIMALS,
  },
  "solana-devnet": {
    family: "svm",
    v1Name: "solana-devnet",
    caip2: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
    decimals: USDC_DECIMALS,
  },
} as const satisfies Record<string, SolanaNetwork>;

/** A Solana network id parsed, plus the known USDC when we have one. */
export interface SolanaParsedNetwork extends ParsedNetwork {
  family: "svm";
  usdc?: { asset: string; decimals: number };
}

const SOLANA_CAIP2 = /^solana:[1-9A-HJ-NP-Za-km-z]{32}$/;

/** "solana", "solana-devnet" or "solana:<genesis hash prefix>"; undefined for anything else. */
export function parseSolanaNetwork(name: string): SolanaParsedNetwork | undefined {
  const known = findKnown<SolanaNetwork>(SOLANA_NETWORKS, name);
  if (known) {
    const { asset, decimals, v1Name, caip2 } = known;
    return { family: "svm", v1Name, caip2, usdc: { asset, decimals } };
  }
  if (SOLANA_CAIP2.test(name)) return { family: "svm", v1Name: name, caip2: name };
  return undefined;
}
