/**
 * A task turn's job outcome (jobs/outcome.ts) as A2A events: completed (the output as a DataPart
 * artifact; paid: `x402.payment.status: "payment-completed"` and `x402.payment.receipts`), an
 * offer (input-required, `payment-required`, the HTTP 402's PaymentRequired: offer.ts), a caller
 * gone before settlement (input-required again: nothing charged, the same payment sent again on
 * this task gets the kept result), a settlement not confirmed yet (input-required,
 * `payment-verified`: the same payment sent again gets the result once it is), or failed (the
 * spec's error body as a DataPart; a refused payment: `payment-failed` and `x402.payment.error`).
 * Part of your project: edit freely.
 */
import { type AgentError, errorResponse, PaymentError } from "../errors.js";
import type { JobAnswer } from "../jobs/outcome.js";
import type { PaymentGate } from "../payments/gate.js";
import type { TurnEvents } from "./events.js";
import { dataPart, textPart } from "./events.js";
import { offerFor, type PaymentRequiredObject } from "./offer.js";
import type { TaskJob } from "./request.js";
import { TaskState } from "./sdk.js";
import {
  ERROR_KEY,
  PAYLOAD_KEY,
  paymentErrorCode,
  RECEIPTS_KEY,
  REQUIRED_KEY,
  STATUS_KEY,
} from "./x402.js";

const PAY_HOW =
  'payment required: sign one of the accepts of x402.payment.required (metadata of this message) and send it in a message on this task with x402.payment.status "payment-submitted" and x402.payment.payload';

export function writeOutcome(
  events: TurnEvents,
  answer: JobAnswer,
  job: TaskJob,
  gate: PaymentGate | undefined,
  offer?: PaymentRequiredObject,
): void {
  switch (answer.kind) {
    case "completed": {
      const { output } = JSON.parse(answer.body) as { output: unknown };
      events.output(output, job.capability);
      const receipt = answer.settlement && { success: true, ...answer.settlement };
      const metadata = receipt
        ? { [STATUS_KEY]: "payment-completed", [RECEIPTS_KEY]: [receipt] }
        : {};
      return events.status(TaskState.completed, [textPart("completed")], metadata);
    }
    case "payment_required":
      return events.status(TaskState.inputRequired, [textPart(PAY_HOW)], {
        [STATUS_KEY]: "payment-required",
        [REQUIRED_KEY]: offerFor(gate!, answer.ask, answer.reason),
      });
    case "caller_gone":
      return events.status(TaskState.inputRequired, [textPart(answer.message)], {
        [STATUS_KEY]: "payment-required",
        ...(offer && { [REQUIRED_KEY]: offer }),
      });
    case "refused": {
      if (isUnconfirmed(answer.error)) return heldForResend(events, answer.error, offer);
      const { body } = errorResponse(answer.error);
      const code = paymentErrorCode(answer.error);
      const metadata = code ? { [STATUS_KEY]: "payment-failed", [ERROR_KEY]: code } : {};
      return events.status(TaskState.failed, [dataPart(body), textPart(body.error)], metadata);
    }
  }
}

const isUnconfirmed = (error: AgentError): error is PaymentError =>
  error instanceof PaymentError && error.code === "settlement_uncertain";

/**
 * The payment's settlement was sent but is not confirmed: the result is held for this payment, so
 * the task is not over (input-required, `payment-verified`): the same payment sent again on it gets
 * the result once confirmed. The offer stays on it for that turn's check; no new payment is asked.
 */
function heldForResend(events: TurnEvents, error: PaymentError, offer?: PaymentRequiredObject) {
  const how = `; on this task: send the same ${PAYLOAD_KEY} again, with ${STATUS_KEY} "payment-submitted", never a new one`;
  return events.status(TaskState.inputRequired, [textPart(error.message + how)], {
    [STATUS_KEY]: "payment-verified",
    ...(offer && { [REQUIRED_KEY]: offer }),
  });
}

/** A second turn whose payment does not answer the task's offer: failed, nothing run. */
export function writePaymentFailed(
  events: TurnEvents,
  why: { code: string; message: string },
): void {
  const body = {
    status: "failed",
    error_type: "payment",
    error: `${why.message}; nothing was run or charged`,
  };
  events.status(TaskState.failed, [dataPart(body), textPart(body.error)], {
    [STATUS_KEY]: "payment-failed",
    [ERROR_KEY]: why.code,
  });
}
