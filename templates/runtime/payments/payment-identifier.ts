/**
 * The x402 `payment-identifier` extension, as it appears on the wire: what every x402 v2 402 declares
 * (PAYMENT-REQUIRED's and MCP's PaymentRequired `extensions["payment-identifier"]`), and the id a
 * client puts in its PaymentPayload (`extensions["payment-identifier"].info.id`) so that a resend of
 * the same payment gets the same answer. What the server does with the id is jobs/identifier.ts's.
 * x402 v1 has no `extensions` in either message, so v1 402 bodies do not carry the declaration.
 * Part of your project: edit freely.
 */
import { isObject } from "../ops/json-object.js";

/** The extension's key in `extensions`. */
export const PAYMENT_IDENTIFIER = "payment-identifier";
export const PAYMENT_ID_MIN_LENGTH = 16;
export const PAYMENT_ID_MAX_LENGTH = 128;
/** A whole id: letters, digits, "-" and "_" (and 16 to 128 of them, checked separately). */
export const PAYMENT_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/**
 * The declaration every 402 carries: an id is welcome, never required (`required: false`). The same
 * object as @x402/extensions' declarePaymentIdentifierExtension(false) (a repo test keeps them equal),
 * written out so that projects do not depend on that package.
 */
export const PAYMENT_IDENTIFIER_DECLARATION = Object.freeze({
  info: Object.freeze({ required: false }),
  schema: Object.freeze({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: Object.freeze({
      required: Object.freeze({ type: "boolean" }),
      id: Object.freeze({
        type: "string",
        minLength: PAYMENT_ID_MIN_LENGTH,
        maxLength: PAYMENT_ID_MAX_LENGTH,
        pattern: "^[a-zA-Z0-9_-]+$",
      }),
    }),
    required: Object.freeze(["required"]),
  }),
});

/** What a PaymentPayload says about its id: none, a usable one, or one that breaks the format. */
export type PaymentIdOf =
  { kind: "none" } | { kind: "id"; id: string } | { kind: "invalid"; problem: string };

/**
 * The id in a decoded PaymentPayload. A payload without the extension, or whose extension has no
 * `info.id` (the official clients echo the declaration as it is), has none; an `info.id` that is not
 * 16-128 characters of [A-Za-z0-9_-] is invalid (refused: the client meant to use one).
 */
export function paymentIdOf(payload: unknown): PaymentIdOf {
  if (!isObject(payload) || !isObject(payload.extensions)) return { kind: "none" };
  const extension = payload.extensions[PAYMENT_IDENTIFIER];
  if (extension === undefined) return { kind: "none" };
  if (!isObject(extension) || !isObject(extension.info))
    return { kind: "invalid", problem: "is not an object with an `info` object" };
  const id = extension.info.id;
  if (id === undefined) return { kind: "none" };
  if (typeof id !== "string")
    return { kind: "invalid", problem: "has an `info.id` that is not a string" };
  if (
    id.length < PAYMENT_ID_MIN_LENGTH ||
    id.length > PAYMENT_ID_MAX_LENGTH ||
    !PAYMENT_ID_PATTERN.test(id)
  ) {
    const shown =
      id.length > 40
        ? `${JSON.stringify(id.slice(0, 40))}… (${id.length} characters)`
        : JSON.stringify(id);
    return {
      kind: "invalid",
      problem: `has the id ${shown}, which is not ${PAYMENT_ID_MIN_LENGTH} to ${PAYMENT_ID_MAX_LENGTH} characters of letters, digits, "-" and "_"`,
    };
  }
  return { kind: "id", id };
}
