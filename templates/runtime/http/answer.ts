/**
 * A job's outcome (jobs/outcome.ts) as POST /execute answers it (spec sections 2.4, 2.5, 7): the
 * status, the x402 headers (PAYMENT-REQUIRED with an offer, PAYMENT-RESPONSE with a receipt,
 * Retry-After) and the JSON body, serialized. Part of your project: edit freely.
 */
import { answerStatus, errorBody, errorResponse, PaymentError } from "../errors.js";
import type { JobAnswer, PaymentAsk, Refused } from "../jobs/outcome.js";
import { keptRecord } from "../payments/kept-answer.js";
import type { PaymentGate } from "../payments/gate.js";

/** An answer as sent: its body already serialized (written byte for byte). */
export interface HttpAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** The HTTP answer for a job's outcome; `gate` makes the offers (absent in dev mode: none made). */
export function httpAnswer(answer: JobAnswer, gate: PaymentGate | undefined): HttpAnswer {
  switch (answer.kind) {
    case "completed":
      return keptRecord(answer); // 200, with the receipt when settled
    case "payment_required": {
      const { capability, resourceUrl, deadline } = answer.ask;
      return gate!.paymentRequired(capability, resourceUrl, deadline, answer.reason);
    }
    case "refused":
      return refusedAnswer(answer, gate);
    case "caller_gone":
      return {
        status: answerStatus(answer),
        headers: {},
        body: JSON.stringify(errorBody("payment", answer.message)),
      };
  }
}

/** A refusal: its error's status and body; a refused payment says how to pay again, or not to. */
function refusedAnswer(answer: Refused, gate: PaymentGate | undefined): HttpAnswer {
  const { error, payment, retryAfterSeconds } = answer;
  let headers: Readonly<Record<string, string>> = {};
  let body: string;
  if (payment && error instanceof PaymentError) {
    headers = payment.offer ? retryHeaders(gate!, payment.offer, error.message) : NO_STORE;
    body = JSON.stringify(errorBody("payment", error.message));
  } else body = JSON.stringify(errorResponse(error).body);
  if (retryAfterSeconds !== undefined)
    headers = { ...headers, "Retry-After": String(retryAfterSeconds) };
  return { status: error.status, headers, body };
}

const NO_STORE: Readonly<Record<string, string>> = { "Cache-Control": "no-store" };

const retryHeaders = (gate: PaymentGate, ask: PaymentAsk, reason: string) =>
  gate.retryHeaders(ask.capability, ask.resourceUrl, ask.deadline, reason);
