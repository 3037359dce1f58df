/**
 * Where a transport carries a paid job's payment: the only part of a paid job's way in that differs
 * between POST /execute (a header, http/execute.ts) and MCP (`_meta`, mcp/payment.ts). Everything
 * else (verify, reserve, run, check, settle, cache) is paid.ts's, for every transport, and each
 * transport writes the outcome (outcome.ts) its own way. Part of your project: edit freely.
 */
import type { SentPayment } from "../payments/scheme.js";

/** One job's payment channel. */
export interface PaymentChannel {
  /** The payment the caller sent, or undefined when it sent none. */
  sent(): SentPayment | undefined;
  /** Why a job sent without payment gets an offer: where to send one (the offer's error). */
  readonly required: string;
}
