/**
 * How long a Solana payment lives, and so which jobs Solana can pay for: a transaction dies with
 * its blockhash, and it is settled only after the job has run. Part of your project: edit freely.
 */
import { SETTLEMENT_MARGIN_SECONDS } from "../settlement.js";

/**
 * Seconds a Solana payment is counted to live: its blockhash expires 150 blocks (about 60-90 s)
 * after that block, and a client fetching the latest finalized blockhash gets one already some 13 s
 * (32 slots) old, before it even sent the job. So 45 s, not 60: a job is payable on Solana when its
 * deadline plus SETTLEMENT_MARGIN_SECONDS is at most this far away, i.e. jobs due within 30 s (the
 * payers, create-agent call and generated clients, use the same 30 s).
 */
export const SOLANA_PAYMENT_LIFE_SECONDS = 45;

/** The furthest deadline (seconds from now) a Solana payment can pay for: its life less the settlement margin. */
export const SOLANA_PAYABLE_WITHIN_SECONDS =
  SOLANA_PAYMENT_LIFE_SECONDS - SETTLEMENT_MARGIN_SECONDS;

/** Why a job due at `deadline` cannot be paid on Solana, or undefined when it can. */
export function solanaDeadlineProblem(deadline: number, nowMs = Date.now()): string | undefined {
  const left = Math.ceil(deadline - nowMs / 1000);
  if (left <= SOLANA_PAYABLE_WITHIN_SECONDS) return undefined;
  return (
    `the job's deadline is ${left} s away, but a Solana payment lives about ${SOLANA_PAYMENT_LIFE_SECONDS} s (its blockhash) ` +
    `and is settled after the job: Solana pays only for jobs due within ${SOLANA_PAYABLE_WITHIN_SECONDS} s ` +
    `(deadline plus ${SETTLEMENT_MARGIN_SECONDS} s to settle)`
  );
}
