/**
 * A network family (EVM, Solana, ...): everything the core asks of one, so the core never names one.
 * Each family is a folder (payments/evm/, payments/svm/) whose family.ts exports one NetworkFamily;
 * features.ts lists them in FAMILIES, the only file naming them. A family recognises its network
 * ids, reads its settings, creates the NetworkScheme (scheme.ts) of each of its offered networks,
 * checks their settlement routes at start-up, probes them for GET /health and metrics, and says
 * what discovery documents state about them. Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import type { Metrics } from "../ops/metrics.js";
import type { Reader, Setting } from "../ops/settings.js";
import type { Logger } from "../types.js";
import type {
  FacilitatorRoute,
  NetworkPaymentConfig,
  PaymentConfig,
  PaymentOptions,
  ProductionPaymentConfig,
  RoutedNetworkConfig,
} from "./config.js";
import type { PaymentGateDeps } from "./gate.js";
import type { ParsedNetwork } from "./networks.js";
import type { NetworkScheme } from "./scheme.js";

/** What a family's configuration reader is given: the settings and what the shared part read. */
export interface FamilyConfigInput {
  options: Partial<PaymentOptions>;
  devMode: boolean;
  read: Reader;
  /** Whether a listed network is of this family (else only its settings that are set are checked). */
  used: boolean;
  /** How many networks are listed (X402_NETWORK: one). */
  listed: number;
  /** Where the problems of this payment configuration start (the first problem goes there). */
  before: number;
  /** X402_FACILITATOR_URL as set, and the route through those facilitators (absent when unset or wrong). */
  facilitator: { setting: Setting; route?: FacilitatorRoute };
}

/** One listed network as its family resolved it: its ids and token, and its RPC endpoint. */
export interface ResolvedListing {
  network: { caip2: string; v1Name: string; asset: string };
  rpcUrl?: string;
}

/** A family's reading of one configuration (problems go to `read.problems`). */
export interface FamilyConfigReader {
  /** One listed network's token and RPC; undefined (problem said) when wrong. */
  network(written: string, setting: Setting): ResolvedListing | undefined;
  /** The network's entry with its payee and route; undefined when its payee is missing (said, or dev mode). */
  entry(written: string, listing: ResolvedListing): NetworkPaymentConfig | undefined;
  /** What PaymentConfig says besides `networks`, from this family's entries (the EVM summary). */
  summary?(own: NetworkPaymentConfig[]): Partial<PaymentConfig>;
}

/**
 * A network's entry as each family's `entry` makes it: what the family fills in (`own`), then the
 * network's RPC when one is set and its settlement route when it has one (dev mode may have none).
 */
export function networkEntry<E extends NetworkPaymentConfig>(
  own: Omit<E, "rpcUrl" | "settlement">,
  rpcUrl: string | undefined,
  settlement: E["settlement"] | undefined,
): E {
  const entry = { ...own } as E;
  if (rpcUrl) entry.rpcUrl = rpcUrl;
  if (settlement) entry.settlement = settlement;
  return entry;
}

/** What the scheme of a network shares with every other: the offered window and the settle timeout. */
export interface SchemeSettings {
  maxTimeoutSeconds: number;
  settleTimeoutSeconds: number;
}

/** Why the server must not start; `transient`: a node that did not answer (it may, later: exit 75). */
export interface StartRefusal {
  text: string;
  transient?: boolean;
}

/** A family's watch over its networks' routes, for start-up, GET /health and metrics scrapes. */
export interface FamilyWatch {
  /** Before listening: why the server must not start, one per refused network; warns when low. */
  refusals?(timeoutMs: number): Promise<StartRefusal[]>;
  /** The probe of one of its networks (problem kinds, never throws), or undefined when not watched. */
  probe(net: RoutedNetworkConfig, timeoutMs: number): (() => Promise<string[]>) | undefined;
  /** The text of its own problem kinds (besides "unreachable" and "wrong_chain"), of `where` when given. */
  texts?: Record<string, (where?: string) => string>;
}

/** What discovery documents state about one offered network. */
export interface NetworkFacts {
  /** EVM: the chain id. */
  chainId?: number;
  /** The token: its address (a Solana mint), and its EIP-712 domain (EVM). */
  asset: { address: string; name?: string; version?: string };
}

export interface NetworkFamily {
  /** The id payments and schemes carry ("evm", "svm"). */
  readonly id: string;
  /** The network names it knows and the id shapes it parses, for messages ('"base"', '"eip155:<chainId>"'). */
  readonly names: { known: readonly string[]; shapes: readonly string[] };
  /**
   * Jobs due within at most this many seconds can be paid on its networks (Solana: a payment lives only
   * so long); absent: any deadline. The 402s, MCP errors, the console and the start-up warnings read it.
   */
  readonly payableWithinSeconds?: number;
  /**
   * The settings it reads for one network as `<setting>_<NET>` (X402_RPC_URL_BASE): one of them naming
   * no listed network is refused at start (config-list.ts), so a family adding one lists it here.
   */
  readonly perNetworkSettings: readonly string[];
  /** A network id of this family parsed (known name or CAIP-2 id); undefined when not one of its. */
  parse(name: string): ParsedNetwork | undefined;
  /** Reads its settings for one configuration. */
  readConfig(input: FamilyConfigInput): FamilyConfigReader;
  /** The scheme that takes payments on one of its offered networks. */
  createScheme(
    net: RoutedNetworkConfig,
    settings: SchemeSettings,
    deps: PaymentGateDeps,
  ): NetworkScheme;
  /** One line for the startup log: how payments on that network are checked and settled (no secrets). */
  describeRoute(net: RoutedNetworkConfig): string;
  /** Start-up check of one network's route beyond its RPC (facilitators listing it); throws ConfigError. */
  checkRoute?(net: RoutedNetworkConfig, config: ResolvedConfig, logger: Logger): Promise<void>;
  /** The watch over its networks (undefined when it watches none). */
  watch?(
    nets: RoutedNetworkConfig[],
    config: ProductionPaymentConfig,
    deps: { logger: Logger; metrics: Metrics },
  ): FamilyWatch | undefined;
  /** What discovery documents state about one of its networks. */
  facts(net: NetworkPaymentConfig): NetworkFacts;
  /** Said once when the gate is made, when one of its networks is offered (EVM: how signatures are checked). */
  announce?(logger: Logger | undefined): void;
  /** What /llms.txt adds to "Pay" when one of its networks is offered. */
  llmsNote?(): string;
  /**
   * Why its payments cannot wait for a queued job (Prefer: respond-async) to be settled when the job
   * completes, said to the caller; undefined when they can. Every family says which.
   */
  readonly cannotWait: string | undefined;
}
