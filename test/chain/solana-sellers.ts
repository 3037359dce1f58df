// Sellers made of real x402 parts (test/solana/seller.ts) offering Solana devnet (a fresh Solana kit: LiteSVM
// behind a loopback JSON-RPC, and the reference facilitator with the SVM scheme) beside Base Sepolia (the
// shared anvil with Circle's USDC, the reference EVM facilitator): what the Solana payers' tests pay, shared by
// `create-agent call` on Solana (solana-call.test.ts) and the generated client on Solana (solana-client.test.ts).
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { inject } from "vitest";
import {
  type SolanaKit,
  startSolanaKit,
  startSvmFacilitator,
  type SvmFacilitator,
} from "../solana/kit.js";
import { type Seller, type SellerPool, sellerPool } from "../solana/seller.js";
import { PAYEE } from "./accounts.js";
import { BASE_SEPOLIA_USDC, ensureBaseSepoliaUsdc, mintUsdc } from "./usdc.js";

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
  /** A new EVM payer key holding 1 USDC on Base Sepolia. */
  evmPayer(): Promise<{ key: Hex; address: Hex }>;
  close(): Promise<void>;
}

export async function startSolanaSellers(): Promise<SolanaSellers> {
  const { rpcUrl, facilitatorUrl } = inject("chain");
  await ensureBaseSepoliaUsdc(rpcUrl);
  const kit = await startSolanaKit();
  const facilitator = await startSvmFacilitator(kit);
  const solanaPayee = await kit.payee();
  const pool = sellerPool(
    () => [facilitator.url, facilitatorUrl],
    (network) => (network === BASE_SEPOLIA ? PAYEE : solanaPayee),
  );
  return {
    kit,
    facilitator,
    solanaPayee,
    seller: (networks, askedUsd) => pool.start(networks, askedUsd),
    pool,
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
