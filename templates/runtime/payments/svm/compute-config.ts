/**
 * The compute-budget caps of Solana payments, from the environment: what a payment's transaction may
 * ask this server's (or the facilitator's) fee payer to pay for compute (svm/transaction.ts checks
 * them). Part of your project: edit freely.
 *   SOLANA_MAX_COMPUTE_UNITS                its SetComputeUnitLimit (default 40,000);
 *   SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS   its SetComputeUnitPrice, micro-lamports per unit (default 10,000).
 * The official x402 client asks 20,000 units at 1 micro-lamport: the fee payer pays 5,000 lamports per
 * signature (two) plus units x price / 1,000,000, i.e. 10,001 lamports. At the default caps the most a
 * payment can cost it is 10,000 + 400 = 10,400 lamports (0.0000104 SOL); without caps, 1,400,000 units
 * at 5,000,000 micro-lamports cost 7,010,000.
 */
import type { Reader } from "../../ops/settings.js";
import {
  type ComputeBudgetCaps,
  DEFAULT_MAX_COMPUTE_UNITS,
  DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS,
  RUNTIME_MAX_COMPUTE_UNITS,
} from "./transaction.js";

export function readComputeBudgetCaps(read: Reader): ComputeBudgetCaps {
  return {
    maxComputeUnits: read.count(undefined, "", "SOLANA_MAX_COMPUTE_UNITS", {
      min: 1,
      max: RUNTIME_MAX_COMPUTE_UNITS,
      fallback: DEFAULT_MAX_COMPUTE_UNITS,
      hint: `set it to the most compute units a Solana payment may ask for, a whole number from 1 to ${RUNTIME_MAX_COMPUTE_UNITS} (default ${DEFAULT_MAX_COMPUTE_UNITS}; the official x402 client asks 20000)`,
    }),
    maxPriorityFeeMicroLamports: read.count(
      undefined,
      "",
      "SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS",
      {
        min: 0,
        fallback: DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS,
        hint: `set it to the highest compute unit price a Solana payment may set, in micro-lamports, a whole number (default ${DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS}; the official x402 client sets 1)`,
      },
    ),
  };
}
