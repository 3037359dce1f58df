/**
 * Lost answers are recoverable: the x402 `payment-identifier` extension, as its spec's "Recovering a
 * Lost Response" asks. A PaymentPayload may carry an id (payments/payment-identifier.ts); then, across
 * every instance sharing the ledger:
 *   - the id is looked up BEFORE the payment is verified: a resend of a settled payment, or one sent
 *     when its authorization is about to expire, would no longer pass verification;
 *   - a completed answer is kept under the id, with its settlement's receipt, for the
 *     payment's remaining life, bound to the exact payload (a hash of it as sent) and to the request it
 *     paid for (capability and input, over either transport: POST /execute or MCP);
 *   - the same id, payload and request again: that answer, byte for byte (naming the resend's
 *     job_id, if it has another); nothing runs, nothing is charged;
 *   - the same id with another payload or another request: refused (409), nothing runs;
 *   - while the first request with the id still runs: refused "in use" (no new offer, retry after
 *     1 s), nothing runs: the same request sent again shortly gets the answer;
 *   - an attempt that did not complete (refused, failed, timed out) leaves the id free again;
 *   - an async job claims the id when it is accepted (queue/accept.ts), and its worker ends the claim
 *     with the job's answer (queue/work.ts): the same rules, across the 202.
 * The ledger keeps it under the key `pid:<id>` with its usual primitives: reserve() while the first
 * request runs (its lease renewed as an authorization's is), markSettled() with the answer once it
 * completed. Part of your project: edit freely.
 */
import { PaymentConflictError, PaymentError } from "../errors.js";
import type { FoundResult } from "../ledger/ledger.js";
import { holdReservation } from "../ledger/reservation.js";
import { keptAnswer, keptRecord, type KeptAnswer } from "../payments/kept-answer.js";
import { paymentIdOf } from "../payments/payment-identifier.js";
import type { SentPayment } from "../payments/scheme.js";
import { decodeSentJson } from "../payments/x402.js";
import { paymentHash, requestHash } from "./identity.js";
import { LEASE_MARGIN_MS } from "./ledger-step.js";
import { fromKept, type JobAnswer } from "./outcome.js";
import { ledgerStep, type PaidJob, refuse } from "./paid-steps.js";
import type { JobRequest } from "./request.js";

/** The jobId an id's answer is kept with in the ledger (under the key `pid:<id>`). */
const ANSWER_SLOT = "answer";
/**
 * The jobId of an id whose payment may have been charged (its settlement unconfirmed): bound to its
 * payment and request (another is 409), the identical resend goes on to the payment's own answer.
 */
const UNCONFIRMED_SLOT = "unconfirmed";
/** A payment with no validBefore (Solana) keeps its id as long as the ledger remembers the transaction. */
const NO_EXPIRY_MEMORY_MS = 180_000;

/** What an id's answer is bound to: the payload exactly as sent, and the request it pays for. */
interface Fingerprint {
  /** The PaymentPayload as sent (identity.ts's paymentHash). */
  payment: string;
  /** sha256 of the request it paid for: capability and input (not the job_id nor the deadline). */
  request: string;
}

/**
 * A payment's id claimed for one job (the ledger's reservation of `pid:<id>`): what ends it, once
 * the job has its answer, and what the answer is kept with. An async job carries it to its worker.
 */
export interface PaymentIdClaim extends Fingerprint {
  key: string;
  token: string;
  /** Its first lease ends then (ms since the epoch). */
  leaseEndsAt: number;
  /** How long the answer is kept once completed: the payment's remaining life at the claim. */
  keepUntil: number;
}

/**
 * Runs `attempt` (the paid job) under the payment's id, if it carries one; answers a resend from the
 * ledger instead. Without an id, just runs `attempt`.
 */
export async function withPaymentIdentifier(
  p: PaidJob,
  attempt: () => Promise<JobAnswer>,
): Promise<JobAnswer> {
  const claim = await claimPaymentId(p);
  if (claim === undefined) return attempt();
  if ("kind" in claim) return claim;
  const hold = holdReservation(p.s.ledger, claim.key, claim.token, {
    leaseEndsAt: claim.leaseEndsAt,
    logger: p.logger,
    metrics: p.s.metrics,
  });
  let answer: JobAnswer | undefined;
  try {
    answer = await attempt();
    return answer;
  } finally {
    if (answer?.kind === "completed") await hold.spent(keptMs(claim), keptUnderId(claim, answer));
    else if (maybeCharged(answer)) await hold.spent(keptMs(claim), unconfirmedUnderId(claim));
    else await hold.release(); // nothing completed or charged: the id may pay for another attempt
  }
}

/**
 * The payment's id claimed for this job, for as long as the job and its settlement may take (an
 * async job's worker ends it: endPaymentId); undefined when the payment carries none; the answer
 * instead when a resend is answered from the ledger or the id is refused.
 */
export async function claimPaymentId(p: PaidJob): Promise<PaymentIdClaim | JobAnswer | undefined> {
  const sent = p.call.payment.sent();
  const payload = sent && decodedPayload(sent);
  const found = paymentIdOf(payload);
  if (!sent || found.kind === "none") return undefined;
  const answers = idAnswers(p, sent);
  if (found.kind === "invalid") return answers.invalid(found.problem);

  const { id } = found;
  const key = `pid:${id}`;
  const mine = fingerprintOf(sent, p.job);
  const read = () => ledgerStep(p, "read a payment id's answer", () => p.s.ledger.getResult(key));
  const stored = await read();
  if (stored) return answers.stored(id, stored, mine);

  const now = Date.now();
  const settleMs = (p.s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
  // As long as the job and its settlement may take (renewed while they run), never past the payment's life.
  const leaseMs = Math.min(
    Math.max(0, p.job.deadline * 1000 - now) + settleMs + LEASE_MARGIN_MS,
    lifeMs(payload),
  );
  const claim = await ledgerStep(p, "reserve a payment id", () => p.s.ledger.reserve(key, leaseMs));
  if (claim.status === "in-flight" || claim.status === "held") return answers.inUse(id);
  if (claim.status === "settled") {
    // Completed since the read above, or completed earlier and its answer is no longer kept.
    const late = await read();
    return late ? answers.stored(id, late, mine) : answers.forgotten(id);
  }
  const keepUntil = now + lifeMs(payload);
  return { key, token: claim.token, leaseEndsAt: now + leaseMs, keepUntil, ...mine };
}

/** An async job's id claim ends with its answer: kept under the id when completed, else freed. */
export async function endPaymentId(
  ledger: PaidJob["s"]["ledger"],
  claim: PaymentIdClaim,
  answer: JobAnswer,
): Promise<void> {
  if (answer.kind === "completed")
    await ledger.markSettled(claim.key, keptMs(claim), keptUnderId(claim, answer));
  else if (maybeCharged(answer))
    await ledger.markSettled(claim.key, keptMs(claim), unconfirmedUnderId(claim));
  else await ledger.release(claim.key, claim.token);
}

/** An answer whose payment may have been charged: its settlement is unconfirmed. */
const maybeCharged = (answer: JobAnswer | undefined): boolean =>
  answer?.kind === "refused" && answer.error.code === "settlement_uncertain";

const unconfirmedUnderId = (claim: PaymentIdClaim) =>
  underId(claim, UNCONFIRMED_SLOT, {
    kind: "refused",
    error: new PaymentError("settlement unconfirmed"),
  });

const keptMs = (claim: PaymentIdClaim): number => Math.max(1000, claim.keepUntil - Date.now());

const keptUnderId = (claim: PaymentIdClaim, answer: JobAnswer & { kind: "completed" }) =>
  underId(claim, ANSWER_SLOT, answer);

/** What the ledger keeps under a claimed id: `answer` in `slot`, with the claim's fingerprint. */
const underId = (claim: PaymentIdClaim, slot: string, answer: KeptAnswer) => ({
  jobId: slot,
  value: keptRecord(answer),
  payment: claim.payment,
  request: claim.request,
});

/** The answers that end a request here, each counted and logged. */
function idAnswers(p: PaidJob, sent: SentPayment) {
  const where = `${sent.name}${"value" in sent ? " header" : ""}`;
  const conflict = (message: string): JobAnswer =>
    refuse(p, new PaymentConflictError(message, { code: "payment_id_conflict" }), false);
  return {
    invalid(problem: string): JobAnswer {
      const message = `${where}: extensions["payment-identifier"] ${problem}; nothing was run or charged`;
      return refuse(p, new PaymentError(message, { code: "payment_id_invalid" }), true);
    },
    /** The answer kept under the id; undefined: the identical request of an unconfirmed one, go on. */
    stored(id: string, stored: FoundResult, mine: Fingerprint): JobAnswer | undefined {
      if (stored.payment !== mine.payment)
        return conflict(
          `payment id "${id}" was already used with another payment (payment-identifier binds an id to one exact PaymentPayload); nothing was run or charged: give a new payment its own id`,
        );
      if (stored.request !== mine.request)
        return conflict(
          `payment id "${id}" already paid for another request (its capability or input differ); nothing was run or charged`,
        );
      if (stored.jobId === UNCONFIRMED_SLOT) return undefined; // the payment's own answer decides
      p.logger.info("payment-identifier resend: returning the answer kept under its id");
      return fromKept(keptAnswer(stored.value), p.job.jobId);
    },
    forgotten(id: string): JobAnswer {
      return conflict(
        `payment id "${id}" was already used, and the answer it paid for is no longer kept here; nothing was run or charged`,
      );
    },
    inUse(id: string): JobAnswer {
      const message = `payment id "${id}" is in use by a request that is still running; this one was not run: send it again (the same payment and id) in a moment to get that request's answer`;
      return refuse(p, new PaymentError(message, { code: "payment_id_in_use" }), false);
    },
  };
}

/** The fingerprint of this request and its payment. */
function fingerprintOf(sent: SentPayment, job: JobRequest): Fingerprint {
  return {
    payment: paymentHash(sent),
    request: requestHash(job.capability, job.input),
  };
}

/** The PaymentPayload object sent, or undefined when it cannot be read (verification then says why). */
function decodedPayload(sent: SentPayment): unknown {
  if ("object" in sent) return sent.object;
  const decoded = decodeSentJson(sent);
  return decoded.ok ? decoded.value : undefined;
}

/** How long the id's answer is kept: until the payment's validBefore (EVM), at least 1 s. */
function lifeMs(payload: unknown): number {
  const p = payload as { payload?: { authorization?: { validBefore?: unknown } } } | undefined;
  const validBefore = Number(p?.payload?.authorization?.validBefore);
  if (!Number.isFinite(validBefore)) return NO_EXPIRY_MEMORY_MS;
  return Math.max(1000, validBefore * 1000 - Date.now());
}
