/**
 * A verified Solana payment: the common head (../../types.ts's PaidPayment) and what the Solana
 * scheme keeps of the transaction. Part of your project: edit freely.
 */
import type { PaidPayment } from "../../types.js";

/**
 * A Solana payment that passed the offer's checks: a transaction the payer signed (a USDC transfer
 * to the payee's token account), its fee payer slot left for the facilitator or this server.
 */
export interface SolanaPayment extends PaidPayment {
  family: "svm";
  /** 2: PAYMENT-SIGNATURE (or MCP's `_meta`); 1: X-PAYMENT, on a network v1 knows by name. */
  x402Version: 1 | 2;
  scheme: "exact";
  /** The network's CAIP-2 id ("solana:..."). */
  network: string;
  /** Owner of the token account the USDC comes from (base58). */
  payer: string;
  /** Amount offered and accepted, USDC atomic units. */
  amount: string;
  /** The mint (base58). */
  asset: string;
  /** The transaction as sent (base64 wire format). */
  transaction: string;
  /** SHA-256 of the transaction's message, base64 (what @x402/svm keys duplicate settlements by). */
  messageHash: string;
  /** The transaction's recent blockhash (base58): it lands only while that is valid. */
  blockhash: string;
  /** Unix seconds the blockhash must outlive: the job's deadline plus SETTLEMENT_MARGIN_SECONDS. */
  landBy: number;
  /** Unix seconds after which the transaction can no longer land (its blockhash has expired). */
  validBefore: number;
  payload: Record<string, unknown>;
  requirement: Record<string, unknown>;
}
