/**
 * Settlements that were sent but not confirmed: the job's answer is held in the ledger with what
 * is needed to ask the chain what became of the payment (ledger.ts, UnconfirmedSettlement), and
 * resolved by whoever claims it first, on any instance: an identical retry (stored-answer.ts), or
 * the reconciler every SETTLEMENT_RECONCILE_EVERY_MS (reconciler below, one instance acting per
 * entry through the ledger's lock).
 *   confirmed (the transaction's receipt, RECONCILE_CONFIRMATIONS deep): the answer is settled;
 *     an identical retry gets it with its receipt, charged once;
 *   failed (reverted, or the authorization expired unused): nothing was charged; an identical
 *     retry hears so, and that a new payment is needed;
 *   unknown: held again, for the next look.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import type { FoundResult, UnconfirmedSettlement } from "../ledger/ledger.js";
import { type KeptAnswer, keptRecord } from "../payments/kept-answer.js";
import type { Reconciled } from "../payments/scheme.js";
import type { Logger } from "../types.js";
import type { PaidServices } from "./paid-steps.js";

/** How often each instance looks at unconfirmed settlements. */
export const SETTLEMENT_RECONCILE_EVERY_MS = 15_000; // SETTLEMENT_RECONCILE_SECONDS
/** A resolved answer is kept at least this long, so the retry that asks for it hears it. */
const RESOLVED_KEPT_MS = 15 * 60_000;
/** How long one resolution may take (the chain's answers), and its claim on the entry. */
const RESOLVE_MS = 30_000;

/**
 * How long an unconfirmed settlement and its answer are kept: past the payment's life (until then
 * the transfer may still be mined, and the chain's answer may come later), and then long enough
 * for the retry that asks.
 */
export const unconfirmedTtlMs = (validBefore: number): number =>
  Math.max(0, validBefore * 1000 - Date.now()) + RESOLVED_KEPT_MS;

export type Resolution =
  | { status: "confirmed" | "failed"; answer: KeptAnswer }
  | { status: "unknown" | "busy"; reason: string };

/**
 * Asks the chain about one held unconfirmed settlement and records the answer, if we claim it.
 * `waiting`: its caller waits for the answer (an identical retry), so the settlement may be asked
 * for again (a facilitator without an RPC to check: payments/evm/resettle.ts); the reconciler
 * never charges for an answer nobody is there to receive.
 */
export async function resolveUnconfirmed(
  s: PaidServices,
  auth: string,
  found: FoundResult,
  logger: Logger,
  waiting = false,
): Promise<Resolution> {
  const u = found.unconfirmed!;
  const claim = await s.ledger.claimHeld(auth, RESOLVE_MS);
  if (claim.status !== "reserved") return { status: "busy", reason: "being checked" };
  const answer = await ask(s, auth, u, waiting);
  if (answer.status === "unknown") {
    await s.ledger.returnHeld(auth, claim.token);
    return answer;
  }
  const ttlMs = Math.max(u.validBefore * 1000 - Date.now(), RESOLVED_KEPT_MS);
  const kept = decided(found, answer);
  const { unconfirmed: _, ...result } = found;
  await s.ledger.markSettled(auth, ttlMs, { ...result, value: keptRecord(kept) });
  logger.info(`unconfirmed settlement ${answer.status}`, {
    tx: u.tx,
    reason: "reason" in answer ? answer.reason : undefined,
  });
  return { status: answer.status, answer: kept };
}

/** What the chain (or, for a caller `waiting`, the facilitator asked again) says of settlement `u`. */
async function ask(
  s: PaidServices,
  auth: string,
  u: UnconfirmedSettlement,
  waiting: boolean,
): Promise<Reconciled> {
  const { network, tx, validBefore, blockhash, payer, amount, payload, requirement } = u;
  const again =
    waiting && payload && requirement
      ? { x402Version: u.x402Version, network, payer, payload, requirement }
      : undefined;
  try {
    return await s.gate.reconcile(network, auth, tx, validBefore, blockhash, payer, amount, again);
  } catch (err) {
    return { status: "unknown", reason: err instanceof Error ? err.message : String(err) };
  }
}

/** The answer a decided settlement gives: the held result with its receipt, or that nothing was charged. */
function decided(
  found: FoundResult,
  answer: Exclude<Reconciled, { status: "unknown" }>,
): KeptAnswer {
  const u = found.unconfirmed!;
  if (answer.status === "failed")
    return {
      kind: "refused",
      error: new PaymentError(
        `payment settlement failed (${answer.reason}), so the result is withheld: nothing was charged; sign a new payment to run the job again`,
      ),
    };
  const { x402Version, network, payer } = u;
  const settlement = { x402Version, transaction: answer.transaction, network, payer };
  return { kind: "completed", body: found.value.body, settlement };
}

/**
 * Every SETTLEMENT_RECONCILE_EVERY_MS, resolves the ledger's unconfirmed settlements that are
 * due, each under the ledger's lock for it (one instance acts on an entry). Returns stop().
 */
export function startReconciler(
  s: PaidServices,
  logger: Logger,
  everyMs = SETTLEMENT_RECONCILE_EVERY_MS,
): () => void {
  let running = false;
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      for (const { auth, jobId } of await s.ledger.listUnconfirmed(100)) {
        await s.ledger.exclusive(`reconcile:${auth}`, RESOLVE_MS, async () => {
          const found = await s.ledger.getResult(auth);
          if (!found?.unconfirmed || found.settled) return s.ledger.forgetUnconfirmed(auth, jobId);
          const resolved = await resolveUnconfirmed(s, auth, found, logger);
          if (resolved.status === "confirmed" || resolved.status === "failed")
            await s.ledger.forgetUnconfirmed(auth, jobId);
        });
      }
    } catch (err) {
      logger.warn("could not reconcile unconfirmed settlements; trying again later", {
        error: String(err),
      });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
