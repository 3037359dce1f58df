// Sellers made of real x402 parts (test/solana/seller.ts) offering Solana devnet (a fresh Solana kit: LiteSVM
// behind a loopback JSON-RPC, and the reference facilitator with the SVM scheme) beside Base Sepolia (the
// shared anvil with Circle's USDC, the reference EVM facilitator): what the Solana payers' tests pay, shared by
// `create-agent call` on Solana (solana-call.test.ts) and the generated client on Solana (solana-client.test.ts).
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { expect, inject } from "vitest";
import type { SolanaAccount, SolanaKit, SvmFacilitator } from "../solana/kit.js";
import { type Seller, type SellerPool, sellerPool } from "../solana/seller.js";
import { PAYEE } from "./accounts.js";
import { startSolanaBeside } from "./solana-servers.js";
import { BASE_SEPOLIA_USDC, mintUsdc } from "./usdc.js";

export const BASE_SEPOLIA = "eip155:84532";
/** The price of the sellers' `echo`: 0.01 USDC. */
export const PRICE = 10_000n;

export interface SolanaSellers {
  kit: SolanaKit;
  facilitator: SvmFacilitator;
  /** The sellers' payee on Solana (PAYEE on Base Sepolia): its USDC token account exists. */
  solanaPayee: string;
  /** A seller offering `networks` in this order, asking `askedUsd` (the declared price by default). */
  seller(networks: string[], askedUsd?: string): Promise<Seller>;
  /** Every seller started, closed by close(); startWith makes a hostile one. */
  pool: SellerPool;
  /** What a Solana payer pays with: its key (SOLANA_PAYER_KEY) and the RPC of Solana devnet (the kit's). */
  payerEnv(key: string, rpcUrl?: string): Record<string, string>;
  /** A seller offering Solana devnet only, and a new payer holding 1 USDC there with its payerEnv. */
  solanaShop(): Promise<{ shop: Seller; payer: SolanaAccount; env: Record<string, string> }>;
  /** Nothing was paid: no payment reached `shop`, and `payer` still holds its `usdc` (1 USDC by default). */
  expectNothingPaid(shop: Seller, payer: SolanaAccount, usdc?: bigint): Promise<void>;
  /** A new EVM payer key holding 1 USDC on Base Sepolia. */
  evmPayer(): Promise<{ key: Hex; address: Hex }>;
  close(): Promise<void>;
}

export async function startSolanaSellers(): Promise<SolanaSellers> {
  const { rpcUrl, facilitatorUrl } = inject("chain");
  const { kit, facilitator, payTo: solanaPayee } = await startSolanaBeside();
  const pool = sellerPool(
    () => [facilitator.url, facilitatorUrl],
    (network) => (network === BASE_SEPOLIA ? PAYEE : solanaPayee),
  );
  const payerEnv = (key: string, rpcUrl = kit.rpcUrl) => ({
    SOLANA_PAYER_KEY: key,
    X402_RPC_URL_SOLANA_DEVNET: rpcUrl,
  });
  return {
    kit,
    facilitator,
    solanaPayee,
    seller: (networks, askedUsd) => pool.start(networks, askedUsd),
    pool,
    payerEnv,
    async solanaShop() {
      const shop = await pool.start([kit.network]);
      const payer = await kit.fundedPayer(1_000_000n);
      return { shop, payer, env: payerEnv(payer.secretKey) };
    },
    async expectNothingPaid(shop, payer, usdc = 1_000_000n) {
      expect(shop.requests.filter((q) => q.payment)).toHaveLength(0);
      expect(await kit.usdcBalance(payer.address)).toBe(usdc);
    },
    async evmPayer() {
      const key = generatePrivateKey();
      const address = privateKeyToAddress(key);
      await mintUsdc(rpcUrl, BASE_SEPOLIA_USDC, address, 1_000_000n);
      return { key, address };
    },
    async close() {
      await pool.close();
      await facilitator.stop();
      await kit.close();
    },
  };
}
