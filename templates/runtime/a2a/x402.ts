/**
 * The a2a-x402 extension (v0.2, google-agentic-commerce/a2a-x402; the legacy v0.1 URI is accepted
 * too): its URIs, the task metadata keys its two turns use, and how a refused payment's code
 * (PaymentError.code, payments/) is named in `x402.payment.error`. The offer itself is the HTTP
 * 402's (offer.ts). Part of your project: edit freely.
 */
import { PaymentError, type AgentError } from "../errors.js";

/** The a2a-x402 extension this transport implements (the agent card declares it). */
export const X402_EXTENSION_URI =
  "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
/** The URI clients of the extension's first version activate; accepted the same way. */
export const LEGACY_X402_EXTENSION_URI = "https://github.com/google-a2a/a2a-x402/v0.1";

export const STATUS_KEY = "x402.payment.status";
export const REQUIRED_KEY = "x402.payment.required";
export const PAYLOAD_KEY = "x402.payment.payload";
export const RECEIPTS_KEY = "x402.payment.receipts";
export const ERROR_KEY = "x402.payment.error";

/** The extension's payment states (`x402.payment.status`). */
export type PaymentStatus =
  | "payment-required"
  | "payment-submitted"
  | "payment-verified"
  | "payment-completed"
  | "payment-failed";

/** Which of the extension's URIs the caller activated (A2A-Extensions), if any. */
export function activatedUri(requested: Iterable<string> | undefined): string | undefined {
  for (const uri of requested ?? [])
    if (uri === X402_EXTENSION_URI || uri === LEGACY_X402_EXTENSION_URI) return uri;
  return undefined;
}

/** Our refusal codes (payments/, jobs/) as the extension's error codes. */
const ERROR_CODES: Record<string, string> = {
  insufficient_funds: "INSUFFICIENT_FUNDS",
  signature: "INVALID_SIGNATURE",
  signature_v: "INVALID_SIGNATURE",
  signature_high_s: "INVALID_SIGNATURE",
  address_checksum: "INVALID_SIGNATURE",
  malformed: "INVALID_SIGNATURE",
  expired: "EXPIRED_PAYMENT",
  not_yet_valid: "EXPIRED_PAYMENT",
  nonce_used: "DUPLICATE_NONCE",
  already_used: "DUPLICATE_NONCE",
  in_use: "DUPLICATE_NONCE",
  held: "DUPLICATE_NONCE",
  job_id_reused: "DUPLICATE_NONCE",
  network: "NETWORK_MISMATCH",
  scheme: "NETWORK_MISMATCH",
  amount: "INVALID_AMOUNT",
  payee: "INVALID_AMOUNT",
  requirement: "INVALID_AMOUNT",
};

/**
 * `x402.payment.error` for a refusal: a refused payment's code mapped (a settlement that failed,
 * and anything else about the payment: SETTLEMENT_FAILED); undefined for a job that failed on its
 * own (the handler, its output, its deadline), whose payment was simply never taken.
 */
export function paymentErrorCode(error: AgentError): string | undefined {
  if (!(error instanceof PaymentError)) return undefined;
  return ERROR_CODES[error.code ?? ""] ?? "SETTLEMENT_FAILED";
}
