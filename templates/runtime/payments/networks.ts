/**
 * Networks the payment gate can take USDC on, and the EIP-712 domain of each network's USDC.
 * The domain (name, version, chainId, contract) must match the token exactly or every
 * signature fails, so custom chains must spell all of it out. Part of your project: edit freely.
 */

export interface AssetInfo {
  /** Token contract address (also the EIP-712 verifyingContract). */
  asset: `0x${string}`;
  /** EIP-712 domain name of the token, e.g. "USD Coin". */
  assetName: string;
  /** EIP-712 domain version of the token, e.g. "2". */
  assetVersion: string;
}

export interface ResolvedNetwork extends AssetInfo {
  /** Name used by x402 v1 ("base", "base-sepolia"); custom chains use their CAIP-2 id. */
  v1Name: string;
  /** CAIP-2 id used by x402 v2, e.g. "eip155:84532". */
  caip2: string;
  chainId: number;
}

export const KNOWN_NETWORKS = {
  base: {
    v1Name: "base",
    caip2: "eip155:8453",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    assetName: "USD Coin",
    assetVersion: "2",
  },
  "base-sepolia": {
    v1Name: "base-sepolia",
    caip2: "eip155:84532",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    assetName: "USDC",
    assetVersion: "2",
  },
} as const satisfies Record<string, ResolvedNetwork>;

/** A network name parsed: its ids, plus the known USDC when we have one. */
export interface ParsedNetwork {
  v1Name: string;
  caip2: string;
  chainId: number;
  usdc?: AssetInfo;
}

/**
 * Parses "base", "base-sepolia" or "eip155:<chainId>". A CAIP-2 id of a known network
 * ("eip155:8453") resolves to that network. Returns undefined for anything else.
 */
export function parseNetwork(name: string): ParsedNetwork | undefined {
  for (const known of Object.values(KNOWN_NETWORKS)) {
    if (name === known.v1Name || name === known.caip2) {
      const { asset, assetName, assetVersion, ...ids } = known;
      return { ...ids, usdc: { asset, assetName, assetVersion } };
    }
  }
  const match = /^eip155:([1-9]\d*)$/.exec(name);
  const chainId = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(chainId)) return undefined;
  return { v1Name: name, caip2: name, chainId };
}
