/**
 * The Solana payment's envelope, checked before anything is reserved or run (svm/scheme.ts verify()):
 * its x402 version (v1 only where v1 names the network, and never over MCP), the requirement an x402
 * v2 client accepted against this capability's offer (v1 clients name only scheme and network), and
 * a transaction to read. Each refusal is a PaymentError saying what to change.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../../errors.js";
import type { SolanaNetwork } from "./networks.js";
import { v1Knows } from "../networks.js";
import type { SentPayment } from "../scheme.js";
import { decodeSentJson, MAX_PAYMENT_HEADER_BYTES } from "../x402.js";

export const refuse = (code: string, message: string): PaymentError =>
  new PaymentError(message, { code });

/** The PaymentPayload object, from a header (base64 JSON) or MCP's `_meta`. */
export function decodeSent(sent: SentPayment): Record<string, unknown> {
  if ("object" in sent) {
    const value = sent.object;
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw refuse("malformed", `${sent.name} is not a PaymentPayload object`);
    if (JSON.stringify(value).length > MAX_PAYMENT_HEADER_BYTES)
      throw refuse("malformed", `${sent.name} is larger than ${MAX_PAYMENT_HEADER_BYTES} bytes`);
    return value as Record<string, unknown>;
  }
  const decoded = decodeSentJson(sent);
  if (!decoded.ok) throw refuse("malformed", `${sent.name} header ${decoded.reason}`);
  return decoded.value;
}

/**
 * The payload's x402 version and the requirement it names (v2: `accepted`; v1: the payload itself),
 * once scheme and network are this service's.
 */
export function checkEnvelope(
  raw: Record<string, unknown>,
  sent: SentPayment,
  network: SolanaNetwork,
): { version: 1 | 2; accepted: Record<string, unknown> } {
  const version = raw.x402Version;
  if (version === 1) {
    if ("object" in sent)
      throw refuse(
        "malformed",
        `${sent.name} has x402Version 1: send an x402 v2 PaymentPayload (x402 v1 has no MCP transport)`,
      );
    if (!v1Knows(network))
      throw refuse(
        "version",
        `payment on ${network.caip2} has x402Version 1, but x402 v1 has no name for this network: pay in x402 v2 (PAYMENT-SIGNATURE)`,
      );
  } else if (version !== 2)
    throw refuse(
      "version",
      `payment on ${network.caip2} has unsupported x402Version ${JSON.stringify(version)} (supported: 1, 2)`,
    );
  // v2 echoes the requirement it accepted; v1 names only scheme and network at the top level.
  const accepted = (version === 2 ? raw.accepted : raw) as Record<string, unknown> | undefined;
  if (typeof accepted !== "object" || accepted === null)
    throw refuse(
      "malformed",
      `${sent.name} is missing \`accepted\` (the payment requirement you chose)`,
    );
  if (accepted.scheme !== "exact")
    throw refuse(
      "scheme",
      `unsupported payment scheme ${JSON.stringify(accepted.scheme).slice(0, 80)}: only "exact" is accepted`,
    );
  if (accepted.network !== network.caip2 && (version === 2 || accepted.network !== network.v1Name))
    throw refuse(
      "network",
      `payment is for network ${JSON.stringify(accepted.network).slice(0, 80)} but this service takes payments on "${network.caip2}" (${network.v1Name})`,
    );
  return { version, accepted };
}

/** x402 v2: the accepted requirement must be this capability's offer (amount, mint, payee, fee payer). */
export function checkAccepted(
  accepted: Record<string, unknown>,
  requirement: Record<string, unknown>,
  capabilityName: string,
  feePayer: string,
): void {
  const extra = accepted.extra as Record<string, unknown> | undefined;
  const mismatch =
    accepted.amount !== requirement.amount
      ? `amount ${String(accepted.amount)} (price of "${capabilityName}" is ${String(requirement.amount)})`
      : accepted.asset !== requirement.asset
        ? `asset ${String(accepted.asset)} (expected ${String(requirement.asset)})`
        : accepted.payTo !== requirement.payTo
          ? `payTo ${String(accepted.payTo)} (expected ${String(requirement.payTo)})`
          : extra?.feePayer !== feePayer
            ? `extra.feePayer ${String(extra?.feePayer)} (expected ${feePayer})`
            : undefined;
  if (mismatch)
    throw refuse(
      "requirement",
      `accepted requirement does not match this capability's offer: ${mismatch}; fetch a fresh 402 and pay what it asks`,
    );
}

/** The base64 transaction the payload carries. */
export function payloadTransaction(raw: Record<string, unknown>, sent: SentPayment): string {
  const inner = raw.payload as Record<string, unknown> | undefined;
  const transaction = inner?.transaction;
  if (typeof transaction !== "string" || transaction === "")
    throw refuse(
      "malformed",
      `${sent.name} has no payload.transaction (base64 of the signed transaction)`,
    );
  return transaction;
}
