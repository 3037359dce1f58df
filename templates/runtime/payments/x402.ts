/**
 * x402 wire format, and nothing else: decoding the payment header a client sends and building the
 * 402 "payment required" response (built from offers in x402-offers.ts, re-exported here). Deciding
 * whether a payment is good is payment.ts's job.
 * Part of your project: edit freely.
 *
 * x402 v2 clients read the PAYMENT-REQUIRED header and answer with PAYMENT-SIGNATURE;
 * v1 clients read the JSON body and answer with X-PAYMENT. One 402 serves both.
 */
import { isObject } from "../ops/json-object.js";
import type { ResolvedNetwork } from "./networks.js";

export {
  encodeBase64Json,
  type OfferDiscovery,
  type OfferNetwork,
  type Offers,
  paymentRequiredHeaders,
  paymentRequiredResponse,
  paymentRequiredV2,
  paymentResponseHeaders,
  type PaymentOffer,
  requirementsV1,
  requirementV1,
  requirementV2,
  type ResourceInfo,
} from "./x402-offers.js";

/** Payment headers above this size are refused before decoding (a real one is under 2 KiB). */
export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;

/** EIP-3009's typed-data type, signed by the payer over the token's EIP-712 domain. */
export const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

type Hex = `0x${string}`;

/** EIP-3009 TransferWithAuthorization fields; numbers are decimal strings. */
export interface Authorization {
  from: Hex;
  to: Hex;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

/**
 * The EIP-712 typed data a payer signs for an authorization: the token's domain, the EIP-3009 type, and
 * the message with its numbers as bigints. Signature checks (offline recovery, EIP-1271 on chain) use this.
 */
export function transferTypedData(network: ResolvedNetwork, auth: Authorization) {
  return {
    domain: {
      name: network.assetName,
      version: network.assetVersion,
      chainId: network.chainId,
      verifyingContract: network.asset,
    },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: "TransferWithAuthorization",
    message: {
      from: auth.from,
      to: auth.to,
      value: BigInt(auth.value),
      validAfter: BigInt(auth.validAfter),
      validBefore: BigInt(auth.validBefore),
      nonce: auth.nonce,
    },
  } as const;
}

export interface ExactEvmPayload {
  signature: Hex;
  authorization: Authorization;
}

/** What a v2 client says it accepted (a copy of one of our `accepts` entries). */
export interface AcceptedRequirement {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds?: number;
  extra?: Record<string, unknown>;
}

export type PaymentPayload =
  | { x402Version: 2; resource?: unknown; accepted: AcceptedRequirement; payload: ExactEvmPayload }
  | { x402Version: 1; scheme: string; network: string; payload: ExactEvmPayload };

/** A checked payment payload plus the decoded JSON exactly as the client sent it. */
export type DecodedPayment = PaymentPayload & { raw: Record<string, unknown> };

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^(0|[1-9]\d{0,77})$/; // fits in uint256
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x([0-9a-fA-F]{2})+$/;

export function decodeBase64Json(text: string): Decoded<Record<string, unknown>> {
  if (text.length > MAX_PAYMENT_HEADER_BYTES)
    return fail(`is larger than ${MAX_PAYMENT_HEADER_BYTES} bytes`);
  if (text.length === 0 || text.length % 4 !== 0 || !BASE64.test(text))
    return fail("is not standard base64");
  let json: string;
  try {
    // Passed as a Uint8Array: a Buffer argument costs tsc a structural pass over every typed array.
    const bytes: Uint8Array = Buffer.from(text, "base64");
    json = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail("is not base64 of UTF-8 text");
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return fail("is not base64 of JSON");
  }
  if (!isObject(value)) return fail("is not base64 of a JSON object");
  return { ok: true, value };
}

/**
 * A payment header's JSON, decoded once per request: the gate, the job's identity, the
 * payment-identifier lookup and the scheme all read the same sent header (one object per request,
 * jobs/channel.ts), so it is decoded the first time and shared (nobody modifies it).
 */
const decodedHeaders = new WeakMap<{ value: string }, Decoded<Record<string, unknown>>>();
export function decodeSentJson(sent: { value: string }): Decoded<Record<string, unknown>> {
  let decoded = decodedHeaders.get(sent);
  if (decoded === undefined) {
    decoded = decodeBase64Json(sent.value);
    decodedHeaders.set(sent, decoded);
  }
  return decoded;
}

/** Decodes a PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1) value (or a sent header) and checks its shape. */
export function decodePaymentHeader(text: string | { value: string }): Decoded<DecodedPayment> {
  const decoded = typeof text === "string" ? decodeBase64Json(text) : decodeSentJson(text);
  if (!decoded.ok) return decoded;
  return checkPaymentPayload(decoded.value);
}

/**
 * A PaymentPayload sent as JSON rather than in a header (MCP's `_meta["x402/payment"]`): the same
 * checks, the same size bound, and x402 v2 only (v1 has no MCP transport).
 */
export function decodePaymentObject(value: unknown): Decoded<DecodedPayment> {
  if (!isObject(value)) return fail("is not a PaymentPayload object");
  if (JSON.stringify(value).length > MAX_PAYMENT_HEADER_BYTES)
    return fail(`is larger than ${MAX_PAYMENT_HEADER_BYTES} bytes`);
  if (value.x402Version !== 2)
    return fail(
      `has x402Version ${JSON.stringify(value.x402Version)}: send an x402 v2 PaymentPayload`,
    );
  return checkPaymentPayload(value);
}

/** The shape checks of a decoded PaymentPayload (v1 or v2). */
function checkPaymentPayload(p: Record<string, unknown>): Decoded<DecodedPayment> {
  if (p.x402Version !== 1 && p.x402Version !== 2)
    return fail(`has unsupported x402Version ${JSON.stringify(p.x402Version)} (supported: 1, 2)`);

  const payload = checkExactPayload(p.payload);
  if (typeof payload === "string") return fail(payload);

  if (p.x402Version === 2) {
    const a = p.accepted;
    if (!isObject(a)) return fail("is missing `accepted` (the payment requirement you chose)");
    for (const key of ["scheme", "network", "amount", "asset", "payTo"] as const)
      if (typeof a[key] !== "string") return fail(`has no string accepted.${key}`);
    return {
      ok: true,
      value: {
        x402Version: 2,
        resource: p.resource,
        accepted: a as unknown as AcceptedRequirement,
        payload,
        raw: p,
      },
    };
  }
  if (typeof p.scheme !== "string") return fail("has no string `scheme`");
  if (typeof p.network !== "string") return fail("has no string `network`");
  return {
    ok: true,
    value: { x402Version: 1, scheme: p.scheme, network: p.network, payload, raw: p },
  };
}

/** Returns the payload, or a string saying what is wrong with it. */
function checkExactPayload(value: unknown): ExactEvmPayload | string {
  if (!isObject(value)) return "has no `payload` object";
  if (typeof value.signature !== "string" || !SIGNATURE.test(value.signature))
    return "has no hex payload.signature";
  const auth = value.authorization;
  if (!isObject(auth)) return "has no payload.authorization object";
  const checks: Array<[keyof Authorization, RegExp, string]> = [
    ["from", ADDRESS, "an address"],
    ["to", ADDRESS, "an address"],
    ["value", UINT, "a decimal string"],
    ["validAfter", UINT, "a decimal string"],
    ["validBefore", UINT, "a decimal string"],
    ["nonce", BYTES32, "32 bytes of hex"],
  ];
  for (const [key, pattern, what] of checks) {
    const field = auth[key];
    if (typeof field !== "string" || !pattern.test(field))
      return `has payload.authorization.${key} that is not ${what}`;
  }
  return { signature: value.signature as Hex, authorization: auth as unknown as Authorization };
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
