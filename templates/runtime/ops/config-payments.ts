/**
 * Payment configuration: who is paid, on which network and token, and how payments are settled.
 * Production refuses to start without a settlement route. Part of your project: edit freely.
 */
import {
  CDP_HOST,
  cdpKeyProblem,
  type FacilitatorAuth,
  missingCdpAuth,
  parseFacilitatorHeaders,
} from "../payments/facilitator-credentials.js";
import {
  networkSettingSuffix,
  parseNetwork,
  type ResolvedNetwork,
  type SolanaNetwork,
} from "../payments/networks.js";
import { isSolanaAddress, parseSolanaSecretKey } from "../payments/svm/keys.js";
import { readComputeBudgetCaps } from "../payments/svm/compute-config.js";
import type { ComputeBudgetCaps } from "../payments/svm/transaction.js";
import { SETTLEMENT_MARGIN_SECONDS, type Settler } from "../payments/settlement.js";
import type { Reader, Setting } from "./settings.js";
import { redactUrl } from "./redact.js";

const DEFAULT_MAX_TIMEOUT_SECONDS = 300;
const DEFAULT_SETTLE_TIMEOUT_SECONDS = 30;

export interface PaymentOptions {
  /** Address that receives the USDC (on every EVM network). */
  payTo: string;
  /** Address (base58) that receives the USDC on every Solana network (PAY_TO_SOLANA). */
  payToSolana?: string;
  /**
   * Secret key of the account that pays Solana fees and settles Solana payments from this server
   * (SOLANA_FEE_PAYER_KEY: base58 of 64 bytes, or solana-keygen's JSON byte array); needs the
   * network's X402_RPC_URL_<NET>. Without it, Solana payments settle through X402_FACILITATOR_URL.
   */
  solanaFeePayerKey?: string;
  /** One network: "base", "base-sepolia", ..., "eip155:<chainId>" (X402_NETWORK). */
  network: string;
  /** Several networks in preference order (X402_NETWORKS); not together with `network`. */
  networks: string[];
  /** Token contract; required for eip155:<chainId> networks we do not know. */
  asset?: string;
  /** EIP-712 domain name of the token. */
  assetName?: string;
  /** EIP-712 domain version of the token. */
  assetVersion?: string;
  /** How long a client's payment authorization should stay valid (default 300). */
  maxTimeoutSeconds?: number;
  /**
   * Settle through this x402 facilitator, or these, comma-separated (X402_FACILITATOR_URL): each
   * kind of payment goes to the first one whose GET /supported lists it.
   */
  facilitatorUrl?: string;
  /** JSON-RPC endpoint of the network (X402_RPC_URL): on-chain checks, and direct settlement. */
  rpcUrl?: string;
  /** Private key (0x + 64 hex) of the account that settles directly (X402_SETTLER_KEY); needs rpcUrl. */
  settlerKey?: string;
  /** Seconds to wait for a settlement to confirm (X402_SETTLE_TIMEOUT_SECONDS, default 30). */
  settleTimeoutSeconds?: number;
  /** Your own settlement route instead of the built-in ones (see settlement.ts). */
  settler?: Settler;
}

export type SettlementRoute =
  | {
      kind: "facilitator";
      /** The first facilitator. */
      url: string;
      /** Every facilitator, in order (X402_FACILITATOR_URL). */
      urls: string[];
      /** Credentials sent to them (CDP_API_KEY_*, X402_FACILITATOR_AUTH, X402_FACILITATOR_HEADERS). */
      auth: FacilitatorAuth;
    }
  | { kind: "direct"; rpcUrl: string; settlerKey: `0x${string}` }
  | { kind: "custom"; settler: Settler };

/**
 * How a Solana network's payments settle: through the facilitator router (its fee payer, from its
 * /supported), or directly: this server co-signs as fee payer (SOLANA_FEE_PAYER_KEY) and sends the
 * transaction through the network's RPC.
 */
export type SolanaSettlementRoute =
  | Extract<SettlementRoute, { kind: "facilitator" }>
  | {
      kind: "direct";
      rpcUrl: string;
      /** The 64-byte secret key (never logged). */
      feePayerKey: Uint8Array;
      /** Its public address (base58): the 402's extra.feePayer. */
      feePayer: string;
    };

/** One offered EVM network: its token, who is paid there, its RPC and how its payments settle. */
export interface EvmNetworkPaymentConfig {
  family: "evm";
  /** The network as the seller wrote it (X402_NETWORKS entry): names its own settings. */
  written: string;
  network: ResolvedNetwork;
  payTo: `0x${string}`;
  /** When set: payer balance, nonce and contract-wallet signatures are checked on chain. */
  rpcUrl?: string;
  /** Absent only in dev mode, which never settles. */
  settlement?: SettlementRoute;
}

/** One offered Solana network: its mint, who is paid there (PAY_TO_SOLANA), its RPC and route. */
export interface SolanaNetworkPaymentConfig {
  family: "svm";
  written: string;
  network: SolanaNetwork;
  /** Base58 address; USDC goes to its associated token account, which must exist. */
  payTo: string;
  /** X402_RPC_URL_<NET> (the global X402_RPC_URL is an EVM endpoint, never used for Solana). */
  rpcUrl?: string;
  settlement?: SolanaSettlementRoute;
  /** SOLANA_MAX_COMPUTE_UNITS and SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS (defaults when absent). */
  computeBudget?: ComputeBudgetCaps;
}

/** One offered network, by family. */
export type NetworkPaymentConfig = EvmNetworkPaymentConfig | SolanaNetworkPaymentConfig;

/** An offered network with its settlement route (production). */
export type RoutedNetworkConfig =
  | (EvmNetworkPaymentConfig & { settlement: SettlementRoute })
  | (SolanaNetworkPaymentConfig & { settlement: SolanaSettlementRoute });

export interface PaymentConfig {
  /**
   * The first (preferred) EVM network's payee, network, route and RPC: what code that knows one EVM
   * network reads; absent when only Solana networks are offered. `networks` holds every offered
   * network in the seller's order.
   */
  payTo?: `0x${string}`;
  network?: ResolvedNetwork;
  /** Every offered network in the seller's order (the 402 lists them so). */
  networks: NetworkPaymentConfig[];
  maxTimeoutSeconds: number;
  /** Absent only in dev mode, which never settles. */
  settlement?: SettlementRoute;
  /** When set: payer balance, nonce and contract-wallet signatures are checked on chain. */
  rpcUrl?: string;
  settleTimeoutSeconds: number;
}

/** Production cannot start without a settlement route on every network (fail closed). */
export type ProductionPaymentConfig = Omit<PaymentConfig, "networks"> & {
  networks: RoutedNetworkConfig[];
};

const NETWORK_NAMES =
  '"base", "base-sepolia", "polygon", "arbitrum", "arbitrum-sepolia", "avalanche", "ethereum", "solana", "solana-devnet", "eip155:<chainId>" or "solana:<genesis hash prefix>"';

/** X402_NETWORKS or X402_NETWORK (never both): the networks as written, in order. */
function readNetworkList(options: Partial<PaymentOptions>, devMode: boolean, read: Reader) {
  const problems = read.problems;
  const one = read.text(options.network, "payment.network", "X402_NETWORK");
  const listSetting: Setting =
    options.networks !== undefined
      ? { value: options.networks.join(","), name: "option payment.networks" }
      : read.fromEnv("X402_NETWORKS");
  if (one.value !== undefined && listSetting.value !== undefined) {
    problems.push(
      `${one.name} and ${listSetting.name} are both set: keep one (X402_NETWORKS lists several networks in preference order, X402_NETWORK names one)`,
    );
    return [];
  }
  if (one.value !== undefined) return [{ written: one.value, setting: one }];
  if (listSetting.value === undefined) {
    if (!devMode)
      problems.push(
        `X402_NETWORK is not set: set it to ${NETWORK_NAMES.replace(" or ", ", ")} (or X402_NETWORKS to several, comma-separated, in preference order); there is deliberately no default`,
      );
    return [];
  }
  const entries = listSetting.value.split(",").map((e) => e.trim());
  if (entries.some((e) => e === "")) {
    problems.push(
      `${listSetting.name} is ${JSON.stringify(listSetting.value)}: list networks separated by single commas, e.g. "base,arbitrum"`,
    );
    return [];
  }
  return entries.map((written) => ({ written, setting: listSetting }));
}

export function resolvePayment(
  options: Partial<PaymentOptions>,
  devMode: boolean,
  read: Reader,
): PaymentConfig | undefined {
  const problems = read.problems;
  const before = problems.length;
  const listed = readNetworkList(options, devMode, read);
  const families = new Set(listed.map((l) => parseNetwork(l.written)?.family));
  const solana = families.has("svm");
  // PAY_TO is needed unless every listed network is a Solana one (PAY_TO_SOLANA receives there).
  const evm = !solana || families.has("evm");
  const payTo = read.text(options.payTo, "payment.payTo", "PAY_TO");
  // Production refuses to start without knowing where the money goes and on which chain:
  // a default could take testnet "money" for mainnet work or the other way round.
  if (!devMode && evm && payTo.value === undefined)
    problems.splice(
      before, // first: where the money goes matters most
      0,
      "PAY_TO is not set: set it to the address that should receive payments (or enable dev mode for local testing)",
    );
  const payToSolana = read.text(options.payToSolana, "payment.payToSolana", "PAY_TO_SOLANA");
  if (!devMode && solana && payToSolana.value === undefined)
    problems.push(
      "PAY_TO_SOLANA is not set: set it to the Solana address (base58) that should receive payments on Solana networks; its USDC token account must exist",
    );
  if (payToSolana.value !== undefined && !isSolanaAddress(payToSolana.value))
    problems.push(
      `${payToSolana.name} is ${JSON.stringify(payToSolana.value.slice(0, 60))}: set it to a Solana address (base58 of 32 bytes, e.g. from solana-keygen pubkey)`,
    );
  const solanaPayTo =
    payToSolana.value !== undefined && isSolanaAddress(payToSolana.value)
      ? payToSolana.value
      : undefined;
  const maxTimeoutSeconds = read.count(
    options.maxTimeoutSeconds,
    "payment.maxTimeoutSeconds",
    "X402_MAX_TIMEOUT_SECONDS",
    {
      min: SETTLEMENT_MARGIN_SECONDS + 1,
      fallback: DEFAULT_MAX_TIMEOUT_SECONDS,
      hint: `set it to a whole number of seconds above ${SETTLEMENT_MARGIN_SECONDS} (default ${DEFAULT_MAX_TIMEOUT_SECONDS})`,
    },
  );

  const payToAddress = read.address(payTo, "the address that should receive payments");

  const settlement = resolveSettlement(options, devMode, read, evm);
  const computeBudget = solana ? readComputeBudgetCaps(read) : undefined;
  const networks: NetworkPaymentConfig[] = [];
  const seen = new Map<string, string>();
  /** False (and the problem said) when `caip2` was listed already, under another spelling or the same. */
  const firstListing = (caip2: string, written: string, setting: Setting): boolean => {
    const earlier = seen.get(caip2);
    if (earlier !== undefined) {
      problems.push(
        `${setting.name} lists ${caip2} twice (${JSON.stringify(earlier)} and ${JSON.stringify(written)}): list each network once`,
      );
      return false;
    }
    seen.set(caip2, written);
    return true;
  };
  for (const { written, setting } of listed) {
    if (parseNetwork(written)?.family === "svm") {
      const net = resolveSolanaNetwork(written, setting, read);
      if (!net) continue;
      if (!firstListing(net.network.caip2, written, setting)) continue;
      if (solanaPayTo === undefined) continue; // reported above (production) or dev mode without it
      const entry: SolanaNetworkPaymentConfig = {
        family: "svm",
        written,
        network: net.network,
        payTo: solanaPayTo,
        computeBudget: computeBudget!,
      };
      if (net.rpcUrl) entry.rpcUrl = net.rpcUrl;
      const route = settlement.solanaRouteFor(written, net.rpcUrl);
      if (route) entry.settlement = route;
      networks.push(entry);
      continue;
    }
    const net = resolveNetwork(written, setting, options, read, listed.length > 1);
    if (!net) continue;
    if (!firstListing(net.network.caip2, written, setting)) continue;
    if (payToAddress === undefined) continue; // reported above (production) or dev mode without it
    const entry: EvmNetworkPaymentConfig = {
      family: "evm",
      written,
      network: net.network,
      payTo: payToAddress,
    };
    if (net.rpcUrl) entry.rpcUrl = net.rpcUrl;
    const rpcSetting =
      listed.length > 1
        ? `neither X402_RPC_URL_${networkSettingSuffix(written)} nor X402_RPC_URL`
        : "X402_RPC_URL";
    const route = settlement.routeFor(written, net.rpcUrl, rpcSetting);
    if (route) entry.settlement = route;
    networks.push(entry);
  }

  if (problems.length > before || networks.length !== listed.length || networks.length === 0)
    return undefined;
  const config: PaymentConfig = {
    networks,
    maxTimeoutSeconds,
    settleTimeoutSeconds: settlement.timeoutSeconds,
  };
  const first = networks.find((n) => n.family === "evm");
  if (first) {
    config.payTo = first.payTo;
    config.network = first.network;
    if (first.settlement) config.settlement = first.settlement;
    if (first.rpcUrl) config.rpcUrl = first.rpcUrl;
  }
  return config;
}

/**
 * One network's token and RPC: its own settings (X402_ASSET_<NET>, ..., <NET> = the name as written,
 * upper-cased, non-alphanumerics as "_") over the global ones, over the network's known USDC.
 */
function resolveNetwork(
  written: string,
  setting: Setting,
  options: Partial<PaymentOptions>,
  read: Reader,
  several: boolean,
): { network: ResolvedNetwork; rpcUrl?: string } | undefined {
  const problems = read.problems;
  const parsed = parseNetwork(written);
  if (!parsed) {
    problems.push(
      several
        ? `${setting.name} lists ${JSON.stringify(written)}: use ${NETWORK_NAMES}`
        : `${setting.name} is ${JSON.stringify(written)}: use ${NETWORK_NAMES}`,
    );
    return undefined;
  }
  if (parsed.family === "svm") return undefined; // resolveSolanaNetwork's
  const suffix = networkSettingSuffix(written);
  const own = (optionValue: string | undefined, optionName: string, env: string): Setting => {
    const specific = read.fromEnv(`${env}_${suffix}`);
    return specific.value !== undefined ? specific : read.text(optionValue, optionName, env);
  };
  const asset = own(options.asset, "payment.asset", "X402_ASSET");
  const assetName = own(options.assetName, "payment.assetName", "X402_ASSET_NAME");
  const assetVersion = own(options.assetVersion, "payment.assetVersion", "X402_ASSET_VERSION");
  const rpc = own(options.rpcUrl, "payment.rpcUrl", "X402_RPC_URL");
  const assetAddress = read.address(asset, "the token contract address");
  const rpcUrl = read.url(rpc, "the network's JSON-RPC endpoint (http or https)", true);

  // Known networks default to their USDC; any setting given overrides that default.
  const token = asset.value !== undefined ? assetAddress : parsed.usdc?.asset;
  const name = assetName.value ?? parsed.usdc?.assetName;
  const version = assetVersion.value ?? parsed.usdc?.assetVersion;
  // With several networks, name the network's own setting: a global one would apply to all of them.
  const missing = (s: Setting, env: string, what: string): void => {
    const shown = several && !s.name.startsWith("option ") ? `${env}_${suffix}` : s.name;
    problems.push(
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

/**
 * One Solana network's mint and RPC: X402_ASSET_<NET> over the network's known USDC, and
 * X402_RPC_URL_<NET> only (the global X402_RPC_URL is an EVM node; Solana has its own).
 */
function resolveSolanaNetwork(
  written: string,
  setting: Setting,
  read: Reader,
): { network: SolanaNetwork; rpcUrl?: string } | undefined {
  const parsed = parseNetwork(written);
  if (parsed?.family !== "svm") return undefined;
  const suffix = networkSettingSuffix(written);
  const asset = read.fromEnv(`X402_ASSET_${suffix}`);
  const rpc = read.fromEnv(`X402_RPC_URL_${suffix}`);
  const rpcUrl = read.url(rpc, "the Solana network's JSON-RPC endpoint (http or https)", true);
  if (asset.value !== undefined && !isSolanaAddress(asset.value)) {
    read.problems.push(
      `${asset.name} is ${JSON.stringify(asset.value.slice(0, 60))}: set it to the token's mint address (base58 of 32 bytes)`,
    );
    return undefined;
  }
  const mint = asset.value ?? parsed.usdc?.asset;
  if (mint === undefined) {
    read.problems.push(
      `${asset.name} is not set: network ${parsed.caip2} (${setting.name}) has no built-in USDC, so set the mint address of its USDC (base58)`,
    );
    return undefined;
  }
  const network: SolanaNetwork = {
    family: "svm",
    v1Name: parsed.v1Name,
    caip2: parsed.caip2,
    asset: mint,
    decimals: parsed.usdc?.decimals ?? 6,
  };
  return rpcUrl === undefined ? { network } : { network, rpcUrl };
}

/**
 * The settlement route: exactly one of a facilitator, direct settlement (a key, with each network's
 * RPC) or a custom settler. Production refuses to start without one: verifying payments without ever
 * collecting them would run every job for free.
 */
function resolveSettlement(
  options: Partial<PaymentOptions>,
  devMode: boolean,
  read: Reader,
  evm: boolean,
) {
  const problems = read.problems;
  const facilitator = read.text(
    options.facilitatorUrl,
    "payment.facilitatorUrl",
    "X402_FACILITATOR_URL",
  );
  const key = read.text(options.settlerKey, "payment.settlerKey", "X402_SETTLER_KEY");
  const timeoutSeconds = read.count(
    options.settleTimeoutSeconds,
    "payment.settleTimeoutSeconds",
    "X402_SETTLE_TIMEOUT_SECONDS",
    {
      min: 1,
      max: 600,
      fallback: DEFAULT_SETTLE_TIMEOUT_SECONDS,
      hint: `set it to a whole number of seconds from 1 to 600 (default ${DEFAULT_SETTLE_TIMEOUT_SECONDS})`,
    },
  );
  const facilitatorUrls = facilitatorList(facilitator, read);
  const auth = facilitatorAuth(facilitatorUrls ?? [], read);
  // Never repeat the key in a message: error output ends up in logs.
  const settlerKey = key.value;
  const keyOk = settlerKey !== undefined && /^0x[0-9a-fA-F]{64}$/.test(settlerKey);
  if (settlerKey !== undefined && !keyOk)
    problems.push(`${key.name} is not a private key: set it to 0x and 64 hex digits`);

  const chosen = [
    options.settler !== undefined ? "option payment.settler" : undefined,
    facilitator.value !== undefined ? facilitator.name : undefined,
    settlerKey !== undefined ? key.name : undefined,
  ].filter((name) => name !== undefined);
  const several = chosen.length > 1;
  if (several)
    problems.push(
      `${chosen.join(" and ")} are set together: choose one settlement route (a facilitator settles for you; a settler key settles from this server)`,
    );
  if (!devMode && evm && chosen.length === 0)
    problems.push(
      "no settlement route: set X402_FACILITATOR_URL to settle through an x402 facilitator (e.g. https://x402.org/facilitator, testnets only), " +
        "or X402_RPC_URL and X402_SETTLER_KEY to submit the transfers from this server (that account pays the gas); " +
        "without one the server would run paid jobs without ever collecting the payment",
    );

  /** The route of one network (`written` as configured), given that network's RPC endpoint. */
  const routeFor = (
    written: string,
    rpcUrl: string | undefined,
    rpcSetting: string,
  ): SettlementRoute | undefined => {
    if (several) return undefined;
    if (options.settler !== undefined) return { kind: "custom", settler: options.settler };
    if (facilitatorUrls !== undefined && auth !== undefined)
      return { kind: "facilitator", url: facilitatorUrls[0]!, urls: facilitatorUrls, auth };
    if (settlerKey === undefined) return undefined;
    if (rpcUrl === undefined) {
      problems.push(
        `${key.name} is set but ${rpcSetting.startsWith("neither") ? `${rpcSetting} is set` : `${rpcSetting} is not`}: direct settlement sends its transactions on ${written} through that JSON-RPC endpoint`,
      );
      return undefined;
    }
    return keyOk ? { kind: "direct", rpcUrl, settlerKey: settlerKey as `0x${string}` } : undefined;
  };
  // Solana: SOLANA_FEE_PAYER_KEY settles directly (with the network's RPC), else the facilitators.
  const feeKey = read.text(
    options.solanaFeePayerKey,
    "payment.solanaFeePayerKey",
    "SOLANA_FEE_PAYER_KEY",
  );
  let feePayer: { bytes: Uint8Array; address: string } | undefined;
  if (feeKey.value !== undefined) {
    // Never repeat the key: messages end up in logs.
    const parsed = parseSolanaSecretKey(feeKey.value);
    if ("problem" in parsed) problems.push(`${feeKey.name} ${parsed.problem}`);
    else feePayer = parsed;
  }
  const solanaRouteFor = (
    written: string,
    rpcUrl: string | undefined,
  ): SolanaSettlementRoute | undefined => {
    const rpcSetting = `X402_RPC_URL_${networkSettingSuffix(written)}`;
    if (feeKey.value !== undefined) {
      if (rpcUrl === undefined) {
        problems.push(
          `${feeKey.name} is set but ${rpcSetting} is not: direct settlement on ${written} simulates and sends its transactions through that Solana JSON-RPC endpoint (X402_RPC_URL is for EVM networks only)`,
        );
        return undefined;
      }
      return (
        feePayer && {
          kind: "direct",
          rpcUrl,
          feePayerKey: feePayer.bytes,
          feePayer: feePayer.address,
        }
      );
    }
    if (facilitatorUrls !== undefined && auth !== undefined)
      return { kind: "facilitator", url: facilitatorUrls[0]!, urls: facilitatorUrls, auth };
    if (!devMode && facilitator.value === undefined)
      problems.push(
        `no settlement route for ${written}: set X402_FACILITATOR_URL to facilitators that settle Solana payments, ` +
          `or SOLANA_FEE_PAYER_KEY and ${rpcSetting} to co-sign and send them from this server (that account pays the fees, in SOL)` +
          (options.settler !== undefined
            ? " (option payment.settler settles EVM payments only)"
            : ""),
      );
    return undefined;
  };
  return { routeFor, solanaRouteFor, timeoutSeconds };
}

/**
 * X402_FACILITATOR_URL: one facilitator base URL, or several separated by commas. Credentials in a
 * URL (https://user:pass@host/...) are sent as HTTP Basic authorization, never shown.
 */
function facilitatorList(s: Setting, read: Reader): string[] | undefined {
  if (s.value === undefined) return undefined;
  const parts = s.value.split(",").map((p) => p.trim());
  const urls: string[] = [];
  const what =
    "the facilitator's base URL (it serves /verify and /settle), e.g. https://x402.org/facilitator, or several separated by commas";
  parts.forEach((part, i) => {
    const name = parts.length > 1 ? `${s.name} entry ${i + 1}` : s.name;
    if (part === "") {
      read.problems.push(`${name} is empty: set it to ${what}`);
      return;
    }
    // A URL holding credentials is never repeated.
    const secret = URL.canParse(part) && /@/.test(part);
    const url = read.url({ value: part, name }, what, secret);
    if (url !== undefined) urls.push(url);
  });
  if (urls.length !== parts.length) return undefined;
  const where = urls
    .map((u) => new URL(u))
    .map((u) => `${u.origin}${u.pathname.replace(/\/+$/, "")}`);
  const twice = urls.find((_, i) => where.indexOf(where[i]!) !== i);
  if (twice !== undefined) {
    read.problems.push(
      `${s.name} lists ${redactUrl(twice).replace(/\/+$/, "")} twice: list each facilitator once`,
    );
    return undefined;
  }
  return urls;
}

/** CDP_API_KEY_ID + CDP_API_KEY_SECRET, X402_FACILITATOR_AUTH and X402_FACILITATOR_HEADERS. Never repeats a secret. */
function facilitatorAuth(urls: readonly string[], read: Reader): FacilitatorAuth | undefined {
  const problems = read.problems;
  const before = problems.length;
  const keyId = read.fromEnv("CDP_API_KEY_ID");
  const keySecret = read.fromEnv("CDP_API_KEY_SECRET");
  const mode = read.fromEnv("X402_FACILITATOR_AUTH");
  const headerText = read.fromEnv("X402_FACILITATOR_HEADERS");
  const absent = missingCdpAuth(
    { keyId: keyId.value, keySecret: keySecret.value, mode: mode.value },
    urls,
  );
  if (absent) return void problems.push(absent);
  if (urls.length === 0) return { headers: [] }; // no facilitator: nothing is sent anywhere

  if (mode.value !== undefined && mode.value !== "cdp")
    problems.push(
      `${mode.name} is ${JSON.stringify(mode.value)}: set it to "cdp" to send CDP JWTs to every facilitator, or leave it unset (CDP JWTs go to ${CDP_HOST} only)`,
    );
  if ((keyId.value === undefined) !== (keySecret.value === undefined))
    problems.push(
      `${keyId.value === undefined ? keyId.name : keySecret.name} is not set but ${keyId.value === undefined ? keySecret.name : keyId.name} is: set both (the CDP API key's id and its private key) or neither`,
    );
  const everywhere = mode.value === "cdp";
  const cdpHosts = urls.filter((u) => new URL(u).hostname === CDP_HOST);
  if (everywhere && keyId.value === undefined && keySecret.value === undefined)
    problems.push(
      `${mode.name} is "cdp" but CDP_API_KEY_ID and CDP_API_KEY_SECRET are not set: set them to your CDP API key`,
    );
  if (
    !everywhere &&
    cdpHosts.length > 0 &&
    keyId.value === undefined &&
    keySecret.value === undefined
  )
    problems.push(
      `X402_FACILITATOR_URL names Coinbase's facilitator (${CDP_HOST}), which wants a CDP API key: set CDP_API_KEY_ID and CDP_API_KEY_SECRET (create a key at portal.cdp.coinbase.com)`,
    );
  if (keySecret.value !== undefined) {
    const problem = cdpKeyProblem(keySecret.value);
    if (problem) problems.push(`${keySecret.name} ${problem}`);
  }
  let headers: FacilitatorAuth["headers"] = [];
  if (headerText.value !== undefined) {
    const parsed = parseFacilitatorHeaders(headerText.value, headerText.name);
    problems.push(...parsed.problems);
    headers = parsed.headers;
    const hosts = urls.map((u) => new URL(u));
    for (const h of headers) {
      if (h.host === undefined && urls.length > 1)
        problems.push(
          `${headerText.name} sends ${h.name} without naming a facilitator, and X402_FACILITATOR_URL lists ${urls.length}: ` +
            `scope it to the facilitator that wants it, e.g. "[${hosts[0]!.host}] ${h.name}: ..." (a key for one facilitator is never sent to another)`,
        );
      if (h.host !== undefined && !hosts.some((u) => u.host === h.host || u.hostname === h.host))
        problems.push(
          `${headerText.name} scopes ${h.name} to ${h.host}, which is not a facilitator in X402_FACILITATOR_URL (${hosts.map((u) => u.host).join(", ")})`,
        );
    }
  }
  // One Authorization header per request: URL credentials and CDP JWTs do not mix on one facilitator.
  for (const u of urls.map((x) => new URL(x))) {
    const basic = u.username !== "" || u.password !== "";
    const jwt = keyId.value !== undefined && (everywhere || u.hostname === CDP_HOST);
    const header = headers.some(
      (h) =>
        h.name.toLowerCase() === "authorization" &&
        (h.host === undefined || h.host === u.host || h.host === u.hostname),
    );
    if ([basic, jwt, header].filter(Boolean).length > 1)
      problems.push(
        `the facilitator at ${redactUrl(u.href)} would get two Authorization headers (${[basic ? "credentials in X402_FACILITATOR_URL" : "", jwt ? "a CDP JWT" : "", header ? "X402_FACILITATOR_HEADERS" : ""].filter(Boolean).join(" and ")}): keep one`,
      );
  }
  if (problems.length > before) return undefined;
  return {
    headers,
    ...(keyId.value !== undefined && keySecret.value !== undefined
      ? { cdp: { keyId: keyId.value, keySecret: keySecret.value, everywhere } }
      : {}),
  };
}

/** REDIS_URL (redis:// or rediss://) and REDIS_KEY_PREFIX. The URL may hold a password: never repeated. */
