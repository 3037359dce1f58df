/**
 * The EVM family's configuration: who is paid (PAY_TO), each network's token (X402_ASSET*, over the
 * network's known USDC) and RPC (X402_RPC_URL_<NET>, else X402_RPC_URL), and how it settles: the
 * facilitators, directly with X402_SETTLER_KEY through that RPC, or a custom settler (exactly one).
 * Part of your project: edit freely.
 */
import type { Reader, Setting } from "../../ops/settings.js";
import { checksumAddress, isAddress } from "./address.js";
import type {
  NetworkPaymentConfig,
  PaymentConfig,
  RoutedNetworkConfig,
  SettlementRoute,
} from "../config.js";
import {
  type FamilyConfigInput,
  type FamilyConfigReader,
  networkEntry,
  type ResolvedListing,
} from "../family.js";
import { networkSettingSuffix, type ResolvedNetwork } from "../networks.js";
import { parseEvmNetwork } from "./networks.js";

/** One offered EVM network: its token, who is paid there, its RPC and how its payments settle. */
export interface EvmNetworkPaymentConfig extends NetworkPaymentConfig {
  family: "evm";
  network: ResolvedNetwork;
  payTo: `0x${string}`;
  /** When set: payer balance, nonce and contract-wallet signatures are checked on chain. */
  rpcUrl?: string;
  /** Absent only in dev mode, which never settles. */
  settlement?: SettlementRoute;
}

/** An offered EVM network with its route (production). */
export type RoutedEvmNetwork = EvmNetworkPaymentConfig & { settlement: SettlementRoute };

/** The route that settles payments on `network` (as configured). */
export function settlementRouteFor(network: RoutedNetworkConfig): SettlementRoute {
  return (network as RoutedEvmNetwork).settlement;
}

/** A checksummed address, or undefined (with a problem recorded when the value is bad). */
function readAddress(read: Reader, s: Setting, what: string): `0x${string}` | undefined {
  if (s.value === undefined) return undefined;
  // The zero address: USDC refuses a transfer to it, so every job would run and never be paid.
  if (/^0x0{40}$/i.test(s.value)) {
    read.problems.push(`${s.name} is the zero address, which USDC cannot pay: set it to ${what}`);
    return undefined;
  }
  if (isAddress(s.value)) return checksumAddress(s.value);
  read.problems.push(
    `${s.name} is ${JSON.stringify(s.value)}: set it to ${what} (0x and 40 hex digits, checksummed or all lowercase)`,
  );
  return undefined;
}

/**
 * Reads the EVM settings of one configuration. `missing` is set in a project without the `onchain`
 * feature: it words the refusal of a setting only that feature serves (an RPC, a settler key).
 */
export function readEvmConfig(
  input: FamilyConfigInput,
  missing?: (asked: string) => string,
): FamilyConfigReader {
  const { options, devMode, read, used } = input;
  const refuse = missing && refuser(read, missing);
  const payTo = read.text(options.payTo, "payment.payTo", "PAY_TO");
  // Production refuses to start without knowing where the money goes and on which chain:
  // a default could take testnet "money" for mainnet work or the other way round.
  if (!devMode && used && payTo.value === undefined)
    read.problems.splice(
      input.before, // first: where the money goes matters most
      0,
      "PAY_TO is not set: set it to the address that should receive payments (or enable dev mode for local testing)",
    );
  const payToAddress = readAddress(read, payTo, "the address that should receive payments");
  const routeFor = evmRoutes(input, refuse);
  const several = input.listed > 1;
  return {
    network: (written, setting) => resolveEvmNetwork(written, input, several, refuse),
    entry(written, listing) {
      if (payToAddress === undefined) return undefined; // reported above (production) or dev mode without it
      const rpcSetting = several
        ? `neither X402_RPC_URL_${networkSettingSuffix(written)} nor X402_RPC_URL`
        : "X402_RPC_URL";
      return networkEntry<EvmNetworkPaymentConfig>(
        {
          family: "evm",
          written,
          network: listing.network as ResolvedNetwork,
          payTo: payToAddress,
        },
        listing.rpcUrl,
        routeFor(written, listing.rpcUrl, rpcSetting),
      );
    },
    summary(own): Partial<PaymentConfig> {
      const first = own[0] as EvmNetworkPaymentConfig;
      return {
        payTo: first.payTo,
        network: first.network,
        ...(first.settlement && { settlement: first.settlement }),
        ...(first.rpcUrl && { rpcUrl: first.rpcUrl }),
      };
    },
  };
}

/** Refuses a setting that needs the `onchain` feature (true when it was set), each setting once. */
type Refuse = (s: Setting) => boolean;
function refuser(read: Reader, missing: (asked: string) => string): Refuse {
  return (s) => {
    if (s.value === undefined) return false;
    const problem = missing(`${s.name} is set (EVM checks on chain and direct settlement)`);
    if (!read.problems.includes(problem)) read.problems.push(problem);
    return true;
  };
}

/**
 * The settlement route: exactly one of a facilitator, direct settlement (a key, with each network's
 * RPC) or a custom settler. Production refuses to start without one: verifying payments without ever
 * collecting them would run every job for free.
 */
function evmRoutes(input: FamilyConfigInput, refuse: Refuse | undefined) {
  const { options, devMode, read, used, facilitator } = input;
  const problems = read.problems;
  const key = read.text(options.settlerKey, "payment.settlerKey", "X402_SETTLER_KEY");
  // Never repeat the key in a message: error output ends up in logs.
  const settlerKey = refuse?.(key) ? undefined : key.value;
  const keyOk = settlerKey !== undefined && /^0x[0-9a-fA-F]{64}$/.test(settlerKey);
  if (settlerKey !== undefined && !keyOk)
    problems.push(`${key.name} is not a private key: set it to 0x and 64 hex digits`);
  const chosen = [
    options.settler !== undefined ? "option payment.settler" : undefined,
    facilitator.setting.value !== undefined ? facilitator.setting.name : undefined,
    settlerKey !== undefined ? key.name : undefined,
  ].filter((name) => name !== undefined);
  const several = chosen.length > 1;
  if (several)
    problems.push(
      `${chosen.join(" and ")} are set together: choose one settlement route (a facilitator settles for you; a settler key settles from this server)`,
    );
  if (!devMode && used && chosen.length === 0 && key.value === undefined)
    problems.push(
      "no settlement route: set X402_FACILITATOR_URL to settle through an x402 facilitator (e.g. https://x402.org/facilitator, testnets only), " +
        `or X402_RPC_URL and X402_SETTLER_KEY to submit the transfers from this server (that account pays the gas${refuse ? "; needs the onchain feature: npm run add -- onchain" : ""}); ` +
        "without one the server would run paid jobs without ever collecting the payment",
    );
  /** The route of one network (`written` as configured), given that network's RPC endpoint. */
  return (written: string, rpcUrl: string | undefined, rpcSetting: string) => {
    if (several) return undefined;
    if (options.settler !== undefined)
      return { kind: "custom", settler: options.settler } as SettlementRoute;
    if (facilitator.route) return facilitator.route;
    if (settlerKey === undefined) return undefined;
    if (rpcUrl === undefined) {
      problems.push(
        `${key.name} is set but ${rpcSetting.startsWith("neither") ? `${rpcSetting} is set` : `${rpcSetting} is not`}: direct settlement sends its transactions on ${written} through that JSON-RPC endpoint`,
      );
      return undefined;
    }
    return keyOk
      ? ({ kind: "direct", rpcUrl, settlerKey: settlerKey as `0x${string}` } as SettlementRoute)
      : undefined;
  };
}

/**
 * One network's token and RPC: its own settings (X402_ASSET_<NET>, ..., <NET> = the name as written,
 * upper-cased, non-alphanumerics as "_") over the global ones, over the network's known USDC.
 */
function resolveEvmNetwork(
  written: string,
  input: FamilyConfigInput,
  several: boolean,
  refuse: Refuse | undefined,
): ResolvedListing | undefined {
  const { options, read } = input;
  const parsed = parseEvmNetwork(written)!; // the family parsed it
  const suffix = networkSettingSuffix(written);
  const own = (optionValue: string | undefined, optionName: string, env: string): Setting => {
    const specific = read.fromEnv(`${env}_${suffix}`);
    return specific.value !== undefined ? specific : read.text(optionValue, optionName, env);
  };
  const asset = own(options.asset, "payment.asset", "X402_ASSET");
  const assetName = own(options.assetName, "payment.assetName", "X402_ASSET_NAME");
  const assetVersion = own(options.assetVersion, "payment.assetVersion", "X402_ASSET_VERSION");
  const rpc = own(options.rpcUrl, "payment.rpcUrl", "X402_RPC_URL");
  const assetAddress = readAddress(read, asset, "the token contract address");
  const rpcUrl = refuse?.(rpc)
    ? undefined
    : read.url(rpc, "the network's JSON-RPC endpoint (http or https)", true);
  // Known networks default to their USDC; any setting given overrides that default.
  const token = asset.value !== undefined ? assetAddress : parsed.usdc?.asset;
  const name = assetName.value ?? parsed.usdc?.assetName;
  const version = assetVersion.value ?? parsed.usdc?.assetVersion;
  // With several networks, name the network's own setting: a global one would apply to all of them.
  const missing = (s: Setting, env: string, what: string): void => {
    const shown = several && !s.name.startsWith("option ") ? `${env}_${suffix}` : s.name;
    read.problems.push(
      `${shown} is not set: network ${parsed.caip2} has no built-in USDC, so set ${what}`,
    );
  };
  if (asset.value === undefined && !parsed.usdc)
    missing(asset, "X402_ASSET", "the token contract address");
  if (name === undefined)
    missing(assetName, "X402_ASSET_NAME", 'the token\'s EIP-712 domain name (e.g. "USD Coin")');
  if (version === undefined)
    missing(assetVersion, "X402_ASSET_VERSION", 'the token\'s EIP-712 domain version (e.g. "2")');
  if (!token || name === undefined || version === undefined) return undefined;
  const network: ResolvedNetwork = {
    v1Name: parsed.v1Name,
    caip2: parsed.caip2,
    chainId: parsed.chainId,
    asset: token as `0x${string}`,
    assetName: name,
    assetVersion: version,
  };
  return rpcUrl === undefined ? { network } : { network, rpcUrl };
}
