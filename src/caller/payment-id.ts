/**
 * The payer's side of the x402 `payment-identifier` extension, shared by `create-agent call` and every
 * generated client (copied verbatim into each, like guard.ts): when a 402 declares the extension, the
 * payment carries an id, so that a resend of that same payment after a lost answer (the identical request,
 * never a new signature) is answered by the service with the answer it already paid for.
 * Web-standard APIs only (crypto.getRandomValues): generated clients run in Node, Deno, Bun and browsers.
 */

/** The extension's key in a PaymentRequired's and a PaymentPayload's `extensions`. */
export const PAYMENT_IDENTIFIER = "payment-identifier";

/** A new id: "pay_" and 32 random hex digits (the extension takes 16-128 of [A-Za-z0-9_-]). */
export function newPaymentId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `pay_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Puts `id` into the payment-identifier declaration of a 402's `extensions` (the x402 client echoes the
 * declared extensions into the PaymentPayload it signs), as @x402/extensions'
 * appendPaymentIdentifierToExtensions does. Returns false, changing nothing, when the 402 declares no
 * such extension (x402 v1 has none): then the payment carries no id.
 */
export function addPaymentIdentifier(extensions: unknown, id: string): boolean {
  if (typeof extensions !== "object" || extensions === null) return false;
  const declared = (extensions as Record<string, unknown>)[PAYMENT_IDENTIFIER];
  if (typeof declared !== "object" || declared === null) return false;
  const info = (declared as Record<string, unknown>).info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) return false;
  (info as Record<string, unknown>).id = id;
  return true;
}
