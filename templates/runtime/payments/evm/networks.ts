/**
 * The EVM family's networks: every EVM network known by name, with its USDC and the token's EIP-712
 * domain (name, version, chainId and contract must match the token exactly or every signature fails,
 * so custom chains must spell all of it out). The table equals @x402/evm's default assets (a repo
 * test checks it). Part of your project: edit freely.
 */
import {
  type AssetInfo,
  findKnown,
  type ParsedNetwork,
  type ResolvedNetwork,
  USDC_DECIMALS,
} from "../networks.js";

/**
 * Every EVM network known by name, with its USDC. Names without a v1 entry are unknown to x402 v1
 * clients (they appear in v1 answers under their CAIP-2 id, which those clients cannot pay).
 */
export const EVM_NETWORKS = {
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
} as const satisfies Record<string, ResolvedNetwork & { family: "evm"; decimals: number }>;

/** An EVM network id parsed: its chain, plus the known USDC when we have one. */
export interface EvmParsedNetwork extends ParsedNetwork {
  family: "evm";
  chainId: number;
  usdc?: AssetInfo;
}

/** A known EVM name ("base", ...) or "eip155:<chainId>"; undefined for anything else. */
export function parseEvmNetwork(name: string): EvmParsedNetwork | undefined {
  const known = findKnown<(typeof EVM_NETWORKS)[keyof typeof EVM_NETWORKS]>(EVM_NETWORKS, name);
  if (known) {
    const { asset, assetName, assetVersion, v1Name, caip2, chainId } = known;
    return { family: "evm", v1Name, caip2, chainId, usdc: { asset, assetName, assetVersion } };
  }
  const match = /^eip155:([1-9]\d*)$/.exec(name);
  const chainId = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(chainId)) return undefined;
  return { family: "evm", v1Name: name, caip2: name, chainId };
}
