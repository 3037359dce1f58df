/**
 * Which settlement route serves a network: the one place the gate and the startup check ask. Today
 * every network of a project settles the same way (one facilitator, direct with X402_SETTLER_KEY and
 * that network's RPC, or a custom settler), resolved per network by config-payments.ts; a router
 * over several facilitators (each network to the first whose /supported lists it) plugs in here.
 * Part of your project: edit freely.
 */
import type {
  EvmNetworkPaymentConfig,
  ResolvedConfig,
  RoutedNetworkConfig,
  SettlementRoute,
} from "../ops/config.js";
import { ConfigError } from "../ops/settings.js";
import type { Logger } from "../types.js";
import { networkSettingSuffix } from "./networks.js";

/** How long startup waits for a network's RPC endpoint to say its chain id. */
const CHAIN_ID_TIMEOUT_MS = 10_000;

/** The route that settles payments on `network` (as configured). */
export function settlementRouteFor(
  network: Extract<RoutedNetworkConfig, { family: "evm" }>,
): SettlementRoute {
  return network.settlement;
}

/**
 * Startup check (fail closed): every network's RPC endpoint, when it has one, answers with that
 * network's chain id, and every network settled through a facilitator is listed by that
 * facilitator's GET /supported. Throws ConfigError naming the network and what to set.
 */
export async function checkRoutes(config: ResolvedConfig, logger: Logger): Promise<void> {
  if (config.devMode) return;
  const several = config.payment.networks.length > 1;
  for (const n of config.payment.networks)
    if (n.family === "evm" && n.rpcUrl) await checkChainId(n.rpcUrl, n, several);
  for (const n of config.payment.networks) {
    if (n.family === "svm") {
      const { checkSolanaRoute } = await import("./svm/route-check.js");
      await checkSolanaRoute(n, config.payment.settleTimeoutSeconds, logger);
      continue;
    }
    const route = settlementRouteFor(n);
    if (route.kind !== "facilitator") continue;
    const { checkFacilitator } = await import("./facilitator.js");
    await checkFacilitator(
      {
        ...config,
        payment: { ...config.payment, network: n.network, payTo: n.payTo, settlement: route },
      },
      logger,
    );
  }
}

/**
 * A network's RPC endpoint must answer and serve the network's chain: direct settlement would fail
 * after the job ran (work for free), and on-chain checks would refuse every payment. The URL is
 * never shown (RPC URLs often embed an API key).
 */
async function checkChainId(
  rpcUrl: string,
  n: EvmNetworkPaymentConfig,
  several: boolean,
): Promise<void> {
  const setting = several
    ? `X402_RPC_URL_${networkSettingSuffix(n.written)}, else X402_RPC_URL`
    : "X402_RPC_URL";
  let id: number;
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      redirect: "error",
      signal: AbortSignal.timeout(CHAIN_ID_TIMEOUT_MS),
    });
    const body = (await res.json()) as { result?: unknown };
    if (typeof body.result !== "string" || !/^0x[0-9a-f]+$/i.test(body.result))
      throw new Error(`answered HTTP ${res.status} without a chain id`);
    id = Number.parseInt(body.result, 16);
  } catch (err) {
    const detail =
      err instanceof Error && err.name === "TimeoutError"
        ? "no answer in time"
        : "no usable answer";
    throw new ConfigError([
      `the JSON-RPC endpoint for ${n.network.caip2} (${setting}) gave ${detail} to eth_chainId: payments on ${n.written} are checked (and settled directly) through it; check that it is up and the URL is right`,
    ]);
  }
  if (id !== n.network.chainId)
    throw new ConfigError([
      `the JSON-RPC endpoint for ${n.network.caip2} (${setting}) serves chain ${id}: point it at a ${n.network.caip2} node`,
    ]);
}
