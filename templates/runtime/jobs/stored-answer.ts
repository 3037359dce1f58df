/**
 * A paid job's stored answers (runPaidJob's steps for them, paid.ts). The ledger keeps each answer
 * with the identity of its payment and request (identity.ts):
 *   - settled (charged): an identical retry (same payment, job_id, capability and input) gets it
 *     again, with no second charge;
 *   - held (not charged): the job succeeded but its caller had left before settlement, so nothing
 *     was charged; the first identical retry settles it then (one retry only: it claims it in the
 *     ledger first) and gets it without the handler running again;
 *   - the same payment and job_id with another capability or input: refused, nothing run or charged.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import {
  authorizationTtlMs,
  validBefore,
  type FoundResult,
  type JobResult,
  type StoredResult,
} from "../ledger/ledger.js";
import type { Hold } from "../ledger/reservation.js";
import type { SentPayment } from "../payments/scheme.js";
import { paymentResponseHeaders } from "../payments/x402.js";
import type { Capability, Logger, PaidPayment } from "../types.js";
import { paymentHash, requestHash } from "./identity.js";
import { notOurs } from "./ledger-step.js";
import type { PaidJobCall, PaidServices, PaidSteps, UncertainSettlement } from "./paid.js";
import { resolveUnconfirmed, unconfirmedTtlMs } from "./reconcile.js";
import type { JobRequest } from "./request.js";
import type { JobResponse } from "./result.js";

/** Added to a held answer's settlement claim beyond the settlement timeout. */
const CLAIM_MARGIN_MS = 10_000;

export interface StoredAnswerContext {
  call: PaidJobCall;
  job: JobRequest;
  capability: Capability;
  input: unknown;
  sent: SentPayment;
  logger: Logger;
}

/** The answer for a caller that left before settlement (nobody reads it: for the log and metrics). */
function callerGone(kept: boolean): JobResponse {
  const error = kept
    ? "the caller left before the payment was settled: nothing was charged; the identical request with the same payment gets the answer"
    : "the caller left before the payment was settled: nothing was charged";
  return {
    status: 499,
    headers: {},
    body: JSON.stringify({ status: "failed", error_type: "payment", error }),
    outcome: "caller_gone",
    reason: error,
  };
}

export function storedAnswers(s: PaidServices, steps: PaidSteps, ctx: StoredAnswerContext) {
  const { ledger, metrics } = s;
  const { call, job, sent, logger } = ctx;
  let request: string | undefined;
  let payment: string | undefined;
  const requestId = () => (request ??= requestHash(ctx.capability.name, ctx.input));
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
  const result = (value: StoredResult): JobResult => ({
    jobId: job.jobId,
    value,
    request: requestId(),
    payment: paymentId(),
  });

  const replay = (found: FoundResult): JobResponse => {
    logger.info("identical retry of a paid job: returning the cached result");
    return { ...found.value, outcome: found.value.status === 200 ? "completed" : "payment" };
  };

  /** What is held for an unconfirmed settlement of `payment` (reconcile.ts resolves it). */
  const unconfirmed = (payment: PaidPayment, settled: UncertainSettlement, body: string) => ({
    ...result({ status: 200, headers: {}, body }),
    unconfirmed: {
      ...(settled.broadcastTx && { tx: settled.broadcastTx }),
      x402Version: payment.x402Version,
      network: payment.network,
      payer: payment.payer,
      validBefore: validBefore(payment),
      ...(payment.blockhash !== undefined && { blockhash: payment.blockhash }),
    },
  });

  /** An identical retry finds its settlement unconfirmed: ask the chain now. */
  async function reconcileHeld(auth: string, found: FoundResult): Promise<JobResponse> {
    const resolved = await steps.ledgerStep("check an unconfirmed settlement", () =>
      resolveUnconfirmed(s, auth, found, logger),
    );
    if (resolved.status === "confirmed" || resolved.status === "failed")
      return {
        ...resolved.value,
        outcome: resolved.status === "confirmed" ? "completed" : "payment",
      };
    return steps.refuse(
      new PaymentError(
        `payment settlement is still unconfirmed (${"reason" in resolved ? resolved.reason : "being checked"}), so the result is withheld for now: nothing more will be charged; send the identical request again later to get it once confirmed (or to hear that nothing was charged)`,
        { code: "settlement_uncertain" },
      ),
      false,
    );
  }

  /** Settles a held answer for this identical retry, then answers with it. */
  async function settleHeld(
    auth: string,
    found: FoundResult,
    verified?: PaidPayment,
  ): Promise<JobResponse | undefined> {
    // Only the settlement is still to come: the payment must stay valid for it, not for a new job.
    const payment = verified ?? (await steps.verify(sent, Date.now() / 1000));
    if (payment instanceof PaymentError) return steps.refuse(payment);
    if (s.gate.replayKey(payment) !== auth) return undefined; // not the payment it decoded as
    const settleMs = (s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
    const leaseMs = Math.min(settleMs + CLAIM_MARGIN_MS, authorizationTtlMs(payment));
    const claim = await steps.ledgerStep("claim a held result", () =>
      ledger.claimHeld(auth, leaseMs),
    );
    if (claim.status !== "reserved") {
      // Another identical retry settled it meanwhile: its answer.
      const again = await steps.ledgerStep("read the result cache", () =>
        ledger.getResult(auth, job.jobId),
      );
      if (again?.settled && again.payment === paymentId() && again.request === requestId())
        return replay(again);
      return steps.refuse(notOurs(claim.status === "held" ? "in-flight" : claim.status));
    }
    const unclaim = () =>
      quietly("return a held result", () => ledger.returnHeld(auth, claim.token));
    if (call.callerGone?.aborted) {
      await unclaim();
      return callerGone(true);
    }
    const settled = await steps.settle(payment);
    if (settled instanceof PaymentError) {
      // An outage: held again for another retry. Unconfirmed: held until the chain says. Refused:
      // never used again.
      if (settled.code === "settlement_failed") await unclaim();
      else if (settled.code === "settlement_uncertain")
        await quietly("hold an unconfirmed settlement", () =>
          ledger.hold(
            auth,
            unconfirmedTtlMs(validBefore(payment)),
            unconfirmed(payment, settled, found.value.body),
          ),
        );
      else
        await quietly("mark the authorization spent", () =>
          ledger.markSettled(auth, authorizationTtlMs(payment)),
        );
      return steps.refuse(settled, settled.code !== "settlement_uncertain");
    }
    const headers = paymentResponseHeaders(payment.x402Version, settled);
    const value: StoredResult = { status: 200, headers, body: found.value.body };
    await quietly("mark the authorization spent", () =>
      ledger.markSettled(auth, authorizationTtlMs(payment), result(value)),
    );
    logger.info("held answer settled for an identical retry: charged now, handler not run again");
    return { ...value, outcome: "completed" };
  }

  return {
    result,
    /** The answer for a caller who left (`kept`: its job's answer waits for an identical retry). */
    gone: callerGone,

    /**
     * The answer stored under `auth` for this job, if this payment and request made it: replayed
     * (settled), settled now (held), or refused (another request). Undefined: none, run the job.
     * `verified`: the payment, once verified (otherwise `auth` was only decoded).
     */
    async lookup(
      auth: string | undefined,
      verified?: PaidPayment,
    ): Promise<JobResponse | undefined> {
      if (auth === undefined || auth === lookedUp) return undefined;
      lookedUp = auth;
      const found = await steps.ledgerStep("read the result cache", () =>
        ledger.getResult(auth, job.jobId),
      );
      // None, or another payment's (the same authorization, sent otherwise): the reservation decides.
      if (!found || found.payment !== paymentId()) return undefined;
      if (found.request !== requestId())
        return steps.refuse(
          new PaymentError(
            `job_id ${JSON.stringify(job.jobId)} was already used with this payment for another request (another capability or input), so nothing was run or charged: send the original request again for its answer, or pay for this one with a new payment`,
            { code: "job_id_reused" },
          ),
          false,
        );
      if (found.settled) return replay(found);
      if (found.unconfirmed) return reconcileHeld(auth, found);
      return settleHeld(auth, found, verified);
    },

    /**
     * The settlement was sent but not confirmed: the answer is held until the chain says (never
     * freed: the payment may be charged). Answers 402, saying so.
     */
    async keepUnconfirmed(
      hold: Hold,
      payment: PaidPayment,
      body: string,
      settled: UncertainSettlement,
    ): Promise<JobResponse> {
      try {
        await hold.held(
          unconfirmedTtlMs(validBefore(payment)),
          unconfirmed(payment, settled, body),
        );
      } catch (err) {
        metrics.ledgerError("hold an unconfirmed settlement");
        logger.error("payment ledger: could not keep an unconfirmed settlement's answer", {
          error: String(err),
        });
        await hold.spent(authorizationTtlMs(payment)); // maybe charged: never run again
      }
      return steps.refuse(settled, false);
    },

    /** The caller left before settlement: charge nothing, keep the answer for an identical retry. */
    async keepForRetry(hold: Hold, payment: PaidPayment, body: string): Promise<JobResponse> {
      let kept = false;
      try {
        await hold.held(authorizationTtlMs(payment), result({ status: 200, headers: {}, body }));
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
