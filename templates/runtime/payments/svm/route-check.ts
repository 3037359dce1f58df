/**
 * A Solana network's settlement route: checked at startup (fail closed, checkSolanaRoute, called by
 * ../routes.ts through svm/family.ts) and again by GET /health and each metrics scrape
 * (probeSolanaRoute, the family's watch, which ../route-health.ts reuses for a few seconds):
 *   - its RPC endpoint (X402_RPC_URL_<NET>), when set, answers getGenesisHash with the genesis of the
 *     network the CAIP-2 id names (its first 32 characters);
 *   - direct route (SOLANA_FEE_PAYER_KEY): the fee payer holds the fee of one more settlement (less:
 *     refuse, or /health degraded; low: warn). The balance is the metric
 *     agent_fee_payer_balance_sol{network};
 *   - facilitator route: some facilitator in X402_FACILITATOR_URL lists x402 v2 "exact" on the
 *     network, with the fee payer (`extra.feePayer`) the 402 must name; a warning when none lists
 *     its v1 name for x402 v1 (the v1 body offers it, and v1 payments would be refused). /health
 *     asks the facilitators through route-health.ts's facilitator probe, as for EVM networks.
 * Plain JSON-RPC over fetch (../json-rpc.ts): nothing of @solana/kit is needed for two reads. Never
 * shows a key or an RPC URL's path (it often holds an API key). Part of your project: edit freely.
 */
import type { Metrics } from "../../ops/metrics.js";
import { ConfigError } from "../../ops/settings.js";
import { redactUrl } from "../../ops/redact.js";
import type { Logger } from "../../types.js";
import { rpcCall } from "../json-rpc.js";
import { isTransient } from "../facilitator-http.js";
import { networkSettingSuffix, v1Knows } from "../networks.js";
import type { RoutedSolanaNetwork } from "./scheme.js";

/** How long startup waits for the RPC endpoint or the facilitators. */
const START_TIMEOUT_MS = 10_000;
/** Lamports per signature on Solana today (5000); a fee payer pays one signature per settlement. */
export const LAMPORTS_PER_SETTLEMENT = 5_000n;
/** Below fees for this many settlements, startup warns. */
const LOW_BALANCE_SETTLEMENTS = 1_000n;
/** LAMPORTS_PER_SETTLEMENT times LOW_BALANCE_SETTLEMENTS: below it, warn. */
const LOW_BALANCE_LAMPORTS = LAMPORTS_PER_SETTLEMENT * LOW_BALANCE_SETTLEMENTS;
const LAMPORTS_PER_SOL = 1_000_000_000;

const sol = (lamports: bigint): string => `${Number(lamports) / LAMPORTS_PER_SOL} SOL`;

/** The genesis hash the endpoint serves, when it is not the network's (undefined when it is). */
async function otherGenesis(n: RoutedSolanaNetwork, rpcUrl: string, timeoutMs = START_TIMEOUT_MS) {
  const genesis = await rpcCall(rpcUrl, "getGenesisHash", [], timeoutMs);
  const reference = n.network.caip2.slice("solana:".length);
  if (typeof genesis === "string" && genesis.slice(0, reference.length) === reference)
    return undefined;
  return String(genesis);
}

/** The direct route's fee payer balance, in lamports. */
async function feePayerLamports(rpcUrl: string, feePayer: string, timeoutMs = START_TIMEOUT_MS) {
  const answer = (await rpcCall(rpcUrl, "getBalance", [feePayer], timeoutMs)) as {
    value?: unknown;
  };
  if (typeof answer?.value !== "number" && typeof answer?.value !== "bigint")
    throw new Error("answered without a balance");
  return BigInt(answer.value);
}

/** Cannot pay the fee of one more settlement (or holds nothing at all). */
const unfunded = (lamports: bigint): boolean => lamports < LAMPORTS_PER_SETTLEMENT;

/** Start-up's check of a Solana network's route: a ConfigError says why it cannot settle. */
export async function checkSolanaRoute(
  n: RoutedSolanaNetwork,
  settleTimeoutSeconds: number,
  logger: Logger,
): Promise<void> {
  const setting = `X402_RPC_URL_${networkSettingSuffix(n.written)}`;
  if (n.rpcUrl !== undefined) await checkRpc(n, n.rpcUrl, setting);
  const route = n.settlement;
  if (route.kind === "direct") return checkFeePayer(n, route, setting, logger);
  return checkFacilitators(n, route, setting, settleTimeoutSeconds, logger);
}

/** The network's RPC endpoint answers, and serves that network (its genesis hash). */
async function checkRpc(n: RoutedSolanaNetwork, rpcUrl: string, setting: string): Promise<void> {
  const caip2 = n.network.caip2;
  const origin = redactUrl(rpcUrl, "origin");
  let genesis: string | undefined;
  try {
    genesis = await otherGenesis(n, rpcUrl);
  } catch (err) {
    throw new ConfigError([
      `the Solana JSON-RPC endpoint for ${caip2} (${setting}, at ${origin}) gave no usable answer to getGenesisHash (${err instanceof Error ? err.message : String(err)}): payments on ${n.written} are settled through it; check that it is up and the URL is right`,
    ]);
  }
  if (genesis !== undefined)
    throw new ConfigError([
      `the Solana JSON-RPC endpoint for ${caip2} (${setting}, at ${origin}) serves the network whose genesis hash is ${JSON.stringify(genesis.slice(0, 60))}, not ${caip2}: point it at a node of that network`,
    ]);
}

type Route = RoutedSolanaNetwork["settlement"];

/** Direct settlement: the fee payer can pay one settlement's fee (refused otherwise), and is warned about when low. */
async function checkFeePayer(
  n: RoutedSolanaNetwork,
  route: Extract<Route, { kind: "direct" }>,
  setting: string,
  logger: Logger,
): Promise<void> {
  let lamports: bigint;
  try {
    lamports = await feePayerLamports(route.rpcUrl, route.feePayer);
  } catch (err) {
    throw new ConfigError([
      `could not read the balance of the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) through ${setting}: ${err instanceof Error ? err.message : String(err)}`,
    ]);
  }
  const low = LOW_BALANCE_LAMPORTS;
  if (unfunded(lamports))
    throw new ConfigError([
      `the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) holds ${lamports === 0n ? "no SOL" : `${sol(lamports)}, less than one settlement's fee (${sol(LAMPORTS_PER_SETTLEMENT)}),`} on ${n.network.caip2}: it pays the fee of every settlement, so every paid job would run and then fail to settle. Send it SOL (${sol(low)} pays about ${LOW_BALANCE_SETTLEMENTS} settlements), or set SOLANA_FEE_PAYER_KEY to a funded account`,
    ]);
  if (lamports < low)
    logger.warn(
      `the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) is low on SOL: ${sol(lamports)}, about ${lamports / LAMPORTS_PER_SETTLEMENT} settlements; top it up`,
      { fee_payer: route.feePayer },
    );
  else
    logger.info(`the Solana fee payer ${route.feePayer} holds ${sol(lamports)} for fees`, {
      fee_payer: route.feePayer,
    });
}

/** Facilitator settlement: one of them lists the network, with the fee payer a Solana 402 must name. */
async function checkFacilitators(
  n: RoutedSolanaNetwork,
  route: Exclude<Route, { kind: "direct" }>,
  setting: string,
  settleTimeoutSeconds: number,
  logger: Logger,
): Promise<void> {
  const caip2 = n.network.caip2;
  const { routerFor } = await import("../facilitator-router.js");
  const router = routerFor(route, settleTimeoutSeconds * 1000);
  const instead = `or settle Solana payments from this server: SOLANA_FEE_PAYER_KEY and ${setting}`;
  try {
    await router.initialize();
  } catch (err) {
    throw new ConfigError(
      [
        `could not ask the x402 facilitators (X402_FACILITATOR_URL) which networks they settle: ${err instanceof Error ? err.message : String(err)}. The server does not start without knowing that payments on ${caip2} can be settled; check the URLs, ${instead}`,
      ],
      isTransient(err),
    );
  }
  const kind = router.kindFor(2, n.network, "exact");
  if (kind === undefined)
    throw new ConfigError([
      `no x402 facilitator in X402_FACILITATOR_URL settles x402 v2 "exact" payments on ${caip2} (${n.written}): add one that does (its GET /supported must list it), ${instead}`,
    ]);
  const feePayer = kind.extra?.feePayer;
  if (typeof feePayer !== "string" || feePayer === "")
    throw new ConfigError([
      `the x402 facilitator that settles ${caip2} lists it without extra.feePayer (the account that pays the fees), which a Solana 402 must name: use a facilitator that does, ${instead}`,
    ]);
  const client = router.clientFor(2, n.network, "exact");
  const shown = router.facilitators.find((f) => f.url === client?.url)?.shown;
  logger.info(`the x402 facilitator settles "exact" payments on ${caip2}`, {
    facilitator: shown,
    fee_payer: feePayer,
  });
  if (v1Knows(n.network) && router.clientFor(1, n.network, "exact") === undefined)
    logger.warn(
      `no x402 facilitator in X402_FACILITATOR_URL lists x402 v1 "exact" on ${n.network.v1Name}: payments from v1 clients (X-PAYMENT) on ${caip2} will be refused`,
      { facilitator: shown },
    );
}

/** What can be wrong with a Solana route now, as GET /health names it (svm/family.ts's texts). */
export type SolanaRouteProblem = "unreachable" | "wrong_chain" | "fee_payer_unfunded";

/**
 * A Solana network's route now, for GET /health and metrics scrapes: its RPC endpoint (reachable,
 * the network's genesis) and, for a direct route, whether the fee payer can pay one more
 * settlement's fee (its balance goes to agent_fee_payer_balance_sol{network}). Never throws:
 * details go to the log, the problems to the caller. A facilitator route's facilitators are
 * probed by route-health.ts, once for every network they serve.
 */
export async function probeSolanaRoute(
  n: RoutedSolanaNetwork,
  timeoutMs: number,
  deps: { logger: Logger; metrics: Metrics },
): Promise<SolanaRouteProblem[]> {
  const caip2 = n.network.caip2;
  const label = n.written === caip2 ? caip2 : `${n.written} (${caip2})`;
  const route = n.settlement;
  const rpcUrl = n.rpcUrl ?? (route.kind === "direct" ? route.rpcUrl : undefined);
  try {
    if (rpcUrl !== undefined) {
      const genesis = await otherGenesis(n, rpcUrl, timeoutMs);
      if (genesis !== undefined) {
        deps.logger.warn(
          `settlement route check failed on ${label}: its Solana JSON-RPC endpoint serves the network whose genesis hash is ${JSON.stringify(genesis.slice(0, 60))}`,
          { network: caip2 },
        );
        return ["wrong_chain"];
      }
    }
    if (route.kind !== "direct") return [];
    const lamports = await feePayerLamports(route.rpcUrl, route.feePayer, timeoutMs);
    deps.metrics.feePayerBalance?.(lamports, LOW_BALANCE_LAMPORTS, caip2);
    if (!unfunded(lamports)) return [];
    deps.logger.warn(
      `the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) holds ${sol(lamports)} on ${label}, less than one settlement's fee`,
      { network: caip2, fee_payer: route.feePayer },
    );
    return ["fee_payer_unfunded"];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    deps.logger.warn(
      `settlement route check failed on ${label}: its Solana JSON-RPC endpoint: ${message}`,
      { network: caip2 },
    );
    return ["unreachable"];
  }
}
