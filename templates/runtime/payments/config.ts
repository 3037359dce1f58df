/**
 * Payment configuration: who is paid, on which networks and tokens, and how payments are settled.
 * The shared part is here (the list of networks and their order, the facilitators, the timeouts);
 * each network family reads its own settings, keys and route (evm/config.ts, svm/config.ts), found
 * through features.ts. Production refuses to start without a settlement route. Part of your
 * project: edit freely.
 */
import type { Reader } from "../ops/settings.js";
import {
  absentFamilyOf,
  absentFamilyProblems,
  familyOf,
  payableWithin,
  usedFamilies,
} from "./families.js";
import type { FamilyConfigReader } from "./family.js";
import type { FacilitatorAuth } from "./facilitator-credentials.js";
import { readNetworkList, strayNetworkSettings, unknownNetwork } from "./config-list.js";
import { readFacilitators } from "./config-facilitators.js";
import type { ResolvedNetwork } from "./networks.js";
import { SETTLEMENT_MARGIN_SECONDS, type Settler } from "./settlement.js";

const DEFAULT_MAX_TIMEOUT_SECONDS = 300;
/** A buyer fanning out jobs rarely needs more at once; each past its balance would run unpaid. */
const DEFAULT_MAX_JOBS_PER_PAYER = 8;

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
  /** Paid jobs one payer may run at once (MAX_JOBS_PER_PAYER, default 8; 0: no cap). */
  maxJobsPerPayer?: number;
  /** Your own settlement route instead of the built-in ones (see settlement.ts). */
  settler?: Settler;
}

/** Settlement through the x402 facilitators of X402_FACILITATOR_URL (every family may use it). */
export interface FacilitatorRoute {
  kind: "facilitator";
  /** The first facilitator. */
  url: string;
  /** Every facilitator, in order (X402_FACILITATOR_URL). */
  urls: string[];
  /** Credentials sent to them (CDP_API_KEY_*, X402_FACILITATOR_AUTH, X402_FACILITATOR_HEADERS). */
  auth: FacilitatorAuth;
}

/** How an EVM network's payments settle (the route of PaymentConfig's first EVM network). */
export type SettlementRoute =
  | FacilitatorRoute
  | { kind: "direct"; rpcUrl: string; settlerKey: `0x${string}` }
  | { kind: "custom"; settler: Settler };

/** One offered network, as its family configured it (each family adds its own fields). */
export interface NetworkPaymentConfig {
  /** The family's id (features.ts's FAMILIES). */
  family: string;
  /** The network as the seller wrote it (X402_NETWORKS entry): names its own settings. */
  written: string;
  network: { caip2: string; v1Name: string; asset: string };
  /** Who is paid there. */
  payTo: string;
  /** The network's JSON-RPC endpoint, when set. */
  rpcUrl?: string;
  /** Absent only in dev mode, which never settles. */
  settlement?: { kind: string };
}

/** An offered network with its settlement route (production). */
export type RoutedNetworkConfig = NetworkPaymentConfig & { settlement: { kind: string } };

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
  /** Paid jobs one payer may run at once, across instances sharing the ledger; 0: no cap (jobs/payer-slots.ts). */
  maxJobsPerPayer: number;
  /**
   * When every offered network pays only for jobs due soon (a family's payableWithinSeconds: Solana),
   * the latest deadline one of them still takes, in seconds from now; absent when any takes any deadline.
   */
  payableWithinSeconds?: number;
}

/** Production cannot start without a settlement route on every network (fail closed). */
export type ProductionPaymentConfig = Omit<PaymentConfig, "networks"> & {
  networks: RoutedNetworkConfig[];
};

export function resolvePayment(
  options: Partial<PaymentOptions>,
  devMode: boolean,
  read: Reader,
): PaymentConfig | undefined {
  const problems = read.problems;
  const before = problems.length;
  const listed = readNetworkList(options, devMode, read);
  problems.push(...absentFamilyProblems(listed, options, read));
  strayNetworkSettings(listed, read);
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
  const maxJobsPerPayer = read.count(
    options.maxJobsPerPayer,
    "payment.maxJobsPerPayer",
    "MAX_JOBS_PER_PAYER",
    {
      min: 0,
      fallback: DEFAULT_MAX_JOBS_PER_PAYER,
      hint: `set it to a whole number of jobs (default ${DEFAULT_MAX_JOBS_PER_PAYER}; 0: no cap)`,
    },
  );
  const shared = readFacilitators(options, read);
  const used = usedFamilies(listed.map((l) => l.written));
  const readers = new Map<string, FamilyConfigReader>();
  for (const { family, used: isUsed } of used) {
    const input = { options, devMode, read, used: isUsed, listed: listed.length, before };
    readers.set(family.id, family.readConfig({ ...input, facilitator: shared.facilitator }));
  }
  const networks = readNetworks(listed, readers, read);
  if (problems.length > before || networks.length !== listed.length || networks.length === 0)
    return undefined;
  const config: PaymentConfig = {
    networks,
    maxTimeoutSeconds,
    settleTimeoutSeconds: shared.timeoutSeconds,
    maxJobsPerPayer,
  };
  const payableWithinSeconds = payableWithin(networks);
  if (payableWithinSeconds !== undefined) config.payableWithinSeconds = payableWithinSeconds;
  for (const [id, reader] of readers) {
    const own = networks.filter((n) => n.family === id);
    if (own.length > 0) Object.assign(config, reader.summary?.(own));
  }
  return config;
}

/** Each listed network through its family, in the seller's order; each network listed once. */
function readNetworks(
  listed: ReturnType<typeof readNetworkList>,
  readers: Map<string, FamilyConfigReader>,
  read: Reader,
): NetworkPaymentConfig[] {
  const networks: NetworkPaymentConfig[] = [];
  const seen = new Map<string, string>();
  for (const { written, setting } of listed) {
    const family = familyOf(written);
    const reader = family && readers.get(family.id);
    if (!reader) {
      // A network of a family this project lacks was told already (absentFamilyProblems).
      if (!absentFamilyOf(written)) unknownNetwork(written, setting, listed.length > 1, read);
      continue;
    }
    const listing = reader.network(written, setting);
    if (!listing) continue;
    const earlier = seen.get(listing.network.caip2);
    if (earlier !== undefined) {
      read.problems.push(
        `${setting.name} lists ${listing.network.caip2} twice (${JSON.stringify(earlier)} and ${JSON.stringify(written)}): list each network once`,
      );
      continue;
    }
    seen.set(listing.network.caip2, written);
    const entry = reader.entry(written, listing);
    if (entry) networks.push(entry);
  }
  return networks;
}
