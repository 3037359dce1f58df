/**
 * A paid job's stored answers (runPaidJob's steps for them, paid.ts). The ledger keeps one answer
 * per authorization, with the identity of its payment and request (identity.ts). An identical
 * retry is the same payment, capability and input, over either transport (POST /execute or an MCP
 * tools/call), and the same job_id unless one side's was derived by its transport (identity.ts's
 * sameJob: an MCP call naming none); the answer then names the retry's job_id:
 *   - settled (charged): an identical retry gets it again, with its receipt, no second charge;
 *   - held (not charged): the job succeeded but its caller had left before settlement, so nothing
 *     was charged; the first identical retry settles it then (one retry only: it claims it in the
 *     ledger first) and gets it without the handler running again;
 *   - the same payment and job_id with another capability or input: refused, nothing run or charged;
 *   - settling: a settlement is written down first, with its answer (settling.ts).
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import {
  authorizationTtlMs,
  validBefore,
  type FoundResult,
  type JobResult,
} from "../ledger/ledger.js";
import type { Hold } from "../ledger/reservation.js";
import { keptAnswer, keptRecord, type KeptAnswer } from "../payments/kept-answer.js";
import type { SentPayment } from "../payments/scheme.js";
import type { PaidPayment } from "../types.js";
import { paymentHash, requestHash, sameJob } from "./identity.js";
import { notOurs } from "./ledger-step.js";
import { withJobId } from "./result.js";
import { type CallerGone, fromKept, type JobAnswer } from "./outcome.js";
import {
  ledgerStep,
  type PaidJob,
  refuse,
  settle,
  type UncertainSettlement,
  verify,
} from "./paid-steps.js";
import { resolveUnconfirmed, unconfirmedTtlMs } from "./reconcile.js";
import { settlingNotes } from "./settling.js";

/** Added to a held answer's settlement claim beyond the settlement timeout. */
const CLAIM_MARGIN_MS = 10_000;

/** The answer for a caller that left before settlement (nobody reads it: for the log and metrics). */
function callerGone(kept: boolean): CallerGone {
  const message = kept
    ? "the caller left before the payment was settled: nothing was charged; the identical request with the same payment gets the answer"
    : "the caller left before the payment was settled: nothing was charged";
  return { kind: "caller_gone", message };
}

export type StoredAnswers = ReturnType<typeof storedAnswers>;

export function storedAnswers(p: PaidJob, sent: SentPayment) {
  const { s, call, job, logger } = p;
  const { ledger, metrics } = s;
  let request: string | undefined;
  let payment: string | undefined;
  const requestId = () => (request ??= requestHash(p.capability.name, p.input));
  const paymentId = () => (payment ??= paymentHash(sent));
  let lookedUp: string | undefined;

  /** A ledger write after the caller's fate is decided: failures are logged and counted, never thrown. */
  const quietly = async (operation: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      metrics.ledgerError(operation);
      logger.error(`payment ledger: could not ${operation}`, { error: String(err) });
    }
  };

  /** The stored answer for this job, with what identifies its request and payment. */
  const result = (answer: KeptAnswer): JobResult => ({
    jobId: job.jobId,
    value: keptRecord(answer),
    request: requestId(),
    payment: paymentId(),
  });

  const replay = (found: FoundResult): JobAnswer => {
    logger.info("identical retry of a paid job: returning the cached result");
    return fromKept(keptAnswer(found.value), job.jobId);
  };

  /** The answer another request for this payment and request settled under `auth` meanwhile, if any. */
  const settledMeanwhile = async (auth: string): Promise<JobAnswer | undefined> => {
    const again = await ledgerStep(p, "read the result cache", () => ledger.getResult(auth));
    const ours = again?.payment === paymentId() && again.request === requestId();
    return again?.settled && ours ? replay(again) : undefined;
  };

  /** What is held for an unconfirmed settlement of `payment` (reconcile.ts resolves it). */
  const unconfirmed = (payment: PaidPayment, settled: { broadcastTx?: string }, body: string) => ({
    ...result({ kind: "completed", body }),
    unconfirmed: {
      ...(settled.broadcastTx && { tx: settled.broadcastTx }),
      x402Version: payment.x402Version,
      network: payment.network,
      payer: payment.payer,
      validBefore: validBefore(payment),
      amount: payment.amount,
      ...(payment.blockhash !== undefined && { blockhash: payment.blockhash }),
      payload: payment.payload,
      requirement: payment.requirement,
    },
  });

  /** An identical retry finds its settlement unconfirmed: ask the chain (or facilitator) now. */
  async function reconcileHeld(auth: string, found: FoundResult): Promise<JobAnswer> {
    const waiting = !call.callerGone?.aborted;
    const resolved = await ledgerStep(p, "check an unconfirmed settlement", () =>
      resolveUnconfirmed(s, auth, found, logger, waiting),
    );
    if (resolved.status === "confirmed" || resolved.status === "failed")
      return fromKept(resolved.answer, job.jobId);
    return refuse(
      p,
      new PaymentError(
        `payment settlement is still unconfirmed (${"reason" in resolved ? resolved.reason : "being checked"}), so the result is withheld for now: nothing more will be charged; send the identical request again later to get it once confirmed (or to hear that nothing was charged)`,
        { code: "settlement_uncertain" },
      ),
      false,
    );
  }

  /**
   * The settlement was sent but not confirmed: the answer is held until the chain says (never freed:
   * the payment may be charged). Refuses the payment, saying so, or that the answer could not be kept.
   */
  async function keepUnconfirmed(
    hold: Pick<Hold, "held" | "spent">,
    payment: PaidPayment,
    body: string,
    settled: UncertainSettlement,
  ): Promise<JobAnswer> {
    try {
      await hold.held(unconfirmedTtlMs(validBefore(payment)), unconfirmed(payment, settled, body));
    } catch (err) {
      metrics.ledgerError("hold an unconfirmed settlement");
      logger.error("payment ledger: could not keep an unconfirmed settlement's answer", {
        error: String(err),
      });
      await hold.spent(authorizationTtlMs(payment)); // maybe charged: never run again
      return refuse(p, unkept(settled), false);
    }
    return refuse(p, settled, false);
  }

  /** A held answer's authorization, as a Hold (its claim taken): kept again, or spent. */
  const heldAgain = (auth: string): Pick<Hold, "held" | "spent"> => ({
    held: (ttlMs, kept) => ledger.hold(auth, ttlMs, kept),
    spent: (ttlMs) =>
      quietly("mark the authorization spent", () => ledger.markSettled(auth, ttlMs)),
  });

  /** Settles a held answer for this identical retry, then answers with it. */
  async function settleHeld(
    auth: string,
    found: FoundResult,
    verified?: PaidPayment,
  ): Promise<JobAnswer | undefined> {
    // Only the settlement is still to come: the payment must stay valid for it, not for a new job.
    const payment = verified ?? (await verify(p, sent, Date.now() / 1000));
    if (payment instanceof PaymentError) return refuse(p, payment);
    if (s.gate.replayKey(payment) !== auth) return undefined; // not the payment it decoded as
    const settleMs = (s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
    const leaseMs = Math.min(settleMs + CLAIM_MARGIN_MS, authorizationTtlMs(payment));
    const claim = await ledgerStep(p, "claim a held result", () => ledger.claimHeld(auth, leaseMs));
    if (claim.status !== "reserved") {
      // Another identical retry settled it meanwhile: its answer.
      const again = await settledMeanwhile(auth);
      return again ?? refuse(p, notOurs(claim.status === "held" ? "in-flight" : claim.status));
    }
    const unclaim = () =>
      quietly("return a held result", () => ledger.returnHeld(auth, claim.token));
    if (call.callerGone?.aborted) {
      await unclaim();
      return callerGone(true);
    }
    const settled = await settle(p, payment);
    if (settled instanceof PaymentError) {
      // An outage: held again for another retry. Unconfirmed: held until the chain says. Refused:
      // never used again.
      if (settled.code === "settlement_uncertain")
        return keepUnconfirmed(heldAgain(auth), payment, found.value.body, settled);
      if (settled.code === "settlement_failed") await unclaim();
      else await heldAgain(auth).spent(authorizationTtlMs(payment));
      return refuse(p, settled);
    }
    const { transaction, network, payer } = settled;
    const answer = {
      kind: "completed" as const,
      body: withJobId(found.value.body, job.jobId),
      settlement: { x402Version: payment.x402Version, transaction, network, payer },
    };
    await quietly("mark the authorization spent", () =>
      ledger.markSettled(auth, authorizationTtlMs(payment), result(answer)),
    );
    logger.info("held answer settled for an identical retry: charged now, handler not run again");
    return answer;
  }

  return {
    result,
    /** The answer for a caller who left (`kept`: its job's answer waits for an identical retry). */
    gone: callerGone,

    // A settlement written down before it is sent, and the answer it leaves (settling.ts).
    ...settlingNotes(p, {
      paymentId,
      requestId,
      settledMeanwhile,
      reconcileHeld,
      unconfirmed,
      quietly,
    }),

    /**
     * The answer stored under `auth` for this job, if this payment and request made it: replayed
     * (settled), settled now (held), or refused (another request). Undefined: none, run the job.
     * `verified`: the payment, once verified (otherwise `auth` was only decoded).
     */
    async lookup(auth: string | undefined, verified?: PaidPayment): Promise<JobAnswer | undefined> {
      if (auth === undefined || auth === lookedUp) return undefined;
      lookedUp = auth;
      const found = await ledgerStep(p, "read the result cache", () => ledger.getResult(auth));
      // None, or another payment's (the same authorization, sent otherwise): the reservation decides.
      if (!found || found.payment !== paymentId()) return undefined;
      if (found.request !== requestId()) {
        // Another request under another job_id: the reservation says why it cannot pay for it.
        if (found.jobId !== job.jobId) return undefined;
        return refuse(
          p,
          new PaymentError(
            `job_id ${JSON.stringify(job.jobId)} was already used with this payment for another request (another capability or input), so nothing was run or charged: send the original request again for its answer, or pay for this one with a new payment`,
            { code: "job_id_reused" },
          ),
          false,
        );
      }
      // The identical request under another job_id the caller chose: another job, which this
      // payment cannot pay for (the reservation says so); a transport's derived id names none.
      if (!sameJob(found.jobId, job.jobId)) return undefined;
      if (found.settled) return replay(found);
      if (found.unconfirmed) return reconcileHeld(auth, found);
      return settleHeld(auth, found, verified);
    },

    keepUnconfirmed,

    /** The caller left before settlement: charge nothing, keep the answer for an identical retry. */
    async keepForRetry(hold: Hold, payment: PaidPayment, body: string): Promise<CallerGone> {
      let kept = false;
      try {
        await hold.held(authorizationTtlMs(payment), result({ kind: "completed", body }));
        kept = true;
      } catch (err) {
        metrics.ledgerError("hold an answer");
        logger.error("payment ledger: could not keep the answer of a caller who left", {
          error: String(err),
        });
      }
      logger.warn("caller gone before settlement: not charged", { kept_for_retry: kept });
      return callerGone(kept);
    },
  };
}

/**
 * An unconfirmed settlement whose answer the ledger could not keep: said plainly, with nothing to
 * wait for (no "settlement is unconfirmed", no Retry-After: payers would resend for an answer that
 * is gone), and that the payment may have been charged.
 */
const unkept = (settled: UncertainSettlement): PaymentError =>
  new PaymentError(
    `payment settlement was sent but not confirmed${settled.broadcastTx ? ` (transaction ${settled.broadcastTx})` : ""}, and its result could not be kept (the payment ledger failed): it may have been charged, so check the payer's USDC transfers before paying for this job again; this authorization will not be used again`,
    { code: "settlement_unkept" },
  );
