/**
 * The EVM family: USDC's EIP-3009 transferWithAuthorization on one EVM network ("exact" scheme).
 *   verify()  - the checks the reference x402 facilitator makes, offline (verify.ts): scheme,
 *               network, the requirement the client accepted, the EIP-712 signature (EIP-1271
 *               contract wallets via the network's RPC), payee, exact amount, validity window.
 *   confirm() - checks that depend on chain state, made once the pipeline has reserved the
 *               authorization: balance and unused nonce (with an RPC), then the facilitator's
 *               /verify (facilitator route).
 *   settle()  - charges the payment (../settlement.ts), only after the output passed validation.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../../errors.js";
import { authorizationKey } from "../../ledger/ledger.js";
import type { SettlementRoute } from "../config.js";
import type { SchemeSettings } from "../family.js";
import { type RoutedEvmNetwork, settlementRouteFor } from "./config.js";
import { redactUrl } from "../../ops/redact.js";
import type { Capability, PaidPayment, VerifiedPayment } from "../../types.js";
import type { PaymentGateDeps } from "../gate.js";
import type { ChainChecks, EvmOnchainLoader } from "./chain.js";
import type { NetworkScheme } from "../scheme.js";
import { type Settler, timeoutFor } from "../settlement.js";
import { decodePaymentHeader, decodePaymentObject, type PaymentOffer } from "../x402.js";

type RoutedNetwork = RoutedEvmNetwork;
type Hex = `0x${string}`;

/** The gate hands a scheme only payments on its network (verified by it). */
function evm(payment: PaidPayment): VerifiedPayment {
  if (payment.family !== "evm") throw new Error(`not an EVM payment: ${payment.network}`);
  return payment as VerifiedPayment;
}

/** The network's settlement route as a Settler. */
function createSettler(
  net: RoutedNetwork,
  settings: SchemeSettings,
  deps: PaymentGateDeps,
  onchain: EvmOnchainLoader,
): Settler {
  const route = settlementRouteFor(net);
  switch (route.kind) {
    case "custom":
      return route.settler;
    case "facilitator": {
      // Loaded with the gate (production only), off the request path. Each payment goes to the
      // first facilitator whose /supported lists its kind (../facilitator-router.ts); startup's check
      // has asked them already (server.ts), and a router that was not asked yet asks now.
      const network = net.network;
      const loading = Promise.all([
        import("../facilitator.js"),
        import("../facilitator-router.js"),
      ]).then(([f, r]) => {
        const router = r.routerFor(route, settings.settleTimeoutSeconds * 1000);
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
            `no configured x402 facilitator settles x402 v${payment.x402Version} "exact" payments on ${network.caip2}, so the job was not run`,
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
      const loading = needOnchain(onchain)().then((m) =>
        m.createDirectSettler({
          rpcUrl: route.rpcUrl,
          settlerKey: route.settlerKey,
          network: net.network,
          timeoutSeconds: settings.settleTimeoutSeconds,
          exclusive: deps.exclusive,
        }),
      );
      loading.catch(() => undefined); // reported by the first settle() instead of crashing startup
      return { settle: async (payment) => (await loading).settle(payment) };
    }
  }
}

/**
 * How payments on the network are settled and checked, for the startup log. Never includes secrets.
 * `onchain`: whether the project has that feature (X402_RPC_URL needs it).
 */
export function describeEvmRoute(
  route: SettlementRoute,
  rpcUrl: string | undefined,
  onchain: boolean,
): string {
  // URLs lose their query, credentials and (for RPC endpoints, which often embed an API key) path.
  const origin = (url: string): string => redactUrl(url, "origin");
  const settle =
    route.kind === "facilitator"
      ? route.urls.length > 1
        ? `payments settle through the first of the x402 facilitators at ${route.urls.map((u) => redactUrl(u)).join(", ")} that lists their network`
        : `payments settle through the x402 facilitator at ${redactUrl(route.url)}`
      : route.kind === "direct"
        ? `payments settle directly: this server sends transferWithAuthorization via ${origin(route.rpcUrl)} from the X402_SETTLER_KEY account, which pays the gas`
        : "payments settle through the custom settler passed as option payment.settler";
  const chain = rpcUrl
    ? `balances, nonces and contract-wallet signatures are checked on chain via ${origin(rpcUrl)}`
    : `no on-chain checks before running jobs (${onchain ? "" : "with the onchain feature, npm run add -- onchain, "}set X402_RPC_URL to refuse unfunded payers and used nonces up front, and to resolve a settlement not confirmed in time from the chain: without it, ${route.kind === "facilitator" ? "the facilitator is asked again when the buyer sends the identical request" : "that job's answer stays withheld as unconfirmed"})`;
  return `${settle}; ${chain}`;
}

/** The `onchain` feature's loader; configuration that needs it is refused without it (config.ts). */
export function needOnchain(onchain: EvmOnchainLoader) {
  if (onchain) return onchain;
  throw new Error(
    "X402_RPC_URL and X402_SETTLER_KEY need the onchain feature: npm run add -- onchain",
  );
}

export function createEvmScheme(
  net: RoutedNetwork,
  settings: SchemeSettings,
  deps: PaymentGateDeps,
  onchain: EvmOnchainLoader,
): NetworkScheme {
  const { network, payTo, rpcUrl } = net;
  const settler = createSettler(net, settings, deps, onchain);
  // The signature check (secp256k1, keccak) is loaded with the gate, off the request path: dev mode
  // has no gate, so it never loads it.
  const verifying = import("./verify.js");
  verifying.catch(() => undefined); // reported by the first verify() instead of crashing startup

  // The on-chain checks load the full viem package, so only when an RPC endpoint is configured.
  let chainChecks: Promise<ChainChecks> | undefined;
  const chain = rpcUrl
    ? () =>
        (chainChecks ??= needOnchain(onchain)().then((m) => m.createChainChecks(rpcUrl, network)))
    : undefined;

  // Who will send transferWithAuthorization: the settler account (direct), else anyone (the payee
  // stands in; the facilitator's own /verify simulates with its account as well).
  const route = settlementRouteFor(net);
  const submitter: Promise<`0x${string}`> =
    route.kind === "direct"
      ? needOnchain(onchain)().then((m) => m.settlerAddress(route.settlerKey))
      : Promise.resolve(payTo);
  submitter.catch(() => undefined);

  const offer = (capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer => ({
    network,
    payTo,
    amount: capability.priceAtomic,
    maxTimeoutSeconds: timeoutFor(settings.maxTimeoutSeconds, deadline),
    resourceUrl,
    description: capability.declaration.description ?? `Run capability "${capability.name}"`,
  });

  return {
    family: "evm",
    caip2: network.caip2,
    v1Name: network.v1Name,
    offer,
    async verify(sent, capability, job, resourceUrl) {
      const { verifyPayment } = await verifying;
      return verifyPayment(sent, capability, job, resourceUrl, { network, payTo, offer, chain });
    },
    replayKey: (payment) => authorizationKey(evm(payment)),
    replayKeyOf(sent) {
      const decoded =
        "object" in sent ? decodePaymentObject(sent.object) : decodePaymentHeader(sent.value);
      if (!decoded.ok) return undefined;
      const { authorization } = decoded.value.payload;
      return authorizationKey({ chainId: network.chainId, asset: network.asset, authorization });
    },
    async confirm(payment) {
      if (chain) await (await chain()).checkTransfer(evm(payment), await submitter);
      if (settler.verify) await settler.verify(evm(payment));
    },
    settle: (payment) => settler.settle(evm(payment)),
    async reconcile(auth, tx, validBefore, _blockhash, _payer, amount, again) {
      const checks = chain?.(); // X402_RPC_URL (the direct route's node too)
      if (!checks && route.kind === "facilitator" && again)
        return (await import("./resettle.js")).resettle(settler, again, tx);
      if (!checks) return { status: "unknown", reason: "no RPC to check it (set X402_RPC_URL)" };
      const [, , from, nonce] = auth.split(":") as [string, string, Hex, Hex];
      const paid =
        amount === undefined ? undefined : { payTo: payTo as Hex, amount: BigInt(amount) };
      return (await checks).settlementState(from, nonce, tx as Hex | undefined, validBefore, paid);
    },
    describe: () => describeEvmRoute(route, rpcUrl, onchain !== undefined),
  };
}
