/**
 * The tables of known networks (templates/runtime/payments/evm/networks.ts and svm/networks.ts) equals what the official
 * x402 packages use: a wrong USDC address or EIP-712 domain would make every payment on that
 * network fail (or pay a different token), so it is checked against @x402/evm and @x402/svm.
 */
import { DEFAULT_ASSETS as EVM_ASSETS } from "@x402/evm";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { DEFAULT_ASSETS as SVM_ASSETS, V1_TO_V2_NETWORK_MAP } from "@x402/svm";
import { describe, expect, it } from "vitest";
import { EVM_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import { parseNetwork } from "../../templates/runtime/payments/families.js";
import {
  networkSettingSuffix,
  type ParsedNetwork,
  v1Knows,
} from "../../templates/runtime/payments/networks.js";
import { SOLANA_NETWORKS } from "../../templates/runtime/payments/svm/networks.js";
import { type PaymentOffer, requirementsV1 } from "../../templates/runtime/payments/x402.js";

/** Every family's table of known networks. */
const KNOWN_NETWORKS = { ...EVM_NETWORKS, ...SOLANA_NETWORKS };

const ISSUE_NAMES = [
  "base",
  "base-sepolia",
  "polygon",
  "arbitrum",
  "arbitrum-sepolia",
  "avalanche",
  "ethereum",
  "solana",
  "solana-devnet",
];

/** `n`'s USDC in a package's DEFAULT_ASSETS, which must list `n`. */
function officialUsdc(assets: unknown, pkg: string, name: string, n: { caip2: string }) {
  const official = (assets as Record<string, Array<Record<string, unknown>>>)[n.caip2];
  expect(official, `${name} (${n.caip2}) in ${pkg} DEFAULT_ASSETS`).toBeDefined();
  return official!.find((a) => a.symbol === "USDC")!;
}

describe("known networks", () => {
  it("names every network a seller can choose by name", () => {
    expect(Object.keys(KNOWN_NETWORKS).sort()).toEqual([...ISSUE_NAMES].sort());
  });

  it("has each EVM network's USDC exactly as @x402/evm's default assets", () => {
    for (const [name, n] of Object.entries(KNOWN_NETWORKS)) {
      if (n.family !== "evm") continue;
      const usdc = officialUsdc(EVM_ASSETS, "@x402/evm", name, n);
      expect({
        asset: n.asset,
        name: n.assetName,
        version: n.assetVersion,
        decimals: n.decimals,
      }).toEqual({
        asset: usdc.asset,
        name: usdc.name,
        version: usdc.version,
        decimals: usdc.decimals,
      });
      expect(n.caip2).toBe(`eip155:${n.chainId}`);
    }
  });

  it("has each Solana network's USDC mint exactly as @x402/svm's default assets", () => {
    for (const [name, n] of Object.entries(KNOWN_NETWORKS)) {
      if (n.family !== "svm") continue;
      const usdc = officialUsdc(SVM_ASSETS, "@x402/svm", name, n);
      expect({ asset: n.asset, decimals: n.decimals }).toEqual({
        asset: usdc.asset,
        decimals: usdc.decimals,
      });
      expect(V1_TO_V2_NETWORK_MAP[name as keyof typeof V1_TO_V2_NETWORK_MAP]).toBe(n.caip2);
    }
  });

  it("gives a v1 name exactly to the networks x402 v1 clients know", () => {
    const v1Evm = EVM_NETWORK_CHAIN_ID_MAP as Record<string, number>;
    for (const [name, n] of Object.entries(KNOWN_NETWORKS)) {
      const officialV1 =
        n.family === "evm"
          ? v1Evm[name] === n.chainId
          : (V1_TO_V2_NETWORK_MAP as Record<string, string>)[name] === n.caip2;
      expect(v1Knows(n), name).toBe(officialV1);
      expect(n.v1Name).toBe(officialV1 ? name : n.caip2);
    }
  });

  it("parses every name and CAIP-2 id to its family", () => {
    for (const [name, n] of Object.entries(KNOWN_NETWORKS)) {
      expect(parseNetwork(name)).toMatchObject({ family: n.family, caip2: n.caip2 });
      expect(parseNetwork(n.caip2)).toMatchObject({ family: n.family, v1Name: n.v1Name });
    }
    expect(parseNetwork("solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z")).toEqual({
      family: "svm",
      v1Name: "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z",
      caip2: "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z",
    });
    for (const bad of [
      "solana:",
      "solana:0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl",
      "Solana",
      "arbitrum-one",
    ])
      expect(parseNetwork(bad), bad).toBeUndefined();
  });

  it("names a network's own settings by its written name", () => {
    expect(networkSettingSuffix("base-sepolia")).toBe("BASE_SEPOLIA");
    expect(networkSettingSuffix("eip155:80002")).toBe("EIP155_80002");
    expect(networkSettingSuffix("solana-devnet")).toBe("SOLANA_DEVNET");
  });
});

describe("the v1 body's accepts (requirementsV1)", () => {
  const offer = (written: string, extra?: Record<string, unknown>): PaymentOffer => {
    const p = parseNetwork(written)! as ParsedNetwork & {
      chainId: number;
      usdc?: { asset: string; assetName?: string; assetVersion?: string };
    };
    const network =
      p.family === "svm"
        ? {
            family: "svm" as const,
            v1Name: p.v1Name,
            caip2: p.caip2,
            asset: p.usdc?.asset ?? "Mint1111111111111111111111111111111111111111",
            decimals: 6,
          }
        : {
            v1Name: p.v1Name,
            caip2: p.caip2,
            chainId: p.chainId,
            asset: (p.usdc?.asset ?? "0x0000000000000000000000000000000000000001") as `0x${string}`,
            assetName: p.usdc?.assetName ?? "USDC",
            assetVersion: p.usdc?.assetVersion ?? "2",
          };
    return {
      network,
      payTo: "payee",
      amount: "10000",
      maxTimeoutSeconds: 45,
      resourceUrl: "http://localhost/execute",
      description: "echo",
      ...(extra && { extra }),
    };
  };
  const networksOf = (offers: PaymentOffer[]) => requirementsV1(offers).map((r) => r.network);

  it("lists Solana by its v1 name, in the seller's order with the EVM networks, with its fee payer", () => {
    const offers = [
      offer("solana-devnet", { feePayer: "Fee" }),
      offer("base-sepolia"),
      offer("solana"),
    ];
    expect(networksOf(offers)).toEqual(["solana-devnet", "base-sepolia", "solana"]);
    expect(requirementsV1(offers)[0]).toMatchObject({
      asset: KNOWN_NETWORKS["solana-devnet"].asset,
      maxAmountRequired: "10000",
      extra: { feePayer: "Fee" },
    });
  });

  it("leaves a custom Solana network (CAIP-2 only) out; a custom EVM chain alone is still shown by its CAIP-2 id", () => {
    const custom = "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z";
    expect(networksOf([offer(custom), offer("base")])).toEqual(["base"]);
    expect(networksOf([offer(custom)])).toEqual([]);
    expect(networksOf([offer("eip155:80002"), offer(custom)])).toEqual(["eip155:80002"]);
    expect(networksOf([offer("eip155:80002"), offer("solana")])).toEqual([
      "eip155:80002",
      "solana",
    ]);
  });
});
