/**
 * Which settlement route serves a network: the one place the gate and the startup check ask. Today
 * every network of a project settles the same way (one facilitator, direct with X402_SETTLER_KEY and
 * that network's RPC, or a custom settler), resolved per network by config-payments.ts; a router
 * over several facilitators (each network to the first whose /supported lists it) plugs in here.
 * Part of your project: edit freely.
 */
import type { ResolvedConfig, RoutedNetworkConfig, SettlementRoute } from "../ops/config.js";
import type { Logger } from "../types.js";

/** The route that settles payments on `network` (as configured). */
export function settlementRouteFor(
  network: Extract<RoutedNetworkConfig, { family: "evm" }>,
): SettlementRoute {
  return network.settlement;
}

/**
 * Startup check (fail closed): every network settled through a facilitator is listed by that
 * facilitator's GET /supported. Throws ConfigError naming the network and what to set. Each
 * network's RPC endpoint (its chain) and settler account are checked by route-health.ts, which
 * server.ts runs first.
 */
export async function checkRoutes(config: ResolvedConfig, logger: Logger): Promise<void> {
  if (config.devMode) return;
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
