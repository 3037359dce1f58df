/**
 * What `create-agent call` (call.ts, call-pay.ts) makes of a service's answer to POST /execute: a job result
 * (spec 2.4), or the error it says in the caller's terms (spec 2.5), naming any payment that was sent.
 */
import { isObject } from "../json-object.js";
import { CallError } from "./errors.js";
import type { SignedPayment } from "./guard.js";
import { isNetworkUsdc } from "./guard-asset.js";
import { fromAtomicAmount, type PaymentReceipt } from "./payment.js";
import type { ServiceCapability } from "./service.js";

export interface CallResult {
  jobId: string;
  capability: string;
  output: unknown;
  completedAt: number | null;
  /** null when nothing was paid (a dev-mode service). */
  payment: PaymentReceipt | null;
}

/** What a payment is, in words: "0.01 USDC", or "10000 atomic units of the token <address>". */
export function describePayment(amount: bigint, network: string, asset: string): string {
  return isNetworkUsdc(network, asset)
    ? `${fromAtomicAmount(amount)} USDC`
    : `${amount} atomic units of the token ${asset}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What an error message adds when a payment was sent with the request that failed ("" when none). */
export function sentNote(sent: SignedPayment | undefined): string {
  return sent
    ? ` (a signed payment of ${describePayment(sent.amount, sent.network, sent.asset)} was sent with this request)`
    : "";
}

/** How a job's endpoint says what a non-200 answer means: errorAnswer (HTTP), mcpErrorAnswer (MCP). */
export type ErrorAnswer = (
  status: number,
  text: string,
  url: string,
  sent?: SignedPayment,
  headers?: Headers,
) => CallError;

/** A non-200 answer: the spec's error body as `HTTP <status> <error_type>: <error>`. */
export function errorAnswer(
  status: number,
  text: string,
  url: string,
  sent?: SignedPayment,
): CallError {
  const body = parseJson(text);
  const signed = sentNote(sent);
  if (isObject(body) && typeof body.error_type === "string" && typeof body.error === "string")
    return new CallError(
      body.error_type,
      `HTTP ${status} ${body.error_type}: ${body.error}${signed}`,
      { status, error: body.error },
    );
  const shown = text.trim().replace(/\s+/g, " ");
  const excerpt = shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
  return new CallError(
    "service",
    `HTTP ${status} from POST ${url}, not a job result or an error body (spec 2.4, 2.5)${excerpt ? `: ${excerpt}` : ""}${signed}`,
    { status },
  );
}

/** A 200 answer: the job result (spec 2.4). */
export function completed(
  text: string,
  url: string,
  jobId: string,
  capability: ServiceCapability,
): Omit<CallResult, "payment"> {
  const body = parseJson(text);
  if (!isObject(body) || !("output" in body))
    throw new CallError(
      "service",
      `POST ${url} answered 200 without a job result (spec 2.4: no "output" field)`,
      { status: 200 },
    );
  return {
    jobId: typeof body.job_id === "string" ? body.job_id : jobId,
    capability: capability.name,
    output: body.output,
    completedAt: typeof body.completed_at === "number" ? body.completed_at : null,
  };
}
