/**
 * What became of a Solana settlement that was sent but not confirmed in time (jobs/reconcile.ts
 * asks, svm/scheme.ts answers), asked of the network's RPC: the transaction signature's status
 * (getSignatureStatuses, searching the transaction history) or, when the signature is not known
 * (a facilitator that did not answer in time, or named none), the transaction found by its message
 * among the payer's recent transactions (svm/landed.ts).
 *   confirmed: it landed at least SOLANA_CONFIRMATION deep ("confirmed": a supermajority of the
 *     stake voted on its block, the depth the official @x402/svm settlement itself waits for, so a
 *     reconciled receipt is as deep as one given at once) and carries no error;
 *   failed: it landed that deep with an error (the transfer did not happen; the fee payer paid the
 *     fee), or it is not found while its blockhash has expired: it can never land (the blockhash is
 *     checked first, so a transaction that landed before it expired is found by the look after,
 *     which a search asks of a node that has seen the slot the expiry was seen at);
 *   unknown: anything else (not seen yet, seen but not that deep, neither signature nor search, a
 *     search cut short by its bounds, the RPC silent).
 * Part of your project: edit freely.
 */
import { rpcCall } from "../json-rpc.js";
import type { Reconciled } from "../scheme.js";
import type { LandedFinder, LandedQuery } from "./landed.js";

/** The commitment a reconciled settlement must reach: "confirmed" (or "finalized"). */
export const SOLANA_CONFIRMATION = "confirmed";
const DEEP_ENOUGH = new Set([SOLANA_CONFIRMATION, "finalized"]);

interface SignatureStatus {
  err?: unknown;
  confirmationStatus?: string | null;
}

/** An unconfirmed Solana settlement, as kept with its held answer. */
export interface SolanaSettlement {
  /** The transaction's signature; undefined when not known (a facilitator that answered none). */
  signature?: string;
  /** The transaction's blockhash. */
  blockhash?: string;
  /** Unix seconds past any blockhash's life (the fallback when the blockhash was not kept). */
  validBefore: number;
  /** Without a signature: what finds the transaction by its message (undefined: not searched). */
  search?: LandedQuery;
}

/**
 * The search for a transaction whose signature is not known, by the message hash its replay key
 * ends with (after `prefix`, svm/scheme.ts replayKey()), among the payer's transactions since
 * `sentAfter` (Unix seconds); undefined without a payer or such a key.
 */
export function messageSearch(
  auth: string,
  prefix: string,
  payer: string | undefined,
  sentAfter: number,
): LandedQuery | undefined {
  if (!payer || !auth.startsWith(prefix) || auth.length === prefix.length) return undefined;
  return { address: payer, messageHash: auth.slice(prefix.length), from: sentAfter };
}

/** The settlement's fate; `finder` searches for a transaction whose signature is not known. */
export async function solanaSettlementState(
  rpcUrl: string | undefined,
  settlement: SolanaSettlement,
  finder?: LandedFinder,
  timeoutMs = 5_000,
): Promise<Reconciled> {
  const { signature, blockhash, validBefore, search } = settlement;
  const known = signature !== undefined && signature !== "";
  if (!known && (search === undefined || finder === undefined))
    return {
      status: "unknown",
      reason: "the transaction's signature is not known (the settlement gave none)",
    };
  if (rpcUrl === undefined) return { status: "unknown", reason: "no RPC to check it" };
  // First whether it can still land: then a transaction not found never will.
  const { expired, slot } = await expiry(rpcUrl, blockhash, validBefore, timeoutMs);
  if (known) return byStatus(rpcUrl, signature, expired, timeoutMs);
  return bySearch(finder!, expired ? { ...search!, minContextSlot: slot } : search!, expired);
}

/** Whether the transaction's blockhash has expired ("confirmed"), and the slot a node said so at. */
async function expiry(
  rpcUrl: string,
  blockhash: string | undefined,
  validBefore: number,
  timeoutMs: number,
): Promise<{ expired: boolean; slot?: number }> {
  if (blockhash === undefined) return { expired: Date.now() / 1000 > validBefore };
  const params = [blockhash, { commitment: SOLANA_CONFIRMATION }];
  try {
    const answer = (await rpcCall(rpcUrl, "isBlockhashValid", params, timeoutMs)) as {
      context?: { slot?: unknown };
      value?: unknown;
    } | null;
    const slot = answer?.context?.slot;
    return { expired: answer?.value === false, ...(typeof slot === "number" && { slot }) };
  } catch {
    return { expired: false }; // not known: nothing is decided by it
  }
}

const failedOnChain = (signature: string, err: unknown): Reconciled => ({
  status: "failed",
  reason: `transaction ${signature} failed on Solana: ${JSON.stringify(err)}`,
});

/** The fate of a transaction whose signature is known: its status. */
async function byStatus(
  rpcUrl: string,
  signature: string,
  expired: boolean,
  timeoutMs: number,
): Promise<Reconciled> {
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
    return failedOnChain(signature, status.err);
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

/** The fate of a transaction whose signature is not known: found by its message, or not. */
async function bySearch(
  finder: LandedFinder,
  search: LandedQuery,
  expired: boolean,
): Promise<Reconciled> {
  const found = await finder.find(search);
  if (found.status === "landed")
    return found.err === null || found.err === undefined
      ? { status: "confirmed", transaction: found.signature }
      : failedOnChain(found.signature, found.err);
  const what = `the payment's transaction (its signature not known; looked for among ${search.address}'s transactions)`;
  if (found.status === "absent" && expired)
    return {
      status: "failed",
      reason: `${what} did not land on Solana and its blockhash has expired, so it never can`,
    };
  return {
    status: "unknown",
    reason:
      found.status === "absent"
        ? `${what} has not landed yet`
        : `${what} is not found yet: ${found.reason}`,
  };
}
