/**
 * The EVM family's watch of its settlement routes (FamilyWatch, ../family.ts), which
 * ../route-health.ts runs before the server listens, on GET /health and on each metrics scrape:
 *   - a network with an RPC endpoint (X402_RPC_URL, or direct settlement's) is watched by the
 *     `onchain` feature (onchain/route-health.ts: its chain; the settler account's gas money),
 *     loaded on first use;
 *   - a network settled through facilitators is listed with no problems of its own: the
 *     facilitators' are ../route-health.ts's, shared by every family.
 * Part of your project: edit freely.
 */
import type { Metrics } from "../../ops/metrics.js";
import type { Logger } from "../../types.js";
import type { ProductionPaymentConfig, RoutedNetworkConfig } from "../config.js";
import type { FamilyWatch } from "../family.js";
import type { EvmOnchainLoader } from "./chain.js";
import type { RoutedEvmNetwork } from "./config.js";
import { needOnchain } from "./scheme.js";

/** The JSON-RPC endpoint a network's route is checked through: X402_RPC_URL's, else direct settlement's. */
export const chainRpcUrl = (n: RoutedEvmNetwork): string | undefined =>
  n.rpcUrl ?? (n.settlement.kind === "direct" ? n.settlement.rpcUrl : undefined);

export function watchEvm(
  nets: RoutedNetworkConfig[],
  config: ProductionPaymentConfig,
  deps: { logger: Logger; metrics: Metrics },
  onchain: EvmOnchainLoader,
): FamilyWatch | undefined {
  const onChain = (nets as RoutedEvmNetwork[]).filter((n) => chainRpcUrl(n) !== undefined);
  const listed = new Set(
    nets
      .filter((n) => onChain.includes(n as RoutedEvmNetwork) || n.settlement.kind === "facilitator")
      .map((n) => n.network.caip2),
  );
  if (listed.size === 0) return undefined;
  let chain: Promise<FamilyWatch> | undefined;
  const chainWatch = () =>
    (chain ??= needOnchain(onchain)().then((m) => m.watchChain(onChain, config, deps)));
  const onChainIds = new Set(onChain.map((n) => n.network.caip2));
  return {
    refusals: async (timeoutMs) =>
      onChain.length === 0 ? [] : ((await (await chainWatch()).refusals?.(timeoutMs)) ?? []),
    probe(net, timeoutMs) {
      if (!listed.has(net.network.caip2)) return undefined;
      if (!onChainIds.has(net.network.caip2)) return async () => [];
      return async () => {
        try {
          return (await (await chainWatch()).probe(net, timeoutMs)?.()) ?? [];
        } catch {
          return ["unreachable"]; // its checks could not load (start-up refused for the same reason)
        }
      };
    },
    texts: {
      unfunded: (where) =>
        `settler account${where === undefined ? "" : ` on ${where}`} out of gas money: ${where === undefined ? "paid jobs" : "paid jobs on that network"} cannot settle until it is funded`,
    },
  };
}
