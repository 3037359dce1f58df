/**
 * x402 offers and what is built from them: the `accepts` entries (v1 and v2), the 402 "payment
 * required" response (v1 body plus v2 PAYMENT-REQUIRED header) and the receipt headers of a settled
 * payment. Decoding what a client sends is x402.ts's (which re-exports this file).
 * Part of your project: edit freely.
 */
import { type ResolvedNetwork, v1Knows } from "./networks.js";
import { PAYMENT_IDENTIFIER, PAYMENT_IDENTIFIER_DECLARATION } from "./payment-identifier.js";

/**
 * What a 402 may say about the job besides its price, for x402 catalogues (see bazaar.ts). Never part
 * of what is verified or settled.
 */
export interface OfferDiscovery {
  /** v2: the PAYMENT-REQUIRED payload's `extensions` (e.g. `{ bazaar: { info, schema } }`). */
  extensions: Record<string, unknown>;
  /** v1: the `accepts` entry's `outputSchema`. */
  outputSchema: Record<string, unknown>;
}

/** What we ask for: one capability's price on one of our networks. */
/**
 * A network as an offer names it: an EVM network with its token's EIP-712 domain, or another
 * family's network, which says its family (Solana: "svm") and carries its own `extra`.
 */
export type OfferNetwork =
  ResolvedNetwork | { family: string; v1Name: string; caip2: string; asset: string };

export interface PaymentOffer {
  network: OfferNetwork;
  /** EVM: 0x address; Solana: base58 address. */
  payTo: string;
  /** USDC atomic units, decimal string. */
  amount: string;
  maxTimeoutSeconds: number;
  resourceUrl: string;
  description: string;
  /** Only in 402s: the job's discovery declaration. */
  discovery?: OfferDiscovery;
  /** The requirement's `extra` when not the EVM token's EIP-712 name and version (Solana: `{ feePayer }`). */
  extra?: Record<string, unknown>;
}

/** True for an offer on a network that names its family (not an EVM network with its EIP-712 token). */
function familyNamed(network: OfferNetwork): boolean {
  return "family" in network;
}

/** The requirement's `extra`: the offer's own (Solana's fee payer), or the EVM token's EIP-712 domain name and version. */
function extraOf(offer: PaymentOffer): Record<string, unknown> {
  if (offer.extra) return offer.extra;
  const n = offer.network;
  return "assetName" in n ? { name: n.assetName, version: n.assetVersion } : {};
}

export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

/** Strict standard-base64 JSON decoding: no base64url, no whitespace, valid UTF-8, an object. */
/** The v1 `accepts` entry: what the spec's 402 body shows (section 2.6). */
export function requirementV1(offer: PaymentOffer) {
  return {
    scheme: "exact",
    network: offer.network.v1Name,
    maxAmountRequired: offer.amount,
    resource: offer.resourceUrl,
    description: offer.description,
    mimeType: "application/json",
    payTo: offer.payTo,
    maxTimeoutSeconds: offer.maxTimeoutSeconds,
    asset: offer.network.asset,
    extra: extraOf(offer),
    ...(offer.discovery ? { outputSchema: offer.discovery.outputSchema } : {}),
  };
}

/** The v2 `accepts` entry: a v2 client copies it verbatim into `accepted`. */
export function requirementV2(offer: PaymentOffer) {
  return {
    scheme: "exact",
    network: offer.network.caip2,
    amount: offer.amount,
    asset: offer.network.asset,
    payTo: offer.payTo,
    maxTimeoutSeconds: offer.maxTimeoutSeconds,
    extra: extraOf(offer),
  };
}

/**
 * One offer or several (one per network, in the seller's order); the first gives resource and
 * discovery. None at all (a job no offered network can pay for): then `resource` must be given.
 */
export type Offers = PaymentOffer | readonly PaymentOffer[];

/** The resource a 402 is about, when no offer says it. */
export interface ResourceInfo {
  resourceUrl: string;
  description: string;
}

const listOf = (offers: Offers): readonly PaymentOffer[] =>
  Array.isArray(offers) ? offers : [offers as PaymentOffer];

/**
 * The x402 v2 PaymentRequired object: what the PAYMENT-REQUIRED header carries, and MCP's tool result.
 * Its `extensions` always declare payment-identifier (payment-identifier.ts), after the offer's discovery.
 */
export function paymentRequiredV2(offers: Offers, error: string, resource?: ResourceInfo) {
  const all = listOf(offers);
  const offer: ResourceInfo & { discovery?: OfferDiscovery } = all[0] ?? resource!;
  return {
    x402Version: 2,
    error,
    resource: {
      url: offer.resourceUrl,
      description: offer.description,
      mimeType: "application/json",
    },
    accepts: all.map(requirementV2),
    extensions: {
      ...offer.discovery?.extensions,
      [PAYMENT_IDENTIFIER]: PAYMENT_IDENTIFIER_DECLARATION,
    },
  };
}

/** The PAYMENT-REQUIRED header (v2) and Cache-Control for any 402. */
export function paymentRequiredHeaders(
  offers: Offers,
  error: string,
  resource?: ResourceInfo,
): Record<string, string> {
  return {
    "PAYMENT-REQUIRED": encodeBase64Json(paymentRequiredV2(offers, error, resource)),
    "Cache-Control": "no-store",
  };
}

/**
 * The v1 body's `accepts`, in the seller's order: the offers on networks x402 v1 clients know by
 * name (they have no CAIP-2 ids): EVM ones and Solana's `solana` and `solana-devnet`. When no EVM
 * network is known, every EVM offer under its CAIP-2 id, as a custom chain has always been shown;
 * a custom Solana network (CAIP-2 only) is left out, since v1 clients cannot pay on it.
 */
export function requirementsV1(offers: Offers) {
  const all = listOf(offers);
  const evm = all.filter((o) => !familyNamed(o.network));
  const evmShown = evm.some((o) => v1Knows(o.network))
    ? evm.filter((o) => v1Knows(o.network))
    : evm;
  return all
    .filter((o) => (familyNamed(o.network) ? v1Knows(o.network) : evmShown.includes(o)))
    .map(requirementV1);
}

/** The full 402 for a missing payment: the v1 body the spec shows plus the v2 header. */
export function paymentRequiredResponse(offers: Offers, error: string, resource?: ResourceInfo) {
  return {
    status: 402,
    headers: paymentRequiredHeaders(offers, error, resource),
    body: { x402Version: 1, error, accepts: requirementsV1(offers) },
  };
}

/** The receipt of a settled payment: PAYMENT-RESPONSE for v2 clients, X-PAYMENT-RESPONSE for v1. */
export function paymentResponseHeaders(
  x402Version: number,
  receipt: { transaction: string; network: string; payer: string },
): Record<string, string> {
  const name = x402Version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE";
  const { transaction, network, payer } = receipt;
  return { [name]: encodeBase64Json({ success: true, transaction, network, payer }) };
}
