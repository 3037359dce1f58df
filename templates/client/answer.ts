/**
 * A job's answer, decoded for a generated client: the typed job result with the receipt of what this client
 * signed (never what the service claims it was paid), or the AgentCallError for an error body or anything
 * else. The body was read within the guard's size limit (retry.ts).
 */
import { decodePaymentResponseHeader } from "@x402/fetch";
import { AgentCallError, type AgentErrorType, type ServiceErrorType } from "./errors.js";
import type { SignedPayment } from "../../src/caller/guard.js";
import type { JobResult, PaymentReceipt } from "./caller.js";
import { formatUsdc } from "./pay-limit.js";
import { retryAfterMs } from "./retry.js";

const SERVICE_ERROR_TYPES: readonly string[] = [
  "validation",
  "payment",
  "deadline",
  "capability",
  "internal",
] satisfies ServiceErrorType[];

/** The job result (spec 2.4), or the AgentCallError for an error body (2.5) or anything else. */
export async function decodeAnswer<Output>(
  response: Response,
  url: string,
  capability: string,
  jobId: string,
  signed: SignedPayment | undefined,
): Promise<JobResult<Output>> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const fields = isRecord(body) ? body : {};
  const { status } = response;
  const sent = signed
    ? ` (a signed payment of ${formatUsdc(signed.amount)} USDC was sent with this request)`
    : "";
  const fail = (errorType: AgentErrorType, message: string) =>
    new AgentCallError(`${message}${sent}`, {
      errorType,
      status,
      capability,
      jobId,
      retryAfterSeconds: retryAfterSeconds(response),
    });

  if (status === 200) {
    const { output, completed_at } = fields;
    if (fields.status !== "completed" || !isRecord(output) || typeof completed_at !== "number")
      throw fail("protocol", `POST ${url} answered 200 but not a job result: ${preview(text)}`);
    if (fields.job_id !== jobId)
      throw fail(
        "protocol",
        `the result is for job ${JSON.stringify(fields.job_id)}, not ${jobId}`,
      );
    const payment = signed && receipt(response.headers, signed);
    return {
      jobId,
      output: output as Output,
      completedAt: completed_at,
      ...(payment && { payment }),
    };
  }
  const { error_type, error } = fields;
  if (typeof error_type === "string" && SERVICE_ERROR_TYPES.includes(error_type))
    throw fail(error_type as ServiceErrorType, typeof error === "string" ? error : preview(text));
  if (status === 402)
    throw fail("payment", offerError(response) ?? "the service still asks for payment");
  throw fail(
    "protocol",
    `POST ${url} answered HTTP ${status}, neither a job result nor an error of the spec: ${preview(text)}`,
  );
}

/**
 * The settlement receipt from PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1), when readable, with the
 * amount this client signed.
 */
function receipt(headers: Headers, signed: SignedPayment): PaymentReceipt | undefined {
  const header = headers.get("payment-response") ?? headers.get("x-payment-response");
  if (!header) return undefined;
  try {
    // The receipt names the transaction; the rest is what this client signed, never what it claims.
    const { transaction } = decodePaymentResponseHeader(header);
    if (typeof transaction !== "string") return undefined;
    return {
      transaction,
      network: signed.network,
      payer: signed.payer,
      amount: formatUsdc(signed.amount),
    };
  } catch {
    return undefined;
  }
}

/** The `error` of a 402's PAYMENT-REQUIRED header (base64 JSON), if any. */
function offerError(response: Response): string | undefined {
  const header = response.headers.get("payment-required");
  if (!header) return undefined;
  try {
    const bytes = Uint8Array.from(atob(header), (c) => c.charCodeAt(0));
    const decoded: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return isRecord(decoded) && typeof decoded.error === "string" && decoded.error
      ? decoded.error
      : undefined;
  } catch {
    return undefined;
  }
}

function retryAfterSeconds(response: Response): number | undefined {
  const ms = retryAfterMs(response);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/** A variable of the environment, where there is one (Node, Deno, Bun; not a browser). */
export function environment(name: string): string | undefined {
  const host = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return host.process?.env?.[name];
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (!flat) return "(empty body)";
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
