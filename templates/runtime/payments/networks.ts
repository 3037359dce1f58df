/**
 * Networks the payment gate can take USDC on: the one table of known networks, and the USDC of
 * each (for EVM the EIP-712 domain too: name, version, chainId and contract must match the token
 * exactly or every signature fails, so custom chains must spell all of it out). The table equals
 * @x402/evm's and @x402/svm's default assets (a repo test checks it). Part of your project: edit freely.
 */

export type NetworkFamily = "evm" | "svm";

export interface AssetInfo {
  /** Token contract address (also the EIP-712 verifyingContract). */
  asset: `0x${string}`;
  /** EIP-712 domain name of the token, e.g. "USD Coin". */
  assetName: string;
  /** EIP-712 domain version of the token, e.g. "2". */
  assetVersion: string;
}

/** An EVM network with its token: what the EVM payment scheme needs. */
export interface ResolvedNetwork extends AssetInfo {
  /**
   * Name used by x402 v1 ("base", "base-sepolia"); networks v1 clients do not know (custom chains,
   * Arbitrum) use their CAIP-2 id here, and v1 clients cannot pay on them.
   */
  v1Name: string;
  /** CAIP-2 id used by x402 v2, e.g. "eip155:84532". */
  caip2: string;
  chainId: number;
}

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

/** USDC uses 6 decimals everywhere: prices (priceAtomic) are counted in millionths. */
const USDC_DECIMALS = 6;

/**
 * Every network known by name, with its USDC. Names without a v1 entry are unknown to x402 v1
 * clients (they appear in v1 answers under their CAIP-2 id, which those clients cannot pay).
 */
export const KNOWN_NETWORKS = {
  base: {
    family: "evm",
    v1Name: "base",
    caip2: "eip155:8453",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  "base-sepolia": {
    family: "evm",
    v1Name: "base-sepolia",
    caip2: "eip155:84532",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    assetName: "USDC",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  polygon: {
    family: "evm",
    v1Name: "polygon",
    caip2: "eip155:137",
    chainId: 137,
    asset: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  arbitrum: {
    family: "evm",
    v1Name: "eip155:42161",
    caip2: "eip155:42161",
    chainId: 42161,
    asset: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  "arbitrum-sepolia": {
    family: "evm",
    v1Name: "eip155:421614",
    caip2: "eip155:421614",
    chainId: 421614,
    asset: "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  avalanche: {
    family: "evm",
    v1Name: "avalanche",
    caip2: "eip155:43114",
    chainId: 43114,
    asset: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
  ethereum: {
    family: "evm",
    v1Name: "ethereum",
    caip2: "eip155:1",
    chainId: 1,
    asset: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    assetName: "USD Coin",
    assetVersion: "2",
    decimals: USDC_DECIMALS,
  },
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
} as const satisfies Record<
  string,
  (ResolvedNetwork & { family: "evm"; decimals: number }) | SolanaNetwork
>;

export type KnownNetworkName = keyof typeof KNOWN_NETWORKS;

/** True when x402 v1 clients know this network by name (their list has no CAIP-2 ids). */
export function v1Knows(network: { v1Name: string }): boolean {
  return !network.v1Name.includes(":");
}

/** A network name parsed: its family and ids, plus the known USDC when we have one. */
export type ParsedNetwork =
  | { family: "evm"; v1Name: string; caip2: string; chainId: number; usdc?: AssetInfo }
  | { family: "svm"; v1Name: string; caip2: string; usdc?: { asset: string; decimals: number } };

const SOLANA_CAIP2 = /^solana:[1-9A-HJ-NP-Za-km-z]{32}$/;

/**
 * Parses a known name ("base", "solana-devnet", ...) or a CAIP-2 id ("eip155:<chainId>",
 * "solana:<genesis hash prefix>"). A CAIP-2 id of a known network ("eip155:8453") resolves to that
 * network. Returns undefined for anything else.
 */
export function parseNetwork(name: string): ParsedNetwork | undefined {
  for (const [key, known] of Object.entries(KNOWN_NETWORKS)) {
    if (name !== key && name !== known.caip2) continue;
    if (known.family === "svm") {
      const { asset, decimals, v1Name, caip2 } = known;
      return { family: "svm", v1Name, caip2, usdc: { asset, decimals } };
    }
    const { asset, assetName, assetVersion, v1Name, caip2, chainId } = known;
    return { family: "evm", v1Name, caip2, chainId, usdc: { asset, assetName, assetVersion } };
  }
  if (SOLANA_CAIP2.test(name)) return { family: "svm", v1Name: name, caip2: name };
  const match = /^eip155:([1-9]\d*)$/.exec(name);
  const chainId = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(chainId)) return undefined;
  return { family: "evm", v1Name: name, caip2: name, chainId };
}

/**
 * The suffix of a network's own settings: the name as written, upper-cased, every other
 * character than A-Z and 0-9 as "_" ("base-sepolia" -> "BASE_SEPOLIA", "eip155:80002" -> "EIP155_80002").
 */
export function networkSettingSuffix(written: string): string {
  return written.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}
