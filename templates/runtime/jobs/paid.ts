/**
 * A paid job, as a list of named steps (see runPaidJob). The guarantees, across every instance
 * sharing the ledger:
 *   - one authorization runs at most one handler, abandoned handlers included;
 *   - it is charged at most once, and only for a result the caller receives (the answer is built
 *     and checked before settlement; a caller who left before settlement is not charged, its
 *     answer waits for an identical retry, which settles then; an identical retry of a settled job
 *     gets the same answer from the ledger: stored-answer.ts);
 *   - without a working ledger no paid job starts (503, nothing run or charged).
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import { authorizationTtlMs, validBefore } from "../ledger/ledger.js";
import { type Hold, holdReservation } from "../ledger/reservation.js";
import type { PaymentGate, HeaderGetter } from "../payments/gate.js";
import type { SentPayment } from "../payments/scheme.js";
import type { Receipt } from "../payments/scheme.js";
import { SETTLEMENT_MARGIN_SECONDS, SettlementError } from "../payments/settlement.js";
import { paymentResponseHeaders } from "../payments/x402.js";
import type { Capability, Logger, PaidPayment } from "../types.js";
import { headerChannel, type PaymentChannel, type PaymentChannelFor } from "./channel.js";
import { checkArrival, type HandlerRun, shuttingDown, startHandler } from "./handler.js";
import { withPaymentIdentifier } from "./identifier.js";
import { LEASE_MARGIN_MS, ledgerStep as ledgerStepOf, notOurs } from "./ledger-step.js";
import { storedAnswers } from "./stored-answer.js";
import type { JobServices } from "./services.js";
import type { JobRequest } from "./request.js";
import { completedBody, type JobResponse } from "./result.js";

export { LEDGER_RETRY_AFTER_SECONDS } from "./ledger-step.js";

export interface PaidJobCall {
  header: HeaderGetter;
  /** Absolute URL of this endpoint, for 402s and the requirement a payment must match. */
  resourceUrl(): string;
  /** A transport other than POST /execute (MCP): where its payment is and how it asks for one. */
  payment?: PaymentChannelFor;
  /** Aborted once the caller is gone (HTTP: the connection closed; MCP: the request cancelled). */
  callerGone?: AbortSignal;
}

/** A failed settlement; when it is unconfirmed, the transaction sent (if known). */
export type UncertainSettlement = PaymentError & { broadcastTx?: string };

/** The services a paid job uses. */
export type PaidServices = JobServices & { gate: PaymentGate };
/** The steps of runPaidJob (paidSteps below). */
export type PaidSteps = ReturnType<typeof paidSteps>;

export async function runPaidJob(
  s: PaidServices,
  call: PaidJobCall,
  job: JobRequest,
  capability: Capability,
  input: unknown,
  logger: Logger,
): Promise<JobResponse> {
  const channel = call.payment?.(capability, job) ?? headerChannel(s.gate, call, capability, job);
  // A payment carrying a payment-identifier id: a resend is answered from the ledger (identifier.ts).
  return withPaymentIdentifier(s, channel, job, logger, () =>
    runPayment(s, call, channel, job, capability, input, logger),
  );
}

/** One paid attempt: verify, reserve, run, check, settle, cache. */
async function runPayment(
  s: PaidServices,
  call: PaidJobCall,
  channel: PaymentChannel,
  job: JobRequest,
  capability: Capability,
  input: unknown,
  logger: Logger,
): Promise<JobResponse> {
  const steps = paidSteps(s, call, channel, job, capability, logger);

  // 3. Payment: none sent -> 402 saying how to pay; a bad one -> 402 saying why.
  const sent = channel.sent();
  if (!sent) return steps.paymentRequired();
  // An identical retry (same payment, job_id, capability, input) of a settled job gets its answer,
  // of a held one settles it; the same payment and job_id with another request is refused. Looked
  // up before verification when the payment's key decodes (EVM): a retry past the time window a
  // new job needs still gets what it paid for.
  const stored = storedAnswers(s, steps, { call, job, capability, input, sent, logger });
  const early = await stored.lookup(s.gate.replayKeyOf(sent));
  if (early) return early;
  const payment = await steps.verify(sent);
  if (payment instanceof PaymentError) return steps.refuse(payment);
  const cached = await stored.lookup(s.gate.replayKey(payment), payment);
  if (cached) return cached;

  // A caller already gone gets no job run for it: nothing could be charged for it.
  if (call.callerGone?.aborted) return stored.gone(false);

  // One authorization, one job: claim it before anything runs.
  const hold = await steps.reserve(payment);
  if (hold instanceof PaymentError) return steps.refuse(hold);

  let run: HandlerRun | undefined;
  try {
    const refused = await steps.confirm(payment);
    if (refused) return steps.refuse(refused);

    checkArrival(job); // 4
    run = startHandler(job, capability, input, {
      logger,
      metrics: s.metrics,
      payment,
      cut: s.drain.cut,
    });
    const output = await run.result; // 5, 7, 8
    const body = completedBody(job.jobId, capability, output, {
      devMode: false,
      maxOutputBytes: s.config.maxOutputBytes,
      logger,
    }); // 6, serialized and size-checked before any charge
    if (s.drain.cut.aborted) throw shuttingDown();
    // The caller left: nothing is charged; the answer waits for an identical retry.
    if (call.callerGone?.aborted) return await stored.keepForRetry(hold, payment, body);

    const settled = await steps.settle(payment);
    // Sent but not confirmed: held with the answer until the chain says (reconcile.ts).
    if (settled instanceof PaymentError && settled.code === "settlement_uncertain")
      return await stored.keepUnconfirmed(hold, payment, body, settled);
    if (settled instanceof PaymentError) {
      // Refused by the token: this authorization never runs a job again. Only an outage
      // (settlement_failed) frees it for another attempt.
      if (settled.code !== "settlement_failed") await hold.spent(authorizationTtlMs(payment));
      return steps.refuse(settled, settled.code !== "settlement_uncertain");
    }
    const answer: JobResponse = {
      status: 200,
      headers: paymentResponseHeaders(payment.x402Version, settled),
      body,
      outcome: "completed",
    };
    const { status, headers } = answer;
    await hold.spent(authorizationTtlMs(payment), stored.result({ status, headers, body }));
    return answer;
  } finally {
    // Not spent: free the authorization once no handler runs on it (an abandoned one may run on
    // long after its 408). A shutdown that cut the job frees it now: the process, and the handler
    // with it, is about to end. Both are no-ops once spent.
    if (run?.isRunning() && !s.drain.cut.aborted) hold.releaseAfter(run.stopped);
    else await hold.release();
  }
}

/** The steps of runPaidJob, each with its own failure handling. */
function paidSteps(
  s: PaidServices,
  call: PaidJobCall,
  channel: PaymentChannel,
  job: JobRequest,
  capability: Capability,
  logger: Logger,
) {
  const { gate, ledger, metrics } = s;

  /** Ledger reads and claims: unreachable -> 503, and nothing runs (ledger-step.ts). */
  const ledgerStep = <T,>(operation: string, work: () => Promise<T>): Promise<T> =>
    ledgerStepOf(metrics, logger, operation, work);

  return {
    ledgerStep,

    paymentRequired(): JobResponse {
      const { status, headers, body, reason } = channel.paymentRequired();
      return { status, headers, body, outcome: "payment_required", reason };
    },

    /** A 402 `payment` error; with `retry`, it also says how to pay (PAYMENT-REQUIRED). */
    refuse(err: PaymentError, retry = true): JobResponse {
      metrics.paymentRefused(err.code ?? "other");
      logger.info("payment refused", { reason: err.message, code: err.code });
      return { ...channel.refused(err.message, retry), outcome: "payment", reason: err.message };
    },

    /** `deadline`: the job's, or now when only a settlement remains (a held answer). */
    async verify(sent: SentPayment, deadline = job.deadline): Promise<PaidPayment | PaymentError> {
      try {
        return await gate.verify(sent, capability, { deadline }, call.resourceUrl());
      } catch (err) {
        if (err instanceof PaymentError) return err;
        throw err;
      }
    },

    async reserve(payment: PaidPayment): Promise<Hold | PaymentError> {
      const auth = gate.replayKey(payment);
      const now = Date.now();
      // Long enough for the handler (until the deadline) and the settlement; renewed while they run.
      const settleMs = (s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
      const leaseMs = Math.min(
        Math.max(0, job.deadline * 1000 - now) + settleMs + LEASE_MARGIN_MS,
        authorizationTtlMs(payment, now),
      );
      const claim = await ledgerStep("reserve the authorization", () =>
        ledger.reserve(auth, leaseMs),
      );
      if (claim.status !== "reserved") return notOurs(claim.status);
      return holdReservation(ledger, auth, claim.token, {
        leaseEndsAt: now + leaseMs,
        logger,
        metrics,
      });
    },

    /** Chain-state checks and the facilitator's /verify, now that the authorization is ours. */
    async confirm(payment: PaidPayment): Promise<PaymentError | undefined> {
      try {
        await gate.confirm(payment);
        return undefined;
      } catch (err) {
        if (err instanceof PaymentError) return err;
        logger.error("payment check failed", { error: String(err) });
        throw err;
      }
    },

    /** Charges the payment; a failure is a PaymentError whose advice depends on what is known. */
    async settle(payment: PaidPayment): Promise<Receipt | UncertainSettlement> {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const receipt = await gate.settle(payment);
        metrics.settlement(
          capability.name,
          "settled",
          seconds(),
          BigInt(payment.amount),
          gate.networkOf(payment),
        );
        logger.info("payment settled", { tx: receipt.transaction, payer: receipt.payer });
        return receipt;
      } catch (err) {
        // An unknown error is treated like an unconfirmed settlement: it may have gone through.
        const uncertain = !(err instanceof SettlementError) || err.uncertain;
        const reason =
          err instanceof SettlementError ? err.message : "settlement failed unexpectedly";
        const result = uncertain ? "uncertain" : "failed";
        metrics.settlement(capability.name, result, seconds(), undefined, gate.networkOf(payment));
        logger.error("settlement failed; output withheld", {
          reason: err instanceof Error ? err.message : String(err),
          tx: err instanceof SettlementError ? err.broadcastTx : undefined,
          uncertain,
        });
        if (uncertain)
          return Object.assign(
            new PaymentError(
              `payment settlement is unconfirmed, so the result is withheld for now: ${reason}. This authorization will not be used again. The result is kept: send the identical request again later to get it once the settlement is confirmed (or to hear that nothing was charged)`,
              { code: "settlement_uncertain" },
            ),
            { broadcastTx: err instanceof SettlementError ? err.broadcastTx : undefined },
          );
        const permanent = err instanceof SettlementError && err.permanent;
        return new PaymentError(
          `payment was not settled, so the result is withheld: ${reason}. Nothing was charged. ${(err instanceof SettlementError && err.advice) || retryAdvice(payment, permanent)}`,
          { code: permanent ? "settlement_refused" : "settlement_failed" },
        );
      }
    },
  };
}

/** Whether the same authorization can pay for another attempt, said plainly. */
function retryAdvice(payment: PaidPayment, refused: boolean): string {
  const left = validBefore(payment) - Math.floor(Date.now() / 1000);
  if (left <= 0) return "This authorization has expired: sign a new one to run the job again.";
  if (refused)
    return "The token refused this authorization, so it will not be accepted again: sign a new one.";
  if (left <= SETTLEMENT_MARGIN_SECONDS)
    return "This authorization expires too soon to pay for another run: sign a new one.";
  return "The same authorization may be sent again.";
}
