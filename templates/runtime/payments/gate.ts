/**
 * The payment gate: decides whether the payment a client sent pays for this job, and collects it
 * once the job has succeeded. Part of your project: edit freely.
 *
 *   verify()  - the checks the reference x402 facilitator makes, offline (verify.ts): scheme,
 *               network, the requirement the client accepted, the EIP-712 signature (EIP-1271
 *               contract wallets via X402_RPC_URL), payee, exact amount, validity window.
 *   confirm() - checks that depend on chain state, made once the pipeline has reserved the
 *               authorization: balance and unused nonce (with X402_RPC_URL), then the
 *               facilitator's /verify (facilitator route).
 *   settle()  - charges the payment (settlement.ts), only after the output passed validation.
 * One authorization pays for one job: the pipeline enforces that with a replay store (replay.ts).
 */
import { PaymentError } from "../errors.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ProductionPaymentConfig } from "../ops/config.js";
import type { BazaarDeclarations } from "./bazaar.js";
import type { ChainChecks } from "./onchain.js";
import { SETTLEMENT_MARGIN_SECONDS, type SettlementResult, type Settler } from "./settlement.js";
import type { Capability, Logger, VerifiedPayment } from "../types.js";
import type { SentPayment } from "./verify.js";
import { paymentRequiredResponse, type PaymentOffer } from "./x402.js";

export { SETTLEMENT_MARGIN_SECONDS };

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
   * What we ask for to run `capability` for a job due at `deadline` (Unix seconds): its
   * maxTimeoutSeconds covers that deadline plus the settlement margin, because the official
   * clients sign validBefore = now + maxTimeoutSeconds.
   */
  offer(capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer;
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
  /** Checks the payment sent for this job (a header, or MCP's `_meta`); throws PaymentError saying what is wrong. */
  verify(
    sent: SentPayment,
    capability: Capability,
    job: { deadline: number },
    resourceUrl: string,
  ): Promise<VerifiedPayment>;
  /** Chain-state checks, after the authorization is reserved; throws PaymentError. */
  confirm(payment: VerifiedPayment): Promise<void>;
  /** Charges the payment; throws SettlementError (settlement.ts) when it could not. */
  settle(payment: VerifiedPayment): Promise<SettlementResult>;
}

/** Distinct 402 answers kept (see answer402): a second's worth for a handful of capabilities and hosts. */
const MAX_CACHED_402S = 256;

/** Seconds of slack in an offered validity window, for clock skew between client and server. */
const CLOCK_SLACK_SECONDS = 30;

/**
 * maxTimeoutSeconds to offer: the configured default, or more when the job's deadline needs it.
 * Clients sign validBefore = now + maxTimeoutSeconds, and the gate needs validBefore to be at least
 * the deadline plus SETTLEMENT_MARGIN_SECONDS, so a one-hour job is offered a bit over an hour. The
 * deadline itself is bounded (MAX_DEADLINE_SECONDS, 7 days by default), so this is too.
 */
export function timeoutFor(configured: number, deadline: number | undefined, nowMs = Date.now()) {
  if (deadline === undefined) return configured;
  const needed =
    Math.ceil(deadline - nowMs / 1000) + SETTLEMENT_MARGIN_SECONDS + CLOCK_SLACK_SECONDS;
  return Math.max(configured, needed);
}

/** What the gate uses besides its configuration. */
export interface PaymentGateDeps {
  /** The ledger's cross-instance lock: direct settlement sends one transaction at a time per settler account. */
  exclusive: Ledger["exclusive"];
  /** What a 402 declares about each capability's job for x402 catalogues (bazaar.ts); absent: nothing. */
  discovery?: BazaarDeclarations;
  /** Where the signature check says, once at start-up, how it recovers signers on this Node. */
  logger?: Logger;
}

/** The configured settlement route as a Settler. */
function createSettler(config: ProductionPaymentConfig, deps: PaymentGateDeps): Settler {
  const route = config.settlement;
  const network = config.network;
  switch (route.kind) {
    case "custom":
      return route.settler;
    case "facilitator": {
      // Loaded with the gate (production only), off the request path. Each payment goes to the
      // first facilitator whose /supported lists its kind (facilitator-router.ts); startup's check
      // has asked them already (server.ts), and a router that was not asked yet asks now.
      const loading = Promise.all([
        import("./facilitator.js"),
        import("./facilitator-router.js"),
      ]).then(([f, r]) => {
        const router = r.routerFor(route, config.settleTimeoutSeconds * 1000);
        return f.settlerFor(async (payment) => {
          await router.initialize().catch((err: unknown) => {
            throw new PaymentError(
              `payment could not be verified, so the job was not run: ${err instanceof Error ? err.message : String(err)}; try again later`,
              { cause: err, code: "facilitator_unavailable" },
            );
          });
          const client = router.clientFor(payment.x402Version, network, "exact");
          if (client) return client;
          throw new PaymentError(
            `no configured x402 facilitator settles x402 v${payment.x402Version} "exact" payments on ${network.caip2}, so the job was not run: pay with another x402 version`,
            { code: "facilitator_refused" },
          );
        });
      });
      loading.catch(() => undefined); // reported by the first verify() instead of crashing startup
      return {
        verify: async (payment) => (await loading).verify?.(payment),
        settle: async (payment) => (await loading).settle(payment),
      };
    }
    case "direct": {
      // viem's wallet code is loaded only in this mode, starting now, off the request path.
      const loading = import("./direct-settlement.js").then((m) =>
        m.createDirectSettler({
          rpcUrl: route.rpcUrl,
          settlerKey: route.settlerKey,
          network: config.network,
          timeoutSeconds: config.settleTimeoutSeconds,
          exclusive: deps.exclusive,
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
      ? route.urls.length > 1
        ? `payments settle through the first of the x402 facilitators at ${route.urls.map((u) => `${origin(u)}${new URL(u).pathname}`).join(", ")} that lists their network`
        : `payments settle through the x402 facilitator at ${origin(route.url)}${new URL(route.url).pathname}`
      : route.kind === "direct"
        ? `payments settle directly: this server sends transferWithAuthorization via ${origin(route.rpcUrl)} from the X402_SETTLER_KEY account, which pays the gas`
        : "payments settle through the custom settler passed as option payment.settler";
  const chain = config.rpcUrl
    ? `balances, nonces and contract-wallet signatures are checked on chain via ${origin(config.rpcUrl)}`
    : "no on-chain checks before running jobs (set X402_RPC_URL to refuse unfunded payers and used nonces up front)";
  return `${settle}; ${chain}`;
}

export function createPaymentGate(
  config: ProductionPaymentConfig,
  deps: PaymentGateDeps,
): PaymentGate {
  const { network, payTo } = config;
  const settler = createSettler(config, deps);
  // The signature check (secp256k1, keccak) is loaded with the gate, off the request path: dev mode
  // has no gate, so it never loads it.
  const verifying = import("./verify.js");
  verifying.then(
    ({ recoveryPath: recovery }) => {
      if (recovery.path === "failed")
        deps.logger?.error(
          `payment signatures cannot be checked on this Node: the secp256k1 self-test failed (${recovery.problem}); every paid job will fail with a 500 and nothing is charged`,
        );
      else
        deps.logger?.info(
          recovery.path === "openssl"
            ? "payment signatures: secp256k1 self-test passed; points decompressed by node:crypto (OpenSSL)"
            : "payment signatures: secp256k1 self-test passed; this Node's OpenSSL has no secp256k1, so points are decompressed by the runtime's own square root (pure JS)",
        );
    },
    () => undefined, // reported by the first verify() instead of crashing startup
  );

  // The on-chain checks load the full viem package, so only when an RPC endpoint is configured.
  const rpcUrl = config.rpcUrl;
  let chainChecks: Promise<ChainChecks> | undefined;
  const chain = rpcUrl
    ? () =>
        (chainChecks ??= import("./onchain.js").then((m) => m.createChainChecks(rpcUrl, network)))
    : undefined;

  // Who will send transferWithAuthorization: the settler account (direct), else anyone (the payee
  // stands in; the facilitator's own /verify simulates with its account as well).
  const route = config.settlement;
  const submitter: Promise<`0x${string}`> =
    route.kind === "direct"
      ? import("./viem.js")
          .then((m) => m.loadViemAccounts())
          .then((m) => m.privateKeyToAddress(route.settlerKey))
      : Promise.resolve(payTo);
  submitter.catch(() => undefined);

  const offer = (capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer => ({
    network,
    payTo,
    amount: capability.priceAtomic,
    maxTimeoutSeconds: timeoutFor(config.maxTimeoutSeconds, deadline),
    resourceUrl,
    description: capability.declaration.description ?? `Run capability "${capability.name}"`,
  });

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
    const key = `${capability.name}\n${resourceUrl}\n${timeout}\n${Math.floor(now / 1000)}\n${reason}`;
    let answer = cached402.get(key);
    if (!answer) {
      const discovery = deps.discovery?.(capability, now);
      const offered: PaymentOffer = {
        ...offer(capability, resourceUrl),
        maxTimeoutSeconds: timeout,
        ...(discovery && { discovery }),
      };
      const response = paymentRequiredResponse(offered, reason);
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
    offer,
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

    async verify(sent, capability, job, resourceUrl) {
      const { verifyPayment } = await verifying;
      return verifyPayment(sent, capability, job, resourceUrl, { network, payTo, offer, chain });
    },

    async confirm(payment) {
      if (chain) await (await chain()).checkTransfer(payment, await submitter);
      if (settler.verify) await settler.verify(payment);
    },

    settle: (payment) => settler.settle(payment),
  };
}
