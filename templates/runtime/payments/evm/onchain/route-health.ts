/**
 * The `onchain` feature's watch of the EVM settlement routes that reach the chain themselves: checked
 * before the server listens (production refuses to start otherwise) and again by GET /health and
 * each metrics scrape (../../route-health.ts asks through the family, ../watch.ts). For every EVM
 * network offered with an RPC endpoint:
 *   - its JSON-RPC endpoint (X402_RPC_URL_<NET>, else X402_RPC_URL; direct settlement, or on-chain
 *     checks): reachable, and serving that network's chain; a node of another chain would make
 *     every paid job on it fail after it ran.
 *   - X402_SETTLER_KEY (direct settlement): the account pays the gas of every settlement, on each
 *     network's chain. Below one settlement's gas there it refuses to start (every paid job would
 *     run, then fail to settle); below LOW_BALANCE_SETTLEMENTS settlements' gas it warns. The
 *     balance is the metric agent_settler_balance_eth{network}.
 * Plain JSON-RPC over fetch (../../json-rpc.ts: eth_chainId, eth_getBalance, eth_gasPrice): viem is
 * loaded only for the settler key's address. Part of your project: edit freely.
 */
import type { Metrics } from "../../../ops/metrics.js";
import { redactUrl } from "../../../ops/redact.js";
import { clip } from "../../../ops/text.js";
import type { Logger } from "../../../types.js";
import type {
  ProductionPaymentConfig,
  RoutedNetworkConfig,
  SettlementRoute,
} from "../../config.js";
import type { FamilyWatch, StartRefusal } from "../../family.js";
import { rpcCall, TransientRpcError } from "../../json-rpc.js";
import { networkSettingSuffix } from "../../networks.js";
import type { RoutedEvmNetwork } from "../config.js";
import { loadViemAccounts } from "./viem.js";
import { chainRpcUrl } from "../watch.js";

type Hex = `0x${string}`;

/**
 * Gas one settlement (USDC's transferWithAuthorization) is counted at. It uses about 60-90k (more
 * when the payee's balance slot is new); this rounds up. Only L2 execution gas: on Base an L1 data
 * fee comes on top, which LOW_BALANCE_SETTLEMENTS leaves room for.
 */
export const SETTLEMENT_GAS = 100_000n;

/** Below gas for this many settlements at the current gas price, start-up and /health warn. */
export const LOW_BALANCE_SETTLEMENTS = 100n;

export interface SettlerFunds {
  address: Hex;
  balanceWei: bigint;
  /** Gas price times SETTLEMENT_GAS. */
  perSettlementWei: bigint;
  /** perSettlementWei times LOW_BALANCE_SETTLEMENTS: below it, warn. */
  lowWei: bigint;
}

/** The JSON-RPC endpoint as messages show it: its origin only (paths often hold an API key). */
const origin = (url: string): string => redactUrl(url, "origin");

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

/** The address of a settler key (direct settlement; module.ts gives it to the scheme too). */
export async function settlerAddress(key: Hex): Promise<Hex> {
  return (await loadViemAccounts()).privateKeyToAddress(key);
}

/**
 * One EVM network whose route is checked, with what its messages name: the network as the seller
 * wrote it, its CAIP-2 id, and the setting its RPC endpoint comes from.
 */
interface CheckedNetwork {
  /** "base-sepolia (eip155:84532)", or the CAIP-2 id alone when the seller wrote that. */
  label: string;
  /** As written in X402_NETWORKS: what a problem on /health names. */
  written: string;
  caip2: string;
  chainId: number;
  /** The network's JSON-RPC endpoint (on-chain checks; direct settlement's transactions). */
  rpcUrl: string | undefined;
  /** Where rpcUrl comes from, as messages name it. */
  rpcSetting: string;
  /** The variable that fixes it: the network's own X402_RPC_URL_<NET> when several are offered. */
  rpcFix: string;
  /** "X402_NETWORK is" (one network) or "X402_NETWORKS lists". */
  offered: string;
  kind: SettlementRoute["kind"];
  /** Direct settlement's key on this network. */
  settlerKey: Hex | undefined;
}

/** The offer's EVM networks, in its order. */
function checkedNetworks(
  config: ProductionPaymentConfig,
  nets: RoutedEvmNetwork[],
): CheckedNetwork[] {
  const several = config.networks.length > 1;
  const checked: CheckedNetwork[] = [];
  for (const n of nets) {
    const { chainId } = n.network;
    const route = n.settlement;
    const suffix = networkSettingSuffix(n.written);
    checked.push({
      label: n.written === n.network.caip2 ? n.written : `${n.written} (${n.network.caip2})`,
      written: n.written,
      caip2: n.network.caip2,
      chainId,
      rpcUrl: chainRpcUrl(n),
      rpcSetting: several ? `X402_RPC_URL_${suffix} (else X402_RPC_URL)` : "X402_RPC_URL",
      rpcFix: several ? `X402_RPC_URL_${suffix}` : "X402_RPC_URL",
      offered: several ? "X402_NETWORKS lists" : "X402_NETWORK is",
      kind: route.kind,
      settlerKey: route.kind === "direct" ? route.settlerKey : undefined,
    });
  }
  return checked;
}

/** "a base-sepolia (…) node", "an arbitrum-sepolia (…) node". */
const aNode = (n: CheckedNetwork): string =>
  `${/^[aeiou]/i.test(n.label) ? "an" : "a"} ${n.label} node`;

/** The network's RPC endpoint answers for another chain than the network's. */
class WrongChain extends Error {}

/** Resolves when the endpoint serves the network's chain; else an Error naming the setting and what is wrong. */
async function checkChain(n: CheckedNetwork, rpcUrl: string, timeoutMs: number): Promise<void> {
  let id: bigint;
  try {
    id = await quantity(rpcUrl, "eth_chainId", [], timeoutMs);
  } catch (err) {
    throw new Error(
      `could not reach the JSON-RPC endpoint ${n.rpcSetting} at ${origin(rpcUrl)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (id !== BigInt(n.chainId))
    throw new WrongChain(
      `${n.rpcSetting} at ${origin(rpcUrl)} serves chain ${id}, but ${n.offered} ${n.label}, chain ${n.chainId}: point ${n.rpcFix} at a node of chain ${n.chainId}`,
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

/** What the checks of one watch share: where they log and report, and the settler's funds. */
interface Watcher {
  logger: Logger;
  several: boolean;
  /** Reads the settler's funds on `n`'s chain, reports them as its metric, and returns them. */
  funds(n: CheckedNetwork, rpcUrl: string, key: Hex, timeoutMs: number): Promise<SettlerFunds>;
}

/** One network before listening: why the server must not start, if it must not; warns when low. */
async function refusal(
  w: Watcher,
  n: CheckedNetwork,
  timeoutMs: number,
): Promise<StartRefusal | undefined> {
  const rpcUrl = n.rpcUrl;
  if (rpcUrl === undefined) return undefined; // the facilitator is checked by server.ts
  const why =
    n.kind === "direct"
      ? "direct settlement sends every transfer through it"
      : "paid jobs are checked on chain through it";
  try {
    await checkChain(n, rpcUrl, timeoutMs);
  } catch (err) {
    const wrong = err instanceof WrongChain; // a setting to fix, as is an answer that is no node's
    return {
      text:
        `${(err as Error).message}. The server does not start without ${aNode(n)} there: ${why}` +
        (wrong ? "" : "; check the URL and that the node is up"),
      transient: (err as Error).cause instanceof TransientRpcError,
    };
  }
  if (n.settlerKey === undefined) return undefined;
  let f: SettlerFunds;
  try {
    f = await w.funds(n, rpcUrl, n.settlerKey, timeoutMs);
  } catch (err) {
    return {
      text: `could not read the balance of the settler account (X402_SETTLER_KEY) on ${n.label} through ${n.rpcSetting} at ${origin(rpcUrl)}: ${(err as Error).message}`,
      transient: err instanceof TransientRpcError,
    };
  }
  const unfunded = fundsRefusal(w, n, f);
  return unfunded === undefined ? undefined : { text: unfunded };
}

/** The settler's funds at start-up: too little refuses to start; low warns; else says how much. */
function fundsRefusal(w: Watcher, n: CheckedNetwork, f: SettlerFunds): string | undefined {
  const cost = `${formatEth(f.lowWei)} pays for ${LOW_BALANCE_SETTLEMENTS} settlements at the current gas price`;
  if (unfunded(f))
    return (
      `the settler account ${f.address} (X402_SETTLER_KEY) holds ${formatEth(f.balanceWei)} on ${n.label}, ` +
      `less than one settlement's gas (${formatEth(f.perSettlementWei)}): every ${w.several ? `job paid on ${n.written}` : "paid job"} would run and then fail to settle. ` +
      `Send it ETH on ${n.label} (${cost}), or set X402_SETTLER_KEY to a funded account`
    );
  if (f.balanceWei < f.lowWei)
    w.logger.warn(
      `the settler account ${f.address} (X402_SETTLER_KEY) is low on gas money: ${formatEth(f.balanceWei)}, enough for about ${f.balanceWei / f.perSettlementWei} settlements on ${n.label}; top it up (${cost})`,
      { settler: f.address, network: n.caip2 },
    );
  else
    w.logger.info(
      `the settler account ${f.address} holds ${formatEth(f.balanceWei)} for gas on ${n.label}`,
      {
        settler: f.address,
        network: n.caip2,
        settlements_covered: String(f.balanceWei / (f.perSettlementWei || 1n)),
      },
    );
  return undefined;
}

/** One network's route now: what is wrong with it (details go to the log, not to callers). */
async function lookAt(w: Watcher, n: CheckedNetwork, timeoutMs: number): Promise<string[]> {
  if (n.rpcUrl === undefined) return [];
  try {
    await checkChain(n, n.rpcUrl, timeoutMs);
    if (n.settlerKey === undefined) return [];
    const f = await w.funds(n, n.rpcUrl, n.settlerKey, timeoutMs);
    if (!unfunded(f)) return [];
    w.logger.warn(
      `the settler account ${f.address} (X402_SETTLER_KEY) holds ${formatEth(f.balanceWei)} on ${n.label}, less than one settlement's gas`,
      { network: n.caip2 },
    );
    return ["unfunded"];
  } catch (err) {
    w.logger.warn(`settlement route check failed on ${n.label}: ${(err as Error).message}`, {
      network: n.caip2,
    });
    return [err instanceof WrongChain ? "wrong_chain" : "unreachable"];
  }
}

/** The watch of the EVM networks with an RPC endpoint (../watch.ts passes only those): chain, settler funds. */
export function watchChain(
  nets: RoutedNetworkConfig[],
  config: ProductionPaymentConfig,
  deps: { logger: Logger; metrics: Metrics },
): FamilyWatch {
  const networks = checkedNetworks(config, nets as RoutedEvmNetwork[]);
  const addresses = new Map<Hex, Promise<Hex>>();
  const settler = (key: Hex): Promise<Hex> => {
    let address = addresses.get(key);
    if (!address) addresses.set(key, (address = settlerAddress(key)));
    return address;
  };
  const w: Watcher = {
    logger: deps.logger,
    several: config.networks.length > 1,
    async funds(n, rpcUrl, key, timeoutMs) {
      const f = await settlerFunds(rpcUrl, await settler(key), timeoutMs);
      deps.metrics.settlerBalance?.(f.balanceWei, f.lowWei, n.caip2);
      return f;
    },
  };
  return {
    async refusals(timeoutMs) {
      // Every network at once; all refusals in one message, in the offer's order.
      const found = await Promise.all(networks.map((n) => refusal(w, n, timeoutMs)));
      return found.filter((p) => p !== undefined);
    },
    probe(net, timeoutMs) {
      const n = networks.find((c) => c.caip2 === net.network.caip2);
      return n && (() => lookAt(w, n, timeoutMs));
    },
  };
}
