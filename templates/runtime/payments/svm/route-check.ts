/**
 * Startup check of a Solana network's settlement route (fail closed), called by routes.ts:
 *   - its RPC endpoint (X402_RPC_URL_<NET>), when set, answers getGenesisHash with the genesis of the
 *     network the CAIP-2 id names (its first 32 characters);
 *   - direct route (SOLANA_FEE_PAYER_KEY): the fee payer holds SOL (none: refuse; low: warn);
 *   - facilitator route: some facilitator in X402_FACILITATOR_URL lists x402 v2 "exact" on the
 *     network, with the fee payer (`extra.feePayer`) the 402 must name; a warning when none lists
 *     its v1 name for x402 v1 (the v1 body offers it, and v1 payments would be refused).
 * Plain JSON-RPC over fetch: nothing of @solana/kit is needed for two reads. Never shows a key or
 * an RPC URL's path (it often holds an API key). Part of your project: edit freely.
 */
import type { Logger } from "../../types.js";
import { ConfigError } from "../../ops/settings.js";
import { networkSettingSuffix, v1Knows } from "../networks.js";
import type { RoutedSolanaNetwork } from "./scheme.js";

/** How long startup waits for the RPC endpoint or the facilitators. */
const START_TIMEOUT_MS = 10_000;
/** Lamports per signature on Solana today (5000); a fee payer pays one signature per settlement. */
const LAMPORTS_PER_SETTLEMENT = 5_000n;
/** Below fees for this many settlements, startup warns. */
const LOW_BALANCE_SETTLEMENTS = 1_000n;
const LAMPORTS_PER_SOL = 1_000_000_000;

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    redirect: "error",
    signal: AbortSignal.timeout(START_TIMEOUT_MS),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message?: unknown } };
  if (body.result === undefined)
    throw new Error(
      `answered HTTP ${res.status} without a result${typeof body.error?.message === "string" ? ` (${body.error.message.slice(0, 200)})` : ""}`,
    );
  return body.result;
}

const sol = (lamports: bigint): string => `${Number(lamports) / LAMPORTS_PER_SOL} SOL`;

export async function checkSolanaRoute(
  n: RoutedSolanaNetwork,
  settleTimeoutSeconds: number,
  logger: Logger,
): Promise<void> {
  const setting = `X402_RPC_URL_${networkSettingSuffix(n.written)}`;
  const caip2 = n.network.caip2;
  if (n.rpcUrl !== undefined) {
    const origin = new URL(n.rpcUrl).origin;
    let genesis: unknown;
    try {
      genesis = await rpc(n.rpcUrl, "getGenesisHash", []);
    } catch (err) {
      const detail =
        err instanceof Error && err.name === "TimeoutError"
          ? "no answer in time"
          : "no usable answer";
      throw new ConfigError([
        `the Solana JSON-RPC endpoint for ${caip2} (${setting}, at ${origin}) gave ${detail} to getGenesisHash: payments on ${n.written} are settled through it; check that it is up and the URL is right`,
      ]);
    }
    const reference = caip2.slice("solana:".length);
    if (typeof genesis !== "string" || genesis.slice(0, reference.length) !== reference)
      throw new ConfigError([
        `the Solana JSON-RPC endpoint for ${caip2} (${setting}, at ${origin}) serves the network whose genesis hash is ${JSON.stringify(String(genesis).slice(0, 60))}, not ${caip2}: point it at a node of that network`,
      ]);
  }

  const route = n.settlement;
  if (route.kind === "direct") {
    let lamports: bigint;
    try {
      const answer = (await rpc(route.rpcUrl, "getBalance", [route.feePayer])) as {
        value?: unknown;
      };
      if (typeof answer?.value !== "number" && typeof answer?.value !== "bigint")
        throw new Error("answered without a balance");
      lamports = BigInt(answer.value);
    } catch (err) {
      throw new ConfigError([
        `could not read the balance of the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) through ${setting}: ${err instanceof Error ? err.message : String(err)}`,
      ]);
    }
    const low = LAMPORTS_PER_SETTLEMENT * LOW_BALANCE_SETTLEMENTS;
    if (lamports === 0n)
      throw new ConfigError([
        `the Solana fee payer ${route.feePayer} (SOLANA_FEE_PAYER_KEY) holds no SOL on ${caip2}: it pays the fee of every settlement, so every paid job would run and then fail to settle. Send it SOL (${sol(low)} pays about ${LOW_BALANCE_SETTLEMENTS} settlements), or set SOLANA_FEE_PAYER_KEY to a funded account`,
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
    return;
  }

  const { routerFor } = await import("../facilitator-router.js");
  const router = routerFor(route, settleTimeoutSeconds * 1000);
  const instead = `or settle Solana payments from this server: SOLANA_FEE_PAYER_KEY and ${setting}`;
  try {
    await router.initialize();
  } catch (err) {
    throw new ConfigError([
      `could not ask the x402 facilitators (X402_FACILITATOR_URL) which networks they settle: ${err instanceof Error ? err.message : String(err)}. The server does not start without knowing that payments on ${caip2} can be settled; check the URLs, ${instead}`,
    ]);
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
