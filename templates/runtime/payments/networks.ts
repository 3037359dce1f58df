/**
 * What every network family shares about its networks: the parsed shape of a network id, the
 * suffix of a network's own settings, and whether x402 v1 clients know it by name. Each family's
 * table of known networks and their USDC is in its folder (evm/networks.ts, svm/networks.ts); the
 * EVM token's EIP-712 domain types stay here because the x402 wire format (x402.ts) names them.
 * Part of your project: edit freely.
 */

/** A family's id as payments and schemes carry it ("evm", "svm", ...): see features.ts's FAMILIES. */
export type NetworkFamily = string;

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

/** USDC uses 6 decimals everywhere: prices (priceAtomic) are counted in millionths. */
export const USDC_DECIMALS = 6;

/** A network name parsed by its family: the family's id, the network's ids, and the family's own facts. */
export interface ParsedNetwork {
  family: NetworkFamily;
  /** x402 v1 name, else the CAIP-2 id. */
  v1Name: string;
  caip2: string;
}

/** True when x402 v1 clients know this network by name (their list has no CAIP-2 ids). */
export function v1Knows(network: { v1Name: string }): boolean {
  return !network.v1Name.includes(":");
}

/** The known network `name` names (by name or CAIP-2 id) in a family's table, with its key. */
export function findKnown<T extends { caip2: string }>(
  table: Record<string, T>,
  name: string,
): T | undefined {
  for (const [key, known] of Object.entries(table))
    if (name === key || name === known.caip2) return known;
  return undefined;
}

/**
 * The suffix of a network's own settings: the name as written, upper-cased, every other
 * character than A-Z and 0-9 as "_" ("base-sepolia" -> "BASE_SEPOLIA", "eip155:80002" -> "EIP155_80002").
 */
export function networkSettingSuffix(written: string): string {
  return written.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}
