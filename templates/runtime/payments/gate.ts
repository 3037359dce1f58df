/**
 * The payment gate: decides whether the payment a client sent pays for this job, and collects it
 * once the job has succeeded. It offers one "exact" payment per configured network, in the seller's
 * order, at the same price, and hands each payment to the scheme of the network it names (scheme.ts;
 * EVM networks: evm/scheme.ts). Part of your project: edit freely.
 *
 *   verify()  - the network's offline checks (for EVM those of the reference x402 facilitator).
 *   confirm() - checks that depend on chain state, made once the pipeline has reserved the payment.
 *   settle()  - charges the payment, only after the output passed validation.
 * One payment pays for one job: the pipeline enforces that with the ledger, keyed by replayKey().
 */
import type { Ledger } from "../ledger/ledger.js";
import type { ProductionPaymentConfig } from "./config.js";
import { PaymentError } from "../errors.js";
import type { BazaarDeclarations } from "../discovery/bazaar.js";
import { familyById } from "./families.js";
import type { NetworkScheme, Receipt, Reconciled, SentPayment } from "./scheme.js";
import { SETTLEMENT_MARGIN_SECONDS, timeoutFor } from "./settlement.js";
import type { Capability, Logger, PaidPayment } from "../types.js";
import { decodeSentJson, paymentRequiredResponse, type PaymentOffer } from "./x402.js";

export { SETTLEMENT_MARGIN_SECONDS, timeoutFor };

export type HeaderGetter = (name: string) => string | undefined;

/** The response for a missing payment: v1 body + v2 header (see x402.ts). */
export interface PaymentRequiredResponse {
  status: number;
  /** Shared between answers (do not change it): PAYMENT-REQUIRED and Cache-Control. */
  headers: Readonly<Record<string, string>>;
  /** The v1 body, serialized. */
  body: string;
}

export interface PaymentGate {
  /**
   * What we ask for to run `capability` for a job due at `deadline` (Unix seconds): one offer per
   * network, in the seller's order. Each one's maxTimeoutSeconds covers that deadline plus the
   * settlement margin, because the official clients sign validBefore = now + maxTimeoutSeconds.
   */
  offers(capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer[];
  /**
   * Why networks are left out of offers() for a job due at `deadline`: "; not payable on <network>: <why>"
   * for each (Solana, for a far deadline), or "" when every network is offered.
   */
  notOffered(deadline: number): string;
  /**
   * 402 telling the client how to pay for this job. Answers are built once per second for each
   * capability, URL and validity window (a busy server sends thousands of identical 402s).
   */
  paymentRequired(
    capability: Capability,
    resourceUrl: string,
    deadline: number,
    reason?: string,
  ): PaymentRequiredResponse;
  /** Headers to add to a 402 "invalid payment" error, so a client can retry with a correct payment. */
  retryHeaders(
    capability: Capability,
    resourceUrl: string,
    deadline: number,
    reason: string,
  ): Readonly<Record<string, string>>;
  /** The payment header's value, or undefined when the client sent none. */
  paymentHeader(header: HeaderGetter): { name: string; value: string } | undefined;
  /**
   * Checks the payment sent for this job (a header, or MCP's `_meta`) with the scheme of the network it
   * names; throws PaymentError saying what is wrong.
   */
  verify: NetworkScheme["verify"];
  /** The CAIP-2 id of the offered network a verified payment is on (what metrics label it with). */
  networkOf(payment: PaidPayment): string;
  /** The payment's identity in the ledger (its network's: an EVM authorization, a Solana transaction). */
  replayKey(payment: PaidPayment): string;
  /** The replay key of a payment as sent, by decoding only (scheme.ts); undefined when unknown. */
  replayKeyOf(sent: SentPayment): string | undefined;
  /** Chain-state checks, after the authorization is reserved; throws PaymentError. */
  confirm(payment: PaidPayment): Promise<void>;
  /** Charges the payment; throws SettlementError (settlement.ts) when it could not. */
  settle(payment: PaidPayment): Promise<Receipt>;
  /** What became of a settlement sent but not confirmed on `network` (scheme.ts). */
  reconcile(
    network: string,
    ...settlement: Parameters<NonNullable<NetworkScheme["reconcile"]>>
  ): Promise<Reconciled>;
}

/** Distinct 402 answers kept (see answer402): a second's worth for a handful of capabilities and hosts. */
const MAX_CACHED_402S = 256;

/** What the gate uses besides its configuration. */
export interface PaymentGateDeps {
  /** The ledger's cross-instance lock: direct settlement sends one transaction at a time per settler account. */
  exclusive: Ledger["exclusive"];
  /** What a 402 declares about each capability's job for x402 catalogues (discovery/bazaar.ts); absent: nothing. */
  discovery?: BazaarDeclarations;
  /** Where the signature check says, once at start-up, how it recovers signers on this Node. */
  logger?: Logger;
}

/** The startup log: how payments are checked and settled on each network. Never includes secrets. */
export function describePayments(config: ProductionPaymentConfig): string {
  const lines = config.networks.map((n) => familyById(n.family).describeRoute(n));
  if (lines.length === 1) return lines[0]!;
  return `payments offered on ${config.networks.map((n) => n.network.caip2).join(", ")}, in that order; ${config.networks
    .map((n, i) => `${n.network.caip2}: ${lines[i]}`)
    .join("; ")}`;
}

/** One scheme per configured network, in the configured order. */
function createSchemes(config: ProductionPaymentConfig, deps: PaymentGateDeps): NetworkScheme[] {
  const settings = {
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    settleTimeoutSeconds: config.settleTimeoutSeconds,
  };
  return config.networks.map((net) => familyById(net.family).createScheme(net, settings, deps));
}

/** The network name a payment says it is for (v2 accepted.network, v1 network), if it says one. */
function namedNetwork(sent: SentPayment): string | undefined {
  let p: unknown;
  if ("object" in sent) p = sent.object;
  else {
    const decoded = decodeSentJson(sent);
    if (!decoded.ok) return undefined;
    p = decoded.value;
  }
  if (typeof p !== "object" || p === null) return undefined;
  const payment = p as { accepted?: { network?: unknown }; network?: unknown };
  const network =
    typeof payment.accepted === "object" && payment.accepted !== null
      ? payment.accepted.network
      : payment.network;
  return typeof network === "string" ? network : undefined;
}

export function createPaymentGate(
  config: ProductionPaymentConfig,
  deps: PaymentGateDeps,
): PaymentGate {
  const schemes = createSchemes(config, deps);
  // Each offered family says once what it wants known at start-up (EVM: how signatures are checked).
  for (const id of new Set(config.networks.map((n) => n.family)))
    familyById(id).announce?.(deps.logger);
  const first = schemes[0]!;
  const byName = new Map<string, NetworkScheme>();
  for (const s of schemes) {
    byName.set(s.caip2, s);
    byName.set(s.v1Name, s);
  }
  /** The scheme of the payment's network. With one network, that one (its checks name a wrong network). */
  const schemeFor = (sent: SentPayment): NetworkScheme => {
    if (schemes.length === 1) return first;
    const named = namedNetwork(sent);
    if (named === undefined) return first; // malformed: the first scheme's checks say what is wrong
    const scheme = byName.get(named);
    if (scheme) return scheme;
    throw new PaymentError(
      `payment is for network ${JSON.stringify(named).slice(0, 80)} but this service takes payments on ${schemes
        .map((s) => (s.v1Name === s.caip2 ? `"${s.caip2}"` : `"${s.caip2}" (${s.v1Name})`))
        .join(", ")}`,
      { code: "network" },
    );
  };
  /** The scheme that verified a payment (VerifiedPayment.network is one of its names). */
  const schemeOf = (payment: PaidPayment): NetworkScheme => {
    const scheme = byName.get(payment.network);
    if (!scheme) throw new Error(`no payment scheme for network ${payment.network}`); // verify() made it: unreachable
    return scheme;
  };

  /** The schemes that can take payment for a job due at `deadline` (Solana: jobs due soon only). */
  const payable = (deadline: number | undefined, nowMs = Date.now()) =>
    deadline === undefined ? schemes : schemes.filter((s) => !s.unpayable?.(deadline, nowMs));

  const offers = (capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer[] =>
    payable(deadline).map((s) => s.offer(capability, resourceUrl, deadline));

  /** What a 402 says about networks left out for this job (Solana, for a far deadline). */
  const leftOut = (deadline: number, nowMs: number): string =>
    schemes
      .flatMap((s) => {
        const why = s.unpayable?.(deadline, nowMs);
        return why === undefined ? [] : [`; not payable on ${s.caip2}: ${why}`];
      })
      .join("");

  /**
   * The 402 for a job: v2 header and v1 body, with the job's discovery declaration when there is one.
   * What it says depends on the capability, the URL, the reason, the offered validity window and the
   * current second (the declaration's example deadlines), so it is kept for that second: a cache of
   * recent answers, emptied when it grows past MAX_CACHED_402S.
   */
  const cached402 = new Map<string, { headers: Readonly<Record<string, string>>; body: string }>();
  const answer402 = (
    capability: Capability,
    resourceUrl: string,
    deadline: number,
    reason: string,
  ) => {
    const now = Date.now();
    const timeout = timeoutFor(config.maxTimeoutSeconds, deadline, now);
    const missing = leftOut(deadline, now);
    const key = `${capability.name}\n${resourceUrl}\n${timeout}\n${Math.floor(now / 1000)}\n${reason}\n${missing}`;
    let answer = cached402.get(key);
    if (!answer) {
      const discovery = deps.discovery?.(capability, now);
      const offered: PaymentOffer[] = payable(deadline, now).map((s) => ({
        ...s.offer(capability, resourceUrl),
        // A network whose payment has its own life (Solana's blockhash) keeps that window.
        ...(!s.fixedWindow && { maxTimeoutSeconds: timeout }),
        ...(discovery && { discovery }),
      }));
      const response = paymentRequiredResponse(offered, `${reason}${missing}`, {
        resourceUrl,
        description: capability.declaration.description ?? `Run capability "${capability.name}"`,
      });
      answer = { headers: Object.freeze(response.headers), body: JSON.stringify(response.body) };
      if (cached402.size >= MAX_CACHED_402S) cached402.clear();
      cached402.set(key, answer);
    }
    return answer;
  };

  const paymentHeader: PaymentGate["paymentHeader"] = (header) => {
    for (const name of ["payment-signature", "x-payment"]) {
      const value = header(name);
      if (value !== undefined && value !== "") return { name: name.toUpperCase(), value };
    }
    return undefined;
  };

  return {
    offers,
    notOffered: (deadline) => leftOut(deadline, Date.now()),
    paymentHeader,

    paymentRequired(
      capability,
      resourceUrl,
      deadline,
      reason = "payment required: send a PAYMENT-SIGNATURE header",
    ) {
      return { status: 402, ...answer402(capability, resourceUrl, deadline, reason) };
    },

    retryHeaders(capability, resourceUrl, deadline, reason) {
      return answer402(capability, resourceUrl, deadline, reason).headers;
    },

    verify: (sent, capability, job, resourceUrl) =>
      schemeFor(sent).verify(sent, capability, job, resourceUrl),
    // Never throws: it is called after a settlement, whose result must reach the client.
    networkOf: (payment) => byName.get(payment.network)?.caip2 ?? payment.network,
    replayKey: (payment) => schemeOf(payment).replayKey(payment),
    replayKeyOf(sent) {
      try {
        return schemeFor(sent).replayKeyOf?.(sent);
      } catch {
        return undefined; // a network we do not take: verify() says so
      }
    },
    confirm: (payment) => schemeOf(payment).confirm(payment),
    settle: (payment) => schemeOf(payment).settle(payment),
    async reconcile(network, ...settlement) {
      const scheme = byName.get(network);
      if (!scheme?.reconcile)
        return { status: "unknown", reason: `no way to check settlements on ${network}` };
      return scheme.reconcile(...settlement);
    },
  };
}
