/**
 * A paid job, as a list of named steps (runPaidJob and runPayment; the steps are paid-steps.ts's).
 * The guarantees, across every instance sharing the ledger:
 *   - one authorization runs at most one handler, abandoned handlers included;
 *   - it is charged at most once, and only for a result the caller receives (the answer is built
 *     and checked before settlement; a caller who left before settlement is not charged, its
 *     answer waits for an identical retry, which settles then; an identical retry of a settled job
 *     gets the same answer from the ledger: stored-answer.ts);
 *   - without a working ledger no paid job starts (503, nothing run or charged);
 *   - a settlement is written down before it is sent (stored-answer.ts's settling): a process killed
 *     before recording its outcome leaves the answer, which the next identical retry (or the job's
 *     next worker) gets once the chain shows the charge, instead of hearing "sign a new payment".
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import { authorizationTtlMs } from "../ledger/ledger.js";
import type { Hold } from "../ledger/reservation.js";
import type { SentPayment } from "../payments/scheme.js";
import type { Capability, Logger, PaidPayment } from "../types.js";
import { checkArrival, type HandlerRun, shuttingDown } from "./handler.js";
import { withPaymentIdentifier } from "./identifier.js";
import type { Completed, JobAnswer } from "./outcome.js";
import {
  answerOf,
  confirm,
  leaseMsFor,
  type PaidJob,
  type PaidJobCall,
  type PaidServices,
  paymentRequired,
  refuse,
  reserve,
  settle,
  startPaidHandler,
  verify,
} from "./paid-steps.js";
import { takePayerSlot } from "./payer-slots.js";
import type { JobRequest } from "./request.js";
import { type StoredAnswers, storedAnswers } from "./stored-answer.js";

export { LEDGER_RETRY_AFTER_SECONDS } from "./ledger-step.js";
export type { PaidJobCall, PaidServices, UncertainSettlement } from "./paid-steps.js";

export async function runPaidJob(
  s: PaidServices,
  call: PaidJobCall,
  job: JobRequest,
  capability: Capability,
  input: unknown,
  logger: Logger,
): Promise<JobAnswer> {
  const p: PaidJob = { s, call, job, capability, input, logger };
  // A payment carrying a payment-identifier id: a resend is answered from the ledger (identifier.ts).
  return withPaymentIdentifier(p, () => runPayment(p));
}

/** One paid attempt: verify, reserve, run, check, settle, cache. */
async function runPayment(p: PaidJob): Promise<JobAnswer> {
  const { s, call, job } = p;
  // 3. Payment: none sent -> an offer; a bad one -> refused, saying why; an identical retry -> its answer.
  const verified = await verifiedPayment(p);
  if ("kind" in verified) return verified;
  const { payment, stored } = verified;

  // A caller already gone gets no job run for it: nothing could be charged for it.
  if (call.callerGone?.aborted) return stored.gone(false);

  // One authorization, one job: claim it before anything runs.
  const reserved = await reserve(p, payment);
  if (reserved instanceof PaymentError) return refuse(p, reserved);
  let hold = reserved;

  let run: HandlerRun | undefined;
  try {
    // Refused (used by a settlement of this job that stopped before recording it: that answer).
    const refused = await confirm(p, payment);
    if (refused) return await stored.refused(s.gate.replayKey(payment), refused, true, owned);
    // One payer, at most MAX_JOBS_PER_PAYER jobs at once (payer-slots.ts): else refused, not run.
    const slot = await takePayerSlot(p, payment, hold, leaseMsFor(p, payment));
    if ("kind" in slot) return slot;
    hold = slot;

    checkArrival(job); // 4
    run = startPaidHandler(p, payment);
    const body = answerOf(p, await run.result); // 5, 7, 8; 6, before any charge
    if (s.drain.cut.aborted) throw shuttingDown();
    return await settleAnswer(p, stored, hold, payment, body);
  } finally {
    // Not spent: free the authorization once no handler runs on it (an abandoned one may run on
    // long after its 408). A shutdown that cut the job frees it now: the process, and the handler
    // with it, is about to end. Both are no-ops once spent.
    if (run?.isRunning() && !s.drain.cut.aborted) hold.releaseAfter(run.stopped);
    else await hold.release();
  }
}

/** The authorization is this request's already (reserved above). */
const owned = async () => true;

/** A payment verified for a new job, with its stored answers (stored-answer.ts). */
export interface VerifiedPayment {
  sent: SentPayment;
  payment: PaidPayment;
  stored: StoredAnswers;
}

/**
 * Step 3 for every paid entry (this file's and an async job's acceptance, queue/accept.ts): no
 * payment -> an offer saying how to pay; a bad one -> refused, saying why. An identical retry (same
 * payment, capability, input; either transport) of a settled job gets its answer, of a held one
 * settles it; the same payment and job_id with another request is refused. Looked up before
 * verification when the payment's key decodes (EVM): a retry past the time window a new job needs
 * still gets what it paid for.
 */
export async function verifiedPayment(p: PaidJob): Promise<VerifiedPayment | JobAnswer> {
  const sent = p.call.payment.sent();
  if (!sent) return paymentRequired(p);
  const stored = storedAnswers(p, sent);
  const decoded = p.s.gate.replayKeyOf(sent);
  const early = await stored.lookup(decoded);
  if (early) return early;
  const payment = await verify(p, sent);
  // Refused (used by a settlement of this job that stopped before recording it: that answer).
  if (payment instanceof PaymentError) return stored.refused(decoded, payment);
  const cached = await stored.lookup(p.s.gate.replayKey(payment), payment);
  return cached ?? { sent, payment, stored };
}

/**
 * The answer is ready: charge for it only while its caller is there to receive it (an async job's
 * worker, queue/work.ts, settles through here too: its caller is the stored answer).
 */
export async function settleAnswer(
  p: PaidJob,
  stored: StoredAnswers,
  hold: Hold,
  payment: PaidPayment,
  body: string,
): Promise<JobAnswer> {
  // The caller left: nothing is charged; the answer waits for an identical retry.
  if (p.call.callerGone?.aborted) return stored.keepForRetry(hold, payment, body);

  // Written down first: a process that dies before recording the outcome leaves the answer behind.
  const noted = await stored.settling(payment, body);
  try {
    const settled = await settle(p, payment);
    // Sent but not confirmed: held with the answer until the chain says (reconcile.ts).
    if (settled instanceof PaymentError && settled.code === "settlement_uncertain")
      return await stored.keepUnconfirmed(hold, payment, body, settled);
    if (settled instanceof PaymentError) {
      // Refused by the token: this authorization never runs a job again. Only an outage
      // (settlement_failed) frees it for another attempt.
      if (settled.code !== "settlement_failed") await hold.spent(authorizationTtlMs(payment));
      return refuse(p, settled);
    }
    const { transaction, network, payer } = settled;
    const answer: Completed = {
      kind: "completed",
      body,
      settlement: { x402Version: payment.x402Version, transaction, network, payer },
    };
    await hold.spent(authorizationTtlMs(payment), stored.result(answer));
    return answer;
  } finally {
    await noted(); // the outcome is recorded (or the ledger failed: logged, as before)
  }
}
