/**
 * Whether the settlement routes can still collect payments, network by network: checked before the
 * server listens (production refuses to start otherwise) and again by GET /health and each metrics
 * scrape. Each network family watches its own networks (FamilyWatch, family.ts: the EVM family's
 * RPC chain and settler funds in evm/watch.ts, with the onchain feature; Solana's RPC genesis and
 * fee payer in svm/route-check.ts), with the same reuse window and timeout, each under `networks`; the
 * facilitators of X402_FACILITATOR_URL are asked here, once for every network they serve (server.ts
 * checks them at start-up). Part of your project: edit freely.
 */
import type { FacilitatorRoute, ProductionPaymentConfig, RoutedNetworkConfig } from "./config.js";
import type { FamilyWatch } from "./family.js";
import { familyOf } from "./families.js";
import type { Metrics } from "../ops/metrics.js";
import { ConfigError } from "../ops/settings.js";
import type { Logger } from "../types.js";

/** A /health or metrics probe's answer is reused for this long: a busy health checker costs one RPC read per period. */
const PROBE_TTL_MS = 5_000;
/** How long a /health probe may wait for the node or facilitator. */
const PROBE_TIMEOUT_MS = 3_000;
/** The start-up check's bound (as the facilitator's; lower when the settle timeout is). */
const START_TIMEOUT_MS = 10_000;

/** One network's record on GET /health: as the service's own, `problems` only when degraded. */
export interface NetworkHealth {
  status: "ok" | "degraded";
  problems?: string[];
}

/** What GET /health shows of the settlement routes. */
export interface RouteReport {
  /** What is wrong (empty when every route can collect); with several networks, each names its network. */
  problems: string[];
  /** With several networks offered: each checked network's record, by CAIP-2 id. */
  networks?: Record<string, NetworkHealth>;
}

export interface RouteHealth {
  /** Before listening: throws ConfigError naming each network and variable to fix; warns when a settler runs low. */
  checkAtStart(): Promise<void>;
  /** What GET /health reports; never throws, reuses an answer for a few seconds. */
  report(): Promise<RouteReport>;
  /** report()'s problems (empty when usable). */
  problems(): Promise<string[]>;
}

/** A problem's text on /health: of every route (no `where`), or of one network's. */
function problemText(problem: string, where?: string, texts?: FamilyWatch["texts"]): string {
  const of = where === undefined ? "" : ` of ${where}`;
  const jobs = where === undefined ? "paid jobs" : "paid jobs on that network";
  const own = texts?.[problem];
  if (own) return own(where);
  if (problem === "wrong_chain")
    return `settlement route${of} on another chain: ${jobs} are refused until it is fixed`;
  return `settlement route${of} unreachable: ${jobs} are refused until it is back`;
}

/** Each family's watch over its offered networks, in FAMILIES order. */
function familyWatches(
  config: ProductionPaymentConfig,
  deps: { logger: Logger; metrics: Metrics },
): Map<RoutedNetworkConfig, FamilyWatch> {
  const byFamily = new Map<string, RoutedNetworkConfig[]>();
  for (const n of config.networks) byFamily.set(n.family, [...(byFamily.get(n.family) ?? []), n]);
  const watches = new Map<RoutedNetworkConfig, FamilyWatch>();
  for (const nets of byFamily.values()) {
    const watch = familyOf(nets[0]!.network.caip2)?.watch?.(nets, config, deps);
    if (watch) for (const n of nets) watches.set(n, watch);
  }
  return watches;
}

/** Before listening: every family's refusals, in one ConfigError (the facilitators: server.ts). */
async function refuseAtStart(
  watches: Map<RoutedNetworkConfig, FamilyWatch>,
  config: ProductionPaymentConfig,
): Promise<void> {
  const timeoutMs = Math.min(config.settleTimeoutSeconds * 1000, START_TIMEOUT_MS);
  const found = await Promise.all(
    [...new Set(watches.values())].map((w) => w.refusals?.(timeoutMs) ?? []),
  );
  const problems = found.flat();
  // Transient only when every refusal is: a wrong setting among them needs its owner, not a retry.
  if (problems.length > 0)
    throw new ConfigError(
      problems.map((p) => p.text),
      problems.every((p) => p.transient),
    );
}

/** The facilitators, with their credentials (facilitator-router.ts): undefined when they answer. */
async function probeFacilitators(
  facilitator: { kind: string } | undefined,
  config: ProductionPaymentConfig,
  logger: Logger,
): Promise<string | undefined> {
  if (facilitator?.kind !== "facilitator") return undefined;
  try {
    const { routerFor } = await import("./facilitator-router.js");
    await routerFor(facilitator as FacilitatorRoute, config.settleTimeoutSeconds * 1000).probe(
      PROBE_TIMEOUT_MS,
    );
    return undefined;
  } catch (err) {
    logger.warn(
      `settlement route check failed: the x402 facilitator (X402_FACILITATOR_URL): ${(err as Error).message}`,
    );
    return "unreachable";
  }
}

/**
 * Undefined when nothing can be checked: no family watches a network and none settles through a
 * facilitator (a custom settler).
 */
export function createRouteHealth(
  config: ProductionPaymentConfig,
  deps: { logger: Logger; metrics: Metrics },
): RouteHealth | undefined {
  const { logger } = deps;
  const several = config.networks.length > 1;
  const watches = familyWatches(config, deps);
  // Every network settles through the same facilitators today (one route per network, same URLs).
  const facilitator = config.networks.find((n) => n.settlement.kind === "facilitator")?.settlement;
  if (watches.size === 0 && facilitator === undefined) return undefined;

  const lookAtFacilitator = () => probeFacilitators(facilitator, config, logger);

  /** Every watched network in the offer's order: what its record and problems are named by, how to look. */
  const watched = config.networks.flatMap((n) => {
    const watch = watches.get(n);
    const look = watch?.probe(n, PROBE_TIMEOUT_MS);
    if (!look) return [];
    return [{ written: n.written, caip2: n.network.caip2, kind: n.settlement.kind, look, watch }];
  });

  /** Every route now, for /health and metrics scrapes. */
  async function look(): Promise<RouteReport> {
    const [perNetwork, shared] = await Promise.all([
      Promise.all(watched.map((n) => n.look())),
      lookAtFacilitator(),
    ]);
    const problems: string[] = [];
    const detail: Record<string, NetworkHealth> = {};
    watched.forEach((n, i) => {
      const own = perNetwork[i] ?? [];
      const texts = n.watch?.texts;
      for (const p of own) problems.push(problemText(p, several ? n.written : undefined, texts));
      const all = [...own, ...(shared && n.kind === "facilitator" ? [shared] : [])];
      const shown = [...new Set(all)].map((p) => problemText(p, undefined, texts));
      detail[n.caip2] = shown.length ? { status: "degraded", problems: shown } : { status: "ok" };
    });
    if (shared) problems.push(problemText(shared));
    return { problems: [...new Set(problems)], ...(several && { networks: detail }) };
  }

  let last: { at: number; answer: Promise<RouteReport> } | undefined;
  const report = (): Promise<RouteReport> => {
    const now = Date.now();
    if (!last || now - last.at >= PROBE_TTL_MS) last = { at: now, answer: look() };
    return last.answer;
  };
  return {
    checkAtStart: () => refuseAtStart(watches, config),
    report,
    problems: async () => (await report()).problems,
  };
}
