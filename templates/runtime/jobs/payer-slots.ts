/**
 * At most MAX_JOBS_PER_PAYER paid jobs of one payer run at once, across every instance sharing the
 * ledger. Why: a verification checks that the payer's balance covers one price, not the prices of
 * every job it has running, so a payer funded for one job could start many at once and pay for one
 * (the others' settlements fail: their work ran unpaid). The cap bounds that work; a payer past it
 * is refused (429, Retry-After), nothing run or charged, and the same payment may be sent again.
 * The slots are ledger reservations (`payer:<network>:<payer>:<n>`), leased like the payment's own
 * and freed with it. Part of your project: edit freely.
 */
import { PayerBusyError } from "../errors.js";
import { type Hold, holdReservation } from "../ledger/reservation.js";
import type { PaidPayment } from "../types.js";
import { ledgerStep, type PaidJob, refuse } from "./paid-steps.js";
import type { Refused } from "./outcome.js";

/** Seconds a payer at its cap is asked to wait: about a short job's length. */
export const PAYER_BUSY_RETRY_AFTER_SECONDS = 2;

/**
 * Takes one of the payer's slots for this job (after confirm(): a Solana payer is known by then);
 * `hold` (the payment's reservation) then frees it too. Refused when every slot is taken.
 */
export async function takePayerSlot(
  p: PaidJob,
  payment: PaidPayment,
  hold: Hold,
  leaseMs: number,
): Promise<Hold | Refused> {
  const max = p.s.config.payment?.maxJobsPerPayer ?? 0;
  if (max === 0 || payment.payer === "") return hold;
  const { ledger, metrics } = p.s;
  const payer = `payer:${p.s.gate.networkOf(payment)}:${payment.payer}`;
  // From a random slot on: a payer with a few jobs running finds a free one at the first try.
  const first = Math.floor(Math.random() * max);
  for (let i = 0; i < max; i++) {
    const key = `${payer}:${(first + i) % max}`;
    const now = Date.now();
    const claim = await ledgerStep(p, "reserve a payer slot", () => ledger.reserve(key, leaseMs));
    if (claim.status !== "reserved") continue;
    const options = { leaseEndsAt: now + leaseMs, logger: p.logger, metrics };
    return alsoFrees(hold, holdReservation(ledger, key, claim.token, options));
  }
  const message = `payer ${payment.payer} already has ${max} paid jobs running here (MAX_JOBS_PER_PAYER), so this one was not run; nothing was charged, and the same payment may be sent again once one of them has finished`;
  const refused = refuse(p, new PayerBusyError(message, { code: "payer_busy" }), false);
  return { ...refused, retryAfterSeconds: PAYER_BUSY_RETRY_AFTER_SECONDS };
}

/** The payment's hold, which frees the payer's slot whichever way it ends. */
function alsoFrees(hold: Hold, slot: Hold): Hold {
  return {
    async spent(ttlMs, completed) {
      await hold.spent(ttlMs, completed);
      await slot.release();
    },
    async held(ttlMs, completed) {
      await hold.held(ttlMs, completed); // throws: the caller's release() frees both
      await slot.release();
    },
    releaseAfter(handlerStopped) {
      hold.releaseAfter(handlerStopped);
      slot.releaseAfter(handlerStopped);
    },
    async release() {
      await hold.release();
      await slot.release();
    },
  };
}
