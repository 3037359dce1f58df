/**
 * Whether the settlement route can still collect payments: checked before the server listens
 * (production refuses to start otherwise) and again by GET /health and each metrics scrape.
 *   - X402_RPC_URL (direct settlement, or on-chain checks): reachable, and serving the chain of
 *     X402_NETWORK; a node of another chain would make every paid job fail after it ran.
 *   - X402_SETTLER_KEY (direct settlement): the account pays the gas of every settlement. Below
 *     one settlement's gas it refuses to start (every paid job would run, then fail to settle);
 *     below LOW_BALANCE_SETTLEMENTS settlements' gas it warns. The balance is the metric
 *     agent_settler_balance_eth.
 *   - X402_FACILITATOR_URL: /health asks its GET /supported (server.ts checks it at start-up).
 * Plain JSON-RPC over fetch (eth_chainId, eth_getBalance, eth_gasPrice): no viem client is needed
 * for three reads. Part of your project: edit freely.
 */
import { loadViemAccounts } from "./viem.js";
import type { ProductionPaymentConfig } from "../ops/config.js";
import type { Metrics } from "../ops/metrics.js";
import { ConfigError } from "../ops/settings.js";
import { clip, oneLine } from "../ops/text.js";
import type { Logger } from "../types.js";
import type { ResolvedNetwork } from "./networks.js";

type Hex = `0x${string}`;

/**
 * Gas one settlement (USDC's transferWithAuthorization) is counted at. It uses about 60-90k (more
 * when the payee's balance slot is new); this rounds up. Only L2 execution gas: on Base an L1 data
 * fee comes on top, which LOW_BALANCE_SETTLEMENTS leaves room for.
 */
export const SETTLEMENT_GAS = 100_000n;

/** Below gas for this many settlements at the current gas price, start-up and /health warn. */
export const LOW_BALANCE_SETTLEMENTS = 100n;

/** A /health or metrics probe's answer is reused for this long: a busy health checker costs one RPC read per period. */
const PROBE_TTL_MS = 5_000;
/** How long a /health probe may wait for the node or facilitator. */
const PROBE_TIMEOUT_MS = 3_000;
/** The start-up check's bound (as the facilitator's; lower when the settle timeout is). */
const START_TIMEOUT_MS = 10_000;

export interface SettlerFunds {
  address: Hex;
  balanceWei: bigint;
  /** Gas price times SETTLEMENT_GAS. */
  perSettlementWei: bigint;
  /** perSettlementWei times LOW_BALANCE_SETTLEMENTS: below it, warn. */
  lowWei: bigint;
}

export interface RouteHealth {
  /** Before listening: throws ConfigError naming the variable to fix; warns when the settler runs low. */
  checkAtStart(): Promise<void>;
  /** What GET /health lists (empty when usable); never throws, reuses an answer for a few seconds. */
  problems(): Promise<string[]>;
}

/** The JSON-RPC endpoint as messages show it: its origin only (paths often hold an API key). */
const origin = (url: string): string => (URL.canParse(url) ? new URL(url).origin : "(not a URL)");

/** One JSON-RPC call; throws an Error whose message names what failed without the URL's path or query. */
export async function rpcCall(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
): Promise<unknown> {
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (err instanceof Error && err.name === "TimeoutError")
      throw new Error(`no answer to ${method} within ${timeoutMs / 1000} s`);
    const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
    const code = typeof cause?.code === "string" ? cause.code : undefined;
    throw new Error(
      `unreachable (${code ?? (cause instanceof Error ? cause.message : String(err))})`,
    );
  }
  let body: { result?: unknown; error?: { message?: unknown } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  if (body?.error !== undefined)
    throw new Error(
      `${method} answered an error: ${clip(oneLine(String(body.error.message)), 200)}`,
    );
  if (status < 200 || status > 299 || typeof body?.result !== "string")
    throw new Error(
      `${method} got HTTP ${status}, not a JSON-RPC result: ${clip(oneLine(text), 200)}`,
    );
  return body.result;
}

const quantity = async (url: string, method: string, params: unknown[], timeoutMs: number) => {
  const result = await rpcCall(url, method, params, timeoutMs);
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]+$/.test(result))
    throw new Error(`${method} answered ${clip(JSON.stringify(result), 100)}, not a quantity`);
  return BigInt(result);
};

/** Wei as ETH, exactly: "0.05 ETH", "0 ETH", "0.000000000000000001 ETH". */
export function formatEth(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const fraction = (wei % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "");
  return `${whole}${fraction ? `.${fraction}` : ""} ETH`;
}

/** The address of the settler key (viem's derivation, loaded only for direct settlement). */
export async function settlerAddress(key: Hex): Promise<Hex> {
  const { privateKeyToAddress } = await loadViemAccounts();
  return privateKeyToAddress(key);
}

const networkLabel = (n: ResolvedNetwork): string =>
  n.v1Name === n.caip2 ? n.caip2 : `${n.v1Name} (${n.caip2})`;

/** X402_RPC_URL answers for another chain than X402_NETWORK's. */
class WrongChain extends Error {}

/** Resolves when X402_RPC_URL serves our chain; else an Error saying what is wrong with it. */
async function checkChain(rpcUrl: string, network: ResolvedNetwork, timeoutMs: number) {
  let id: bigint;
  try {
    id = await quantity(rpcUrl, "eth_chainId", [], timeoutMs);
  } catch (err) {
    throw new Error(
      `could not reach the JSON-RPC endpoint X402_RPC_URL at ${origin(rpcUrl)}: ${(err as Error).message}`,
    );
  }
  if (id !== BigInt(network.chainId))
    throw new WrongChain(
      `X402_RPC_URL at ${origin(rpcUrl)} serves chain ${id}, but X402_NETWORK is ${networkLabel(network)}, chain ${network.chainId}: point X402_RPC_URL at a node of chain ${network.chainId}`,
    );
}

/** The settler account's balance against the current gas price. */
export async function settlerFunds(
  rpcUrl: string,
  address: Hex,
  timeoutMs: number,
): Promise<SettlerFunds> {
  const [balanceWei, gasPrice] = await Promise.all([
    quantity(rpcUrl, "eth_getBalance", [address, "latest"], timeoutMs),
    quantity(rpcUrl, "eth_gasPrice", [], timeoutMs),
  ]);
  const perSettlementWei = gasPrice * SETTLEMENT_GAS;
  return {
    address,
    balanceWei,
    perSettlementWei,
    lowWei: perSettlementWei * LOW_BALANCE_SETTLEMENTS,
  };
}

/** Cannot pay for one settlement (or holds nothing at all, whatever the gas price). */
const unfunded = (f: SettlerFunds): boolean =>
  f.balanceWei === 0n || f.balanceWei < f.perSettlementWei;

/** Undefined for a custom settler with no X402_RPC_URL: nothing to check. */
export function createRouteHealth(
  config: ProductionPaymentConfig,
  deps: { logger: Logger; metrics: Metrics },
): RouteHealth | undefined {
  const { rpcUrl } = config;
  const { logger, metrics } = deps;
  // The first EVM network's route; none when only Solana networks are offered (svm/route-check.ts).
  if (config.settlement === undefined || config.network === undefined) return undefined;
  const { network, settlement: route } = { network: config.network, settlement: config.settlement };
  if (route.kind === "custom" && rpcUrl === undefined) return undefined;
  const settlerKey = route.kind === "direct" ? route.settlerKey : undefined;
  let address: Promise<Hex> | undefined;
  const settler = () => (address ??= settlerAddress(settlerKey!));

  /** Reads the settler's funds, reports them as a metric, and returns them. */
  async function funds(timeoutMs: number): Promise<SettlerFunds> {
    const f = await settlerFunds(rpcUrl!, await settler(), timeoutMs); // direct settlement's RPC
    metrics.settlerBalance?.(f.balanceWei, f.lowWei);
    return f;
  }

  async function checkAtStart(): Promise<void> {
    if (rpcUrl === undefined) return; // the facilitator is checked by server.ts
    const timeoutMs = Math.min(config.settleTimeoutSeconds * 1000, START_TIMEOUT_MS);
    const why =
      route.kind === "direct"
        ? "direct settlement sends every transfer through it"
        : "paid jobs are checked on chain through it";
    try {
      await checkChain(rpcUrl, network, timeoutMs);
    } catch (err) {
      throw new ConfigError([
        `${(err as Error).message}. The server does not start without a ${networkLabel(network)} node there: ${why}` +
          (err instanceof WrongChain ? "" : "; check the URL and that the node is up"),
      ]);
    }
    if (settlerKey === undefined) return;
    let f: SettlerFunds;
    try {
      f = await funds(timeoutMs);
    } catch (err) {
      throw new ConfigError([
        `could not read the balance of the settler account (X402_SETTLER_KEY) through X402_RPC_URL at ${origin(rpcUrl)}: ${(err as Error).message}`,
      ]);
    }
    const cost = `${formatEth(f.lowWei)} pays for ${LOW_BALANCE_SETTLEMENTS} settlements at the current gas price`;
    if (unfunded(f))
      throw new ConfigError([
        `the settler account ${f.address} (X402_SETTLER_KEY) holds ${formatEth(f.balanceWei)} on ${networkLabel(network)}, ` +
          `less than one settlement's gas (${formatEth(f.perSettlementWei)}): every paid job would run and then fail to settle. ` +
          `Send it ETH on ${networkLabel(network)} (${cost}), or set X402_SETTLER_KEY to a funded account`,
      ]);
    if (f.balanceWei < f.lowWei)
      logger.warn(
        `the settler account ${f.address} (X402_SETTLER_KEY) is low on gas money: ${formatEth(f.balanceWei)}, enough for about ${f.balanceWei / f.perSettlementWei} settlements; top it up (${cost})`,
        { settler: f.address },
      );
    else
      logger.info(`the settler account ${f.address} holds ${formatEth(f.balanceWei)} for gas`, {
        settler: f.address,
        settlements_covered: String(f.balanceWei / (f.perSettlementWei || 1n)),
      });
  }

  /** One look at the route, for /health: what is wrong (details go to the log, not to callers). */
  async function look(): Promise<string[]> {
    const problems: string[] = [];
    const unreachable = (what: string, err: unknown) => {
      logger.warn(`${what}: ${(err as Error).message}`);
      problems.push(
        err instanceof WrongChain
          ? "settlement route on another chain: paid jobs are refused until it is fixed"
          : "settlement route unreachable: paid jobs are refused until it is back",
      );
    };
    if (rpcUrl !== undefined) {
      try {
        await checkChain(rpcUrl, network, PROBE_TIMEOUT_MS);
        if (settlerKey !== undefined) {
          const f = await funds(PROBE_TIMEOUT_MS);
          if (unfunded(f)) {
            logger.warn(
              `the settler account ${f.address} (X402_SETTLER_KEY) holds ${formatEth(f.balanceWei)}, less than one settlement's gas`,
            );
            problems.push(
              "settler account out of gas money: paid jobs cannot settle until it is funded",
            );
          }
        }
      } catch (err) {
        unreachable("settlement route check failed", err);
      }
    }
    if (route.kind === "facilitator") {
      try {
        // Every facilitator listed, with its credentials (facilitator-router.ts).
        const { routerFor } = await import("./facilitator-router.js");
        await routerFor(route, config.settleTimeoutSeconds * 1000).probe(PROBE_TIMEOUT_MS);
      } catch (err) {
        unreachable(
          "settlement route check failed: the x402 facilitator (X402_FACILITATOR_URL)",
          err,
        );
      }
    }
    return [...new Set(problems)];
  }

  let last: { at: number; answer: Promise<string[]> } | undefined;
  return {
    checkAtStart,
    problems() {
      const now = Date.now();
      if (!last || now - last.at >= PROBE_TTL_MS) last = { at: now, answer: look() };
      return last.answer;
    },
  };
}
