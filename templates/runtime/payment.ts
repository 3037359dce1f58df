/**
 * The payment gate: decides whether the payment a client sent pays for this job.
 * Verification is fully offline: the EIP-712 signature must recover the payer, and the
 * authorization must pay us enough, on our network and token, for long enough to settle.
 * Part of your project: edit freely.
 *
 * Not done here (yet): settling the payment on chain and remembering used (from, nonce) pairs.
 * Until a settle step exists, a verified authorization is proof of willingness to pay, not money
 * received, and one authorization can be replayed for several jobs. See `settle` below.
 */
import { recoverTypedDataAddress } from "viem/utils"; // viem/utils loads faster than "viem"
import type { PaymentConfig } from "./config.js";
import { PaymentError } from "./errors.js";
import type { Capability, VerifiedPayment } from "./types.js";
import {
  decodePaymentHeader,
  type AcceptedRequirement,
  paymentRequiredHeaders,
  paymentRequiredResponse,
  type PaymentOffer,
  TRANSFER_WITH_AUTHORIZATION,
} from "./x402.js";

/**
 * Seconds an authorization must stay valid after the job's deadline (or now, if later).
 * Settlement happens after the handler returns, and submitting transferWithAuthorization
 * and getting it into a block takes a few seconds; an authorization that expires in between
 * would let the client get the result for free. 6 s is the margin the reference x402
 * facilitator requires for `validBefore`, so clients that pay elsewhere already leave it.
 */
export const SETTLEMENT_MARGIN_SECONDS = 6;

export type HeaderGetter = (name: string) => string | undefined;

/** The response for a missing payment: v1 body + v2 header (see x402.ts). */
export interface PaymentRequiredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface PaymentGate {
  /** What we ask for to run `capability`. */
  offer(capability: Capability, resourceUrl: string): PaymentOffer;
  /** 402 telling the client how to pay. */
  paymentRequired(
    capability: Capability,
    resourceUrl: string,
    reason?: string,
  ): PaymentRequiredResponse;
  /** Headers to add to a 402 "invalid payment" error, so a client can retry with a correct payment. */
  retryHeaders(capability: Capability, resourceUrl: string, reason: string): Record<string, string>;
  /** The payment header's value, or undefined when the client sent none. */
  paymentHeader(header: HeaderGetter): { name: string; value: string } | undefined;
  /** Checks the payment for this job; throws PaymentError saying what is wrong. */
  verify(
    header: HeaderGetter,
    capability: Capability,
    job: { deadline: number },
  ): Promise<VerifiedPayment>;
  /**
   * Optional: called by the pipeline after the handler's output passed validation, before the
   * result is sent. This is where settlement goes: reserve (from, nonce) in a store shared by all
   * instances before running the handler (replay protection), then submit the authorization via a
   * facilitator's /settle here, and throw PaymentError if it fails so nothing is delivered.
   */
  settle?(payment: VerifiedPayment, capability: Capability): Promise<void>;
}

const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

export function createPaymentGate(config: PaymentConfig): PaymentGate {
  const { network, payTo } = config;

  const offer = (capability: Capability, resourceUrl: string): PaymentOffer => ({
    network,
    payTo,
    amount: capability.priceAtomic,
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    resourceUrl,
    description: capability.declaration.description ?? `Run capability "${capability.name}"`,
  });

  const paymentHeader: PaymentGate["paymentHeader"] = (header) => {
    for (const name of ["payment-signature", "x-payment"]) {
      const value = header(name);
      if (value !== undefined && value !== "") return { name: name.toUpperCase(), value };
    }
    return undefined;
  };

  /** What differs between a v2 client's `accepted` and our offer, or undefined. */
  const acceptedMismatch = (a: AcceptedRequirement, capability: Capability): string | undefined => {
    if (a.amount !== capability.priceAtomic)
      return `amount ${a.amount} (price of "${capability.name}" is ${capability.priceAtomic})`;
    if (!sameAddress(a.asset, network.asset)) return `asset ${a.asset} (expected ${network.asset})`;
    if (!sameAddress(a.payTo, payTo)) return `payTo ${a.payTo} (expected ${payTo})`;
    return undefined;
  };

  return {
    offer,
    paymentHeader,

    paymentRequired(
      capability,
      resourceUrl,
      reason = "payment required: send a PAYMENT-SIGNATURE header",
    ) {
      return paymentRequiredResponse(offer(capability, resourceUrl), reason);
    },

    retryHeaders(capability, resourceUrl, reason) {
      return paymentRequiredHeaders(offer(capability, resourceUrl), reason);
    },

    async verify(header, capability, job) {
      const sent = paymentHeader(header);
      if (!sent) throw new PaymentError("no payment header: send PAYMENT-SIGNATURE");
      const decoded = decodePaymentHeader(sent.value);
      if (!decoded.ok) throw new PaymentError(`${sent.name} header ${decoded.reason}`);
      const p = decoded.value;

      // The scheme and network the client says it used. Both x402 names of our network are fine.
      const [scheme, clientNetwork] =
        p.x402Version === 2 ? [p.accepted.scheme, p.accepted.network] : [p.scheme, p.network];
      if (scheme !== "exact")
        throw new PaymentError(`unsupported payment scheme "${scheme}": only "exact" is accepted`);
      if (clientNetwork !== network.caip2 && clientNetwork !== network.v1Name)
        throw new PaymentError(
          `payment is for network "${clientNetwork}" but this service takes payments on "${network.caip2}" (${network.v1Name})`,
        );

      if (p.x402Version === 2) {
        // v2 clients echo the requirement they chose; it must be what we offer for this capability.
        const mismatch = acceptedMismatch(p.accepted, capability);
        if (mismatch)
          throw new PaymentError(
            `accepted requirement does not match this capability's offer: ${mismatch}; fetch a fresh 402 and pay what it asks`,
          );
      }

      const { authorization: auth, signature } = p.payload;
      let signer: string;
      try {
        signer = await recoverTypedDataAddress({
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
          signature,
        });
      } catch {
        throw new PaymentError("payment signature is malformed");
      }
      if (!sameAddress(signer, auth.from))
        throw new PaymentError(
          `payment signature does not match authorization.from ${auth.from}: sign TransferWithAuthorization over the domain ` +
            `{name: "${network.assetName}", version: "${network.assetVersion}", chainId: ${network.chainId}, verifyingContract: ${network.asset}} with that account`,
        );

      if (!sameAddress(auth.to, payTo))
        throw new PaymentError(
          `authorization pays ${auth.to}, but this service is paid at ${payTo}`,
        );
      if (BigInt(auth.value) < BigInt(capability.priceAtomic))
        throw new PaymentError(
          `authorization value ${auth.value} is less than the price of "${capability.name}": ${capability.priceAtomic} atomic units`,
        );

      const now = Math.floor(Date.now() / 1000);
      if (BigInt(auth.validAfter) > BigInt(now))
        throw new PaymentError(
          `authorization is not valid yet (validAfter ${auth.validAfter}, now ${now})`,
        );
      if (BigInt(auth.validBefore) <= BigInt(now))
        throw new PaymentError(
          `authorization expired (validBefore ${auth.validBefore}, now ${now}); sign a new one`,
        );
      const needed =
        BigInt(Math.ceil(Math.max(now, job.deadline))) + BigInt(SETTLEMENT_MARGIN_SECONDS);
      if (BigInt(auth.validBefore) < needed)
        throw new PaymentError(
          `authorization expires too early (validBefore ${auth.validBefore}): it must stay valid until ${needed}, ` +
            `the job deadline plus ${SETTLEMENT_MARGIN_SECONDS} s to settle`,
        );

      return {
        x402Version: p.x402Version,
        scheme: "exact",
        network: clientNetwork,
        payer: auth.from,
        amount: auth.value,
        authorization: auth,
        signature,
      };
    },
  };
}
