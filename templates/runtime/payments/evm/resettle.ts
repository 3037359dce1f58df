/**
 * A settlement through a facilitator that was sent but not confirmed, with no RPC to ask the chain
 * (X402_RPC_URL): the facilitator is asked to settle the same payment again, as x402's own resource
 * server does after a `settlement_pending` answer (@x402/core's settleWithPendingRetry). Only an
 * identical retry asks (jobs/reconcile.ts): its caller waits, so a charge made now is for an answer
 * being delivered.
 *   - settled: confirmed, with the facilitator's transaction (the transfer it had sent, found by
 *     its pending-settlement store, or sent now because the first request never reached it);
 *   - the token says the authorization's nonce is used (`invalid_exact_evm_nonce_already_used`):
 *     confirmed. Without an RPC the facilitator's word is what this server goes by, as for its
 *     success answers; a used nonce is almost always our own transfer, whose answer was lost. Only
 *     a payer that used the same nonce with another authorization of its own, in the moment the
 *     answer was lost, gets this job unpaid: better than every buyer whose answer was lost being
 *     charged without it (set X402_RPC_URL to check on chain instead);
 *   - the transaction sent before is named as reverted: failed, nothing was charged;
 *   - anything else (still pending, no answer, the authorization expired): unknown, for next time.
 * Part of your project: edit freely.
 */
import type { Reconciled, SettleAgain } from "../scheme.js";
import { SettlementError, type Settler } from "../settlement.js";
import type { VerifiedPayment } from "../../types.js";

/** The reference facilitator's errorReason for an authorization the token says is used (or cancelled). */
const USED = "invalid_exact_evm_nonce_already_used";

export async function resettle(
  settler: Settler,
  again: SettleAgain,
  sentTx: string | undefined,
): Promise<Reconciled> {
  try {
    // A facilitator reads only these (facilitator.ts): the payment as sent and its requirement.
    const { transaction } = await settler.settle(again as VerifiedPayment);
    return { status: "confirmed", transaction };
  } catch (err) {
    if (!(err instanceof SettlementError)) throw err;
    if (!err.uncertain && err.reason === USED)
      return { status: "confirmed", transaction: sentTx ?? "" };
    if (!err.uncertain && sentTx !== undefined && err.transaction === sentTx)
      return { status: "failed", reason: `transaction ${sentTx} reverted` };
    return { status: "unknown", reason: `asked the facilitator again: ${err.message}` };
  }
}
