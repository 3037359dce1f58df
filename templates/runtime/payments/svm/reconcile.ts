/**
 * What became of a Solana settlement that was sent but not confirmed in time (jobs/reconcile.ts
 * asks, svm/scheme.ts answers): the network's RPC is asked for the transaction signature's status
 * (getSignatureStatuses, searching the transaction history).
 *   confirmed: the signature's status is at least SOLANA_CONFIRMATION ("confirmed": a supermajority
 *     of the stake voted on its block, the depth the official @x402/svm settlement itself waits for,
 *     so a reconciled receipt is as deep as one given at once) and carries no error;
 *   failed: its status, that deep, carries an error (the transfer did not happen; the fee payer paid
 *     the fee), or it is unknown while its blockhash has expired: it can never land (the blockhash is
 *     checked first, so a transaction that landed before it expired is found by the status asked next);
 *   unknown: anything else (not seen yet, seen but not that deep, no signature, the RPC silent).
 * Part of your project: edit freely.
 */
import { rpcCall } from "../json-rpc.js";
import type { Reconciled } from "../scheme.js";
import type { BlockhashClock } from "./blockhash.js";

/** The commitment a reconciled settlement must reach: "confirmed" (or "finalized"). */
export const SOLANA_CONFIRMATION = "confirmed";
const DEEP_ENOUGH = new Set([SOLANA_CONFIRMATION, "finalized"]);

interface SignatureStatus {
  err?: unknown;
  confirmationStatus?: string | null;
}

/**
 * The settlement's fate. `signature`: the transaction's (undefined when not known: a facilitator
 * that answered none); `blockhash`: the transaction's; `validBefore`: Unix seconds past any
 * blockhash's life (the fallback when the blockhash was not kept).
 */
export async function solanaSettlementState(
  rpcUrl: string | undefined,
  clock: BlockhashClock | undefined,
  settlement: { signature?: string; blockhash?: string; validBefore: number },
  timeoutMs = 5_000,
): Promise<Reconciled> {
  const { signature, blockhash, validBefore } = settlement;
  if (signature === undefined || signature === "")
    return {
      status: "unknown",
      reason: "the transaction's signature is not known (the settlement gave none)",
    };
  if (rpcUrl === undefined) return { status: "unknown", reason: "no RPC to check it" };
  // First whether it can still land: then a status not found means it never will.
  const expired =
    blockhash !== undefined && clock
      ? (await clock.valid(blockhash)) === false
      : Date.now() / 1000 > validBefore;
  const answer = (await rpcCall(
    rpcUrl,
    "getSignatureStatuses",
    [[signature], { searchTransactionHistory: true }],
    timeoutMs,
  )) as { value?: Array<SignatureStatus | null> } | null;
  if (!Array.isArray(answer?.value))
    throw new Error("getSignatureStatuses answered an unexpected shape");
  const status = answer.value[0];
  if (status && DEEP_ENOUGH.has(String(status.confirmationStatus))) {
    if (status.err === null || status.err === undefined)
      return { status: "confirmed", transaction: signature };
    return {
      status: "failed",
      reason: `transaction ${signature} failed on Solana: ${JSON.stringify(status.err)}`,
    };
  }
  if (!status && expired)
    return {
      status: "failed",
      reason: `transaction ${signature} did not land on Solana and its blockhash has expired, so it never can`,
    };
  return {
    status: "unknown",
    reason: status
      ? `transaction ${signature} is ${String(status.confirmationStatus)}, not yet ${SOLANA_CONFIRMATION}`
      : `transaction ${signature} has not landed yet`,
  };
}
