/**
 * The steps of a paid job (paid.ts lists them in order in runPaidJob), each with its own failure
 * handling, over one small context (PaidJob): ask for a payment, refuse one, verify, reserve,
 * confirm, run the handler, settle. Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import { authorizationTtlMs, validBefore } from "../ledger/ledger.js";
import { type Hold, holdReservation } from "../ledger/reservation.js";
import type { PaymentGate } from "../payments/gate.js";
import type { Receipt } from "../payments/scheme.js";
import { SETTLEMENT_MARGIN_SECONDS, SettlementError } from "../payments/settlement.js";
import type { SentPayment } from "../payments/scheme.js";
import type { Capability, Logger, PaidPayment } from "../types.js";
import type { PaymentChannel } from "./channel.js";
import { type HandlerRun, startHandler } from "./handler.js";
import { LEASE_MARGIN_MS, ledgerStep as ledgerStepOf, notOurs } from "./ledger-step.js";
import type { PaymentAsk, PaymentRequired, Refused } from "./outcome.js";
import type { JobRequest } from "./request.js";
import { completedBody } from "./result.js";
import type { JobServices } from "./services.js";

/** The services a paid job uses. */
export type PaidServices = JobServices & { gate: PaymentGate };

export interface PaidJobCall {
  /** Where the caller's payment is (the transport's channel). */
  payment: PaymentChannel;
  /** Absolute URL of this endpoint (or the tool's resource), for offers and verification. */
  resourceUrl(): string;
  /** Aborted once the caller is gone (HTTP: the connection closed; MCP: the request cancelled). */
  callerGone?: AbortSignal;
  /** Aborted when the caller cancels the job (A2A CancelTask): the handler's ctx.signal aborts. */
  cancel?: AbortSignal;
  /** Called as the handler starts, the payment verified (MCP's progress notifications begin). */
  onStart?: () => void;
}

/** One paid job: what every step reads. */
export interface PaidJob {
  s: PaidServices;
  call: PaidJobCall;
  job: JobRequest;
  capability: Capability;
  input: unknown;
  logger: Logger;
}

/** A failed settlement; when it is unconfirmed, the transaction sent (if known). */
export type UncertainSettlement = PaymentError & { broadcastTx?: string };

/** Ledger reads and claims: unreachable -> 503, and nothing runs (ledger-step.ts). */
export const ledgerStep = <T,>(p: PaidJob, operation: string, work: () => Promise<T>): Promise<T> =>
  ledgerStepOf(p.s.metrics, p.logger, operation, work);

/** What an offer for this job needs (throws a ValidationError when no URL can be made). */
const askOf = (p: PaidJob): PaymentAsk => ({
  capability: p.capability,
  deadline: p.job.deadline,
  resourceUrl: p.call.resourceUrl(),
});

/** 3. No payment sent: an offer saying how to pay. */
export const paymentRequired = (p: PaidJob): PaymentRequired => ({
  kind: "payment_required",
  ask: askOf(p),
  reason: p.call.payment.required,
});

/**
 * Refusals whose answer the identical request gets (the same payment, sent again): seconds to wait
 * first, sent as Retry-After (MCP: its `_meta`), the machine-readable "send it again, sign nothing
 * new" that payers act on: its job still runs (in use: its authorization, or its payment-identifier
 * id), or its settlement is not confirmed yet.
 */
const RESEND_AFTER_SECONDS: ReadonlyMap<string | undefined, number> = new Map([
  ["in_use", 1],
  ["payment_id_in_use", 1],
  ["settlement_uncertain", 5],
]);

/**
 * A refused payment, counted and logged; with `retry`, it also says how to pay again, unless the
 * payment is "in use" (its job still runs, its answer goes to the identical request): an offer then
 * would only lead a client that pays whatever it is offered to pay for the same job twice.
 */
export function refuse(p: PaidJob, err: PaymentError, retry = true): Refused {
  p.s.metrics.paymentRefused(err.code ?? "other");
  p.logger.info("payment refused", { reason: err.message, code: err.code });
  const offer = retry && err.code !== "in_use";
  const resend = RESEND_AFTER_SECONDS.get(err.code);
  return {
    kind: "refused",
    error: err,
    payment: offer ? { offer: askOf(p) } : {},
    ...(resend !== undefined && { retryAfterSeconds: resend }),
  };
}

/** `deadline`: the job's, or now when only a settlement remains (a held answer). */
export async function verify(
  p: PaidJob,
  sent: SentPayment,
  deadline = p.job.deadline,
): Promise<PaidPayment | PaymentError> {
  try {
    return await p.s.gate.verify(sent, p.capability, { deadline }, p.call.resourceUrl());
  } catch (err) {
    if (err instanceof PaymentError) return err;
    throw err;
  }
}

/** A reservation's first lease: long enough for the handler (until the deadline) and the settlement. */
export function leaseMsFor(p: PaidJob, payment: PaidPayment, now = Date.now()): number {
  const settleMs = (p.s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
  return Math.min(
    Math.max(0, p.job.deadline * 1000 - now) + settleMs + LEASE_MARGIN_MS,
    authorizationTtlMs(payment, now),
  );
}

/** One authorization, one job: claims it in the ledger before anything runs. */
export async function reserve(p: PaidJob, payment: PaidPayment): Promise<Hold | PaymentError> {
  const { gate, ledger, metrics } = p.s;
  const auth = gate.replayKey(payment);
  const now = Date.now();
  // Renewed while the handler and the settlement run.
  const leaseMs = leaseMsFor(p, payment, now);
  const claim = await ledgerStep(p, "reserve the authorization", () =>
    ledger.reserve(auth, leaseMs),
  );
  if (claim.status !== "reserved") return notOurs(claim.status);
  return holdReservation(ledger, auth, claim.token, {
    leaseEndsAt: now + leaseMs,
    logger: p.logger,
    metrics,
  });
}

/** Chain-state checks and the facilitator's /verify, now that the authorization is ours. */
export async function confirm(p: PaidJob, payment: PaidPayment): Promise<PaymentError | undefined> {
  try {
    await p.s.gate.confirm(payment);
    return undefined;
  } catch (err) {
    if (err instanceof PaymentError) return err;
    p.logger.error("payment check failed", { error: String(err) });
    throw err;
  }
}

/** 5, 7, 8: starts the handler on the verified payment (its deadline and the shutdown's cut). */
export function startPaidHandler(p: PaidJob, payment: PaidPayment): HandlerRun {
  p.call.onStart?.();
  return startHandler(p.job, p.capability, p.input, {
    logger: p.logger,
    metrics: p.s.metrics,
    payment,
    cut: p.s.drain.cut,
    cancel: p.call.cancel,
  });
}

/** 6: the answer, serialized and size-checked before any charge (throws when undeliverable). */
export const answerOf = (p: PaidJob, output: unknown): string =>
  completedBody(p.job.jobId, p.capability, output, {
    devMode: false,
    maxOutputBytes: p.s.config.maxOutputBytes,
    logger: p.logger,
  });

/** Charges the payment; a failure is a PaymentError whose advice depends on what is known. */
export async function settle(
  p: PaidJob,
  payment: PaidPayment,
): Promise<Receipt | UncertainSettlement> {
  const { gate, metrics } = p.s;
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const receipt = await gate.settle(payment);
    const network = gate.networkOf(payment);
    metrics.settlement(p.capability.name, "settled", seconds(), BigInt(payment.amount), network);
    p.logger.info("payment settled", { tx: receipt.transaction, payer: receipt.payer });
    return receipt;
  } catch (err) {
    return settlementFailed(p, payment, err, seconds());
  }
}

/** A settlement that failed: counted, logged, and said plainly (was anything charged?). */
function settlementFailed(
  p: PaidJob,
  payment: PaidPayment,
  err: unknown,
  seconds: number,
): UncertainSettlement {
  // An unknown error is treated like an unconfirmed settlement: it may have gone through.
  const known = err instanceof SettlementError ? err : undefined;
  const uncertain = !known || known.uncertain;
  const reason = known ? known.message : "settlement failed unexpectedly";
  const network = p.s.gate.networkOf(payment);
  const result = uncertain ? "uncertain" : "failed";
  p.s.metrics.settlement(p.capability.name, result, seconds, undefined, network);
  p.logger.error("settlement failed; output withheld", {
    reason: err instanceof Error ? err.message : String(err),
    tx: known?.broadcastTx,
    uncertain,
  });
  if (uncertain)
    return Object.assign(
      new PaymentError(
        `payment settlement is unconfirmed, so the result is withheld for now: ${reason}. This authorization will not be used again. The result is kept: send the identical request again later to get it once the settlement is confirmed (or to hear that nothing was charged)`,
        { code: "settlement_uncertain" },
      ),
      { broadcastTx: known?.broadcastTx },
    );
  const permanent = known?.permanent ?? false;
  return new PaymentError(
    `payment was not settled, so the result is withheld: ${reason}. Nothing was charged. ${known?.advice || retryAdvice(payment, permanent)}`,
    { code: permanent ? "settlement_refused" : "settlement_failed" },
  );
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
