/**
 * Where a transport carries a paid job's payment, and how it asks for one: the only part of a paid
 * job that differs between POST /execute (headers and HTTP 402s, headerChannel below) and MCP
 * (mcp/payment.ts). Everything else (verify, reserve, run, check, settle, cache) is paid.ts's, for
 * every transport. Part of your project: edit freely.
 */
import type { HeaderGetter, PaymentGate } from "../payments/gate.js";
import type { SentPayment } from "../payments/scheme.js";
import type { Capability } from "../types.js";
import type { JobRequest } from "./request.js";
import type { JobResponse } from "./result.js";

/** What a body-and-headers answer is, without the pipeline's bookkeeping. */
export type ChannelAnswer = Pick<JobResponse, "status" | "headers" | "body">;

/** One paid job's channel. */
export interface PaymentChannel {
  /** The payment the caller sent, or undefined when it sent none. */
  sent(): SentPayment | undefined;
  /** No payment was sent: the answer saying how to pay, and its reason (for the log). */
  paymentRequired(): ChannelAnswer & { reason: string };
  /** A payment was refused with `message`; `retry`: also say how to pay again. */
  refused(message: string, retry: boolean): ChannelAnswer;
}

/** Makes the channel of a job once its capability and request are known. */
export type PaymentChannelFor = (capability: Capability, job: JobRequest) => PaymentChannel;

/** POST /execute's channel: PAYMENT-SIGNATURE (or X-PAYMENT) in, 402 with PAYMENT-REQUIRED out. */
export function headerChannel(
  gate: PaymentGate,
  call: { header: HeaderGetter; resourceUrl(): string },
  capability: Capability,
  job: JobRequest,
): PaymentChannel {
  // Read once: every step of the job sees the same object (its JSON decoded once, payments/x402.ts).
  let sent: ReturnType<PaymentGate["paymentHeader"]> | null = null;
  return {
    sent: () => (sent === null ? (sent = gate.paymentHeader(call.header)) : sent),
    paymentRequired: () => ({
      ...gate.paymentRequired(capability, call.resourceUrl(), job.deadline),
      reason: "payment required: send a PAYMENT-SIGNATURE header",
    }),
    refused: (message, retry) => ({
      status: 402,
      headers: retry
        ? gate.retryHeaders(capability, call.resourceUrl(), job.deadline, message)
        : { "Cache-Control": "no-store" },
      body: JSON.stringify({ status: "failed", error_type: "payment", error: message }),
    }),
  };
}
