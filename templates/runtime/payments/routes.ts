/**
 * Start-up check of the settlement routes (fail closed), network by network, each by its family
 * (family.ts's checkRoute: an EVM network's facilitators list it in GET /supported; a Solana
 * network's RPC genesis, fee payer or facilitators). Each network's RPC endpoint and settler
 * account are checked by route-health.ts, which server.ts runs first. Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import type { Logger } from "../types.js";
import { familyById } from "./families.js";

/** Throws ConfigError naming the network and what to set when a route cannot settle. */
export async function checkRoutes(config: ResolvedConfig, logger: Logger): Promise<void> {
  if (config.devMode) return;
  for (const n of config.payment.networks)
    await familyById(n.family).checkRoute?.(n, config, logger);
}
