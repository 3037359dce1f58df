/**
 * The payment gate: decides whether the payment a client sent pays for this job, and collects it
 * once the job has succeeded. Part of your project: edit freely.
 *
 *   verify()  - the checks the reference x402 facilitator makes, offline: scheme, network, the
 *               requirement the client accepted, the EIP-712 signature (EIP-1271 contract
 *               wallets via X402_RPC_URL), payee, exact amount, validity window.
 *   confirm() - checks that depend on chain state, made once the pipeline has reserved the
 *               authorization: balance and unused nonce (with X402_RPC_URL), then the
 *               facilitator's /verify (facilitator route).
 *   settle()  - charges the payment (settlement.ts), only after the output passed validation.
 * One authorization pays for one job: the pipeline enforces that with a replay store (replay.ts).
 */
import { recoverTypedDataAddress } from "viem/utils"; // viem/utils loads faster than "viem"
import type { ProductionPaymentConfig } from "../ops/config.js";
import { PaymentError } from "../errors.js";
import { createFacilitatorSettler } from "./facilitator.js";
import type { ChainChecks } from "./onchain.js";
import type { SettlementResult, Settler } from "./settlement.js";
import type { Capability, VerifiedPayment } from "../types.js";
import {
  decodePaymentHeader,
  type AcceptedRequirement,
  paymentRequiredHeaders,
  paymentRequiredResponse,
  type PaymentOffer,
  requirementV1,
  requirementV2,
  transferTypedData,
} from "./x402.js";

/**
 * Seconds an authorization must stay valid after the job's deadline (or now, if later).
 * Settlement starts when the handler returns (at the latest at the deadline), and the transfer
 * must be mined before validBefore or the token contract refuses it: the client would get the
 * result for free. The reference facilitator refuses to settle an authorization with less than
 * 6 s left; on top of that come one or two Base blocks (2 s each) to get mined, the facilitator
 * or RPC round trips, and clock skew between client, server and chain. 15 s covers those with
 * room to spare while costing clients nothing (they sign validBefore = now + 300 s by default).
 */
export const SETTLEMENT_MARGIN_SECONDS = 15;

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
    resourceUrl: string,
  ): Promise<VerifiedPayment>;
  /** Chain-state checks, after the authorization is reserved; throws PaymentError. */
  confirm(payment: VerifiedPayment): Promise<void>;
  /** Charges the payment; throws SettlementError (settlement.ts) when it could not. */
  settle(payment: VerifiedPayment): Promise<SettlementResult>;
}

const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The configured settlement route as a Settler. */
function createSettler(config: ProductionPaymentConfig): Settler {
  const route = config.settlement;
  switch (route.kind) {
    case "custom":
      return route.settler;
    case "facilitator":
      return createFacilitatorSettler(route.url, config.settleTimeoutSeconds * 1000);
    case "direct": {
      // viem's wallet code is loaded only in this mode, starting now, off the request path.
      const loading = import("./direct-settlement.js").then((m) =>
        m.createDirectSettler({
          rpcUrl: route.rpcUrl,
          settlerKey: route.settlerKey,
          network: config.network,
          timeoutSeconds: config.settleTimeoutSeconds,
        }),
      );
      loading.catch(() => undefined); // reported by the first settle() instead of crashing startup
      return { settle: async (payment) => (await loading).settle(payment) };
    }
  }
}

/** One line for the startup log: how payments are checked and settled. Never includes secrets. */
export function describePayments(config: ProductionPaymentConfig): string {
  // URLs lose their query, credentials and (for RPC endpoints, which often embed an API key) path.
  const origin = (url: string): string => new URL(url).origin;
  const route = config.settlement;
  const settle =
    route.kind === "facilitator"
      ? `payments settle through the x402 facilitator at ${origin(route.url)}${new URL(route.url).pathname}`
      : route.kind === "direct"
        ? `payments settle directly: this server sends transferWithAuthorization via ${origin(route.rpcUrl)} from the X402_SETTLER_KEY account, which pays the gas`
        : "payments settle through the custom settler passed as option payment.settler";
  const chain = config.rpcUrl
    ? `balances, nonces and contract-wallet signatures are checked on chain via ${origin(config.rpcUrl)}`
    : "no on-chain checks before running jobs (set X402_RPC_URL to refuse unfunded payers and used nonces up front)";
  return `${settle}; ${chain}`;
}

export function createPaymentGate(config: ProductionPaymentConfig): PaymentGate {
  const { network, payTo } = config;
  const settler = createSettler(config);

  // The on-chain checks load the full viem package, so only when an RPC endpoint is configured.
  const rpcUrl = config.rpcUrl;
  let chainChecks: Promise<ChainChecks> | undefined;
  const chain = rpcUrl
    ? () =>
        (chainChecks ??= import("./onchain.js").then((m) => m.createChainChecks(rpcUrl, network)))
    : undefined;

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

  const domainText = `{name: "${network.assetName}", version: "${network.assetVersion}", chainId: ${network.chainId}, verifyingContract: ${network.asset}}`;

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

    async verify(header, capability, job, resourceUrl) {
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
      let signer: string | undefined;
      try {
        signer = await recoverTypedDataAddress({ ...transferTypedData(network, auth), signature });
      } catch {
        signer = undefined; // not a 65-byte ECDSA signature; a contract wallet's may still be valid
      }
      if (signer === undefined || !sameAddress(signer, auth.from)) {
        // Not signed by `from` as a regular account. A smart-contract wallet (EIP-1271) can only
        // be checked on chain.
        const contract = chain ? await (await chain()).contractSignature(auth, signature) : "eoa";
        if (contract === "invalid")
          throw new PaymentError(
            `payment signature is refused by the contract wallet ${auth.from} (EIP-1271): sign TransferWithAuthorization over the domain ${domainText}`,
          );
        if (contract === "eoa") {
          const why =
            signer === undefined
              ? "payment signature is malformed"
              : `payment signature does not match authorization.from ${auth.from}: sign TransferWithAuthorization over the domain ${domainText} with that account`;
          throw new PaymentError(
            chain
              ? why
              : `${why} (smart-contract wallets cannot be checked here: this service has no X402_RPC_URL configured)`,
          );
        }
      }

      if (!sameAddress(auth.to, payTo))
        throw new PaymentError(
          `authorization pays ${auth.to}, but this service is paid at ${payTo}`,
        );
      // Exactly the price, as the reference facilitator requires for "exact": more would be
      // charged in full for the same job, which no client means to do.
      if (BigInt(auth.value) !== BigInt(capability.priceAtomic))
        throw new PaymentError(
          `authorization value ${auth.value} is not the price of "${capability.name}": pay exactly ${capability.priceAtomic} atomic units`,
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

      const ours = offer(capability, resourceUrl);
      return {
        x402Version: p.x402Version,
        scheme: "exact",
        network: clientNetwork,
        payer: auth.from,
        amount: auth.value,
        authorization: auth,
        signature,
        chainId: network.chainId,
        asset: network.asset,
        payload: p.raw,
        requirement: p.x402Version === 2 ? requirementV2(ours) : requirementV1(ours),
      };
    },

    async confirm(payment) {
      if (chain) await (await chain()).checkFunds(payment);
      if (settler.verify) await settler.verify(payment);
    },

    settle: (payment) => settler.settle(payment),
  };
}
