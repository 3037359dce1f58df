/**
 * Configuration: options passed to createApp() win over environment variables. Every problem is
 * collected and reported at once, before the server starts, so a misconfigured service never
 * takes (or misses) a payment. Part of your project: edit freely.
 */
import { getAddress, isAddress } from "viem/utils";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "./logger.js";
import { parseNetwork, type ResolvedNetwork } from "../payments/networks.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../payments/verify.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Settler } from "../payments/settlement.js";
import type { Logger } from "../types.js";

export interface PaymentOptions {
  /** Address that receives the USDC. */
  payTo: string;
  /** "base", "base-sepolia" or "eip155:<chainId>". */
  network: string;
  /** Token contract; required for eip155:<chainId> networks we do not know. */
  asset?: string;
  /** EIP-712 domain name of the token. */
  assetName?: string;
  /** EIP-712 domain version of the token. */
  assetVersion?: string;
  /** How long a client's payment authorization should stay valid (default 300). */
  maxTimeoutSeconds?: number;
  /** Settle through this x402 facilitator (X402_FACILITATOR_URL). */
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

export interface AppOptions {
  /** Skip payment verification. Default: SERVICE_DEV_MODE === "true". */
  devMode?: boolean;
  payment?: Partial<PaymentOptions>;
  /** Environment to read; default process.env. */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Largest accepted request body (default MAX_BODY_BYTES or 1 MiB). */
  maxBodyBytes?: number;
  /** Base URL of the service as clients see it, used in 402 responses (default PUBLIC_URL or derived from the request). */
  publicUrl?: string;
  /** Access-Control-Allow-Origin: "*" or one origin (default CORS_ORIGIN or "*"). */
  corsOrigin?: string;
  /**
   * Where reservations, spent authorizations and cached results live. Default: Redis when
   * REDIS_URL is set (shared by every instance), else in memory (this process only).
   */
  ledger?: Ledger;
  /** Largest job result the service delivers, in bytes (default MAX_OUTPUT_BYTES or 4 MiB). */
  maxOutputBytes?: number;
  /** Seconds a graceful shutdown waits for in-flight jobs (default SHUTDOWN_TIMEOUT_SECONDS or 30). */
  shutdownTimeoutSeconds?: number;
}

/** The shared ledger's connection (REDIS_URL); absent: in-memory ledger. */
export interface RedisConfig {
  url: string;
  /** Every key starts with it (REDIS_KEY_PREFIX; default "create-agent:<agent name>:"). */
  keyPrefix?: string;
}

/** Prometheus metrics, opt-in: on their own port, and/or at /metrics behind a bearer token. */
export interface MetricsConfig {
  port?: number;
  /** Address the metrics port listens on (METRICS_HOST, default 127.0.0.1: this machine only). */
  host: string;
  token?: string;
}

/** How payments are charged once a job succeeded. */
export type SettlementRoute =
  | { kind: "facilitator"; url: string }
  | { kind: "direct"; rpcUrl: string; settlerKey: `0x${string}` }
  | { kind: "custom"; settler: Settler };

export interface PaymentConfig {
  payTo: `0x${string}`;
  network: ResolvedNetwork;
  maxTimeoutSeconds: number;
  /** Absent only in dev mode, which never settles. */
  settlement?: SettlementRoute;
  /** When set: payer balance, nonce and contract-wallet signatures are checked on chain. */
  rpcUrl?: string;
  settleTimeoutSeconds: number;
}

/** Production cannot start without a settlement route (fail closed). */
export type ProductionPaymentConfig = PaymentConfig & { settlement: SettlementRoute };

interface CommonConfig {
  port: number;
  maxBodyBytes: number;
  maxOutputBytes: number;
  /** Bytes of results the in-memory ledger keeps for identical retries. */
  resultCacheMaxBytes: number;
  shutdownTimeoutSeconds: number;
  redis?: RedisConfig;
  metrics?: MetricsConfig;
  publicUrl?: string;
  logLevel: LogLevel;
  corsOrigin: string;
}

/** Production always has payment settings; dev mode may have them (validated, unused). */
export type ResolvedConfig =
  | (CommonConfig & { devMode: false; payment: ProductionPaymentConfig })
  | (CommonConfig & { devMode: true; payment?: PaymentConfig });

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const DEFAULT_PORT = 3000;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const DEFAULT_RESULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 30;
const DEFAULT_MAX_TIMEOUT_SECONDS = 300;
const DEFAULT_SETTLE_TIMEOUT_SECONDS = 30;

/** A setting's value and the name to blame in error messages (the option or the env var). */
interface Setting {
  value: string | undefined;
  name: string;
}

/** Reads settings (option first, then env) and collects problems instead of throwing. */
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Record<string, string | undefined>) {}

  /** Empty env values (`PAY_TO=` in a .env file) count as unset. */
  fromEnv(envName: string): Setting {
    const value = this.env[envName];
    return { value: value === "" ? undefined : value, name: envName };
  }

  text(option: string | undefined, optionName: string, envName: string): Setting {
    return option !== undefined
      ? { value: option, name: `option ${optionName}` }
      : this.fromEnv(envName);
  }

  /** A whole number in [min, max]; `fallback` when unset. */
  count(
    option: number | undefined,
    optionName: string,
    envName: string,
    range: { min: number; max?: number; fallback: number; hint: string },
  ): number {
    const s =
      option !== undefined
        ? { value: option, name: `option ${optionName}` }
        : this.fromEnv(envName);
    if (s.value === undefined) return range.fallback;
    const n = typeof s.value === "number" ? s.value : /^\d+$/.test(s.value) ? Number(s.value) : NaN;
    if (Number.isSafeInteger(n) && n >= range.min && n <= (range.max ?? Number.MAX_SAFE_INTEGER))
      return n;
    this.problems.push(`${s.name} is ${JSON.stringify(s.value)}: ${range.hint}`);
    return range.fallback;
  }

  /** A checksummed address, or undefined (with a problem recorded when the value is bad). */
  address(s: Setting, what: string): `0x${string}` | undefined {
    if (s.value === undefined) return undefined;
    if (isAddress(s.value)) return getAddress(s.value);
    this.problems.push(
      `${s.name} is ${JSON.stringify(s.value)}: set it to ${what} (0x and 40 hex digits, checksummed or all lowercase)`,
    );
    return undefined;
  }

  /** An http(s) URL, or undefined. `secret`: do not repeat the value (RPC URLs often embed an API key). */
  url(s: Setting, what: string, secret = false): string | undefined {
    if (s.value === undefined) return undefined;
    if (URL.canParse(s.value) && /^https?:$/.test(new URL(s.value).protocol)) return s.value;
    const shown = secret ? "not an http(s) URL" : `${JSON.stringify(s.value)}`;
    this.problems.push(`${s.name} is ${shown}: set it to ${what}`);
    return undefined;
  }
}

export function resolveConfig(options: AppOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const read = new Reader(env);
  const problems = read.problems;

  // Dev mode: the option wins; otherwise SERVICE_DEV_MODE must be exactly "true" or "false"/unset.
  let devMode = options.devMode ?? false;
  if (options.devMode === undefined) {
    const s = read.fromEnv("SERVICE_DEV_MODE");
    if (s.value === "true") devMode = true;
    else if (s.value !== undefined && s.value !== "false")
      problems.push(
        `SERVICE_DEV_MODE is ${JSON.stringify(s.value)}: set it to "true" (payments bypassed) or "false"/unset (payments required)`,
      );
  }
  if (devMode && env.NODE_ENV === "production")
    problems.push(
      'dev mode is on while NODE_ENV is "production": dev mode lets anyone run jobs for free; unset SERVICE_DEV_MODE (or set it to "false") in production',
    );

  const port = read.count(undefined, "port", "PORT", {
    min: 0,
    max: 65535,
    fallback: DEFAULT_PORT,
    hint: "set PORT to a port number (0-65535)",
  });
  const maxBodyBytes = read.count(options.maxBodyBytes, "maxBodyBytes", "MAX_BODY_BYTES", {
    min: 1,
    fallback: DEFAULT_MAX_BODY_BYTES,
    hint: "set it to a positive whole number of bytes",
  });

  const maxOutputBytes = read.count(options.maxOutputBytes, "maxOutputBytes", "MAX_OUTPUT_BYTES", {
    min: 1024,
    fallback: DEFAULT_MAX_OUTPUT_BYTES,
    hint: "set it to a whole number of bytes, at least 1024",
  });
  const resultCacheMaxBytes = read.count(undefined, "", "RESULT_CACHE_MAX_BYTES", {
    min: 0,
    fallback: DEFAULT_RESULT_CACHE_MAX_BYTES,
    hint: "set it to a whole number of bytes (0 keeps no results for retries)",
  });
  const shutdownTimeoutSeconds = read.count(
    options.shutdownTimeoutSeconds,
    "shutdownTimeoutSeconds",
    "SHUTDOWN_TIMEOUT_SECONDS",
    {
      min: 0,
      max: 3600,
      fallback: DEFAULT_SHUTDOWN_TIMEOUT_SECONDS,
      hint: `set it to a whole number of seconds from 0 to 3600 (default ${DEFAULT_SHUTDOWN_TIMEOUT_SECONDS})`,
    },
  );
  const redis = resolveRedis(read);
  const metrics = resolveMetrics(read);

  const logLevel = read.fromEnv("LOG_LEVEL").value;
  if (logLevel !== undefined && !isLogLevel(logLevel))
    problems.push(
      `LOG_LEVEL is ${JSON.stringify(logLevel)}: set it to one of ${LOG_LEVELS.join(", ")}`,
    );

  const publicUrl = read.text(options.publicUrl, "publicUrl", "PUBLIC_URL");
  if (publicUrl.value !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(publicUrl.value))
    problems.push(
      `${publicUrl.name} is ${JSON.stringify(publicUrl.value)}: set it to the service's base URL, e.g. https://agent.example.com`,
    );

  // Browsers may call the service from any site by default; set one origin to restrict that.
  const corsOrigin = read.text(options.corsOrigin, "corsOrigin", "CORS_ORIGIN");
  if (corsOrigin.value !== undefined && !/^(\*|https?:\/\/[^/?#\s]+)$/.test(corsOrigin.value))
    problems.push(
      `${corsOrigin.name} is ${JSON.stringify(corsOrigin.value)}: set it to "*" (any site) or one origin such as https://app.example.com (no path)`,
    );

  const payment = resolvePayment(options.payment ?? {}, devMode, read);

  if (problems.length > 0) throw new ConfigError(problems);
  const common: CommonConfig = {
    port,
    maxBodyBytes,
    maxOutputBytes,
    resultCacheMaxBytes,
    shutdownTimeoutSeconds,
    logLevel: isLogLevel(logLevel) ? logLevel : "info",
    corsOrigin: corsOrigin.value ?? "*",
  };
  if (redis) common.redis = redis;
  if (metrics) common.metrics = metrics;
  if (publicUrl.value !== undefined) common.publicUrl = publicUrl.value.replace(/\/+$/, "");
  if (devMode) return payment ? { ...common, devMode, payment } : { ...common, devMode };
  if (!payment?.settlement) throw new ConfigError(["payment settings are incomplete"]); // unreachable: problems were recorded
  return { ...common, devMode, payment: { ...payment, settlement: payment.settlement } };
}

function resolvePayment(
  options: Partial<PaymentOptions>,
  devMode: boolean,
  read: Reader,
): PaymentConfig | undefined {
  const problems = read.problems;
  const before = problems.length;
  const payTo = read.text(options.payTo, "payment.payTo", "PAY_TO");
  const network = read.text(options.network, "payment.network", "X402_NETWORK");
  const asset = read.text(options.asset, "payment.asset", "X402_ASSET");
  const assetName = read.text(options.assetName, "payment.assetName", "X402_ASSET_NAME");
  const assetVersion = read.text(
    options.assetVersion,
    "payment.assetVersion",
    "X402_ASSET_VERSION",
  );
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

  // Production refuses to start without knowing where the money goes and on which chain:
  // a default could take testnet "money" for mainnet work or the other way round.
  if (!devMode && payTo.value === undefined)
    problems.push(
      "PAY_TO is not set: set it to the address that should receive payments (or enable dev mode for local testing)",
    );
  if (!devMode && network.value === undefined)
    problems.push(
      'X402_NETWORK is not set: set it to "base" (mainnet), "base-sepolia" (testnet) or "eip155:<chainId>"; there is deliberately no default',
    );

  const payToAddress = read.address(payTo, "the address that should receive payments");
  const assetAddress = read.address(asset, "the token contract address");

  let resolved: ResolvedNetwork | undefined;
  if (network.value !== undefined) {
    const parsed = parseNetwork(network.value);
    if (!parsed) {
      problems.push(
        `${network.name} is ${JSON.stringify(network.value)}: use "base", "base-sepolia" or "eip155:<chainId>"`,
      );
    } else {
      // Known networks default to their USDC; any setting given overrides that default.
      const token = asset.value !== undefined ? assetAddress : parsed.usdc?.asset;
      const name = assetName.value ?? parsed.usdc?.assetName;
      const version = assetVersion.value ?? parsed.usdc?.assetVersion;
      const missing = (s: Setting, what: string): void => {
        problems.push(
          `${s.name} is not set: network ${parsed.caip2} has no built-in USDC, so set ${what}`,
        );
      };
      if (asset.value === undefined && !parsed.usdc) missing(asset, "the token contract address");
      if (name === undefined)
        missing(assetName, 'the token\'s EIP-712 domain name (e.g. "USD Coin")');
      if (version === undefined)
        missing(assetVersion, 'the token\'s EIP-712 domain version (e.g. "2")');
      if (token && name !== undefined && version !== undefined)
        resolved = {
          v1Name: parsed.v1Name,
          caip2: parsed.caip2,
          chainId: parsed.chainId,
          asset: token,
          assetName: name,
          assetVersion: version,
        };
    }
  }

  const settlement = resolveSettlement(options, devMode, read);

  if (problems.length > before || !payToAddress || !resolved) return undefined;
  const config: PaymentConfig = {
    payTo: payToAddress,
    network: resolved,
    maxTimeoutSeconds,
    settleTimeoutSeconds: settlement.timeoutSeconds,
  };
  if (settlement.route) config.settlement = settlement.route;
  if (settlement.rpcUrl) config.rpcUrl = settlement.rpcUrl;
  return config;
}

/**
 * The settlement route: exactly one of a facilitator, direct settlement (RPC + key) or a custom
 * settler. Production refuses to start without one: verifying payments without ever collecting
 * them would run every job for free.
 */
function resolveSettlement(options: Partial<PaymentOptions>, devMode: boolean, read: Reader) {
  const problems = read.problems;
  const facilitator = read.text(
    options.facilitatorUrl,
    "payment.facilitatorUrl",
    "X402_FACILITATOR_URL",
  );
  const rpc = read.text(options.rpcUrl, "payment.rpcUrl", "X402_RPC_URL");
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
  const facilitatorUrl = read.url(
    facilitator,
    "the facilitator's base URL (it serves /verify and /settle), e.g. https://x402.org/facilitator",
  );
  const rpcUrl = read.url(rpc, "the network's JSON-RPC endpoint (http or https)", true);
  // Never repeat the key in a message: error output ends up in logs.
  const settlerKey = key.value;
  if (settlerKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(settlerKey))
    problems.push(`${key.name} is not a private key: set it to 0x and 64 hex digits`);
  if (settlerKey !== undefined && rpc.value === undefined)
    problems.push(
      `${key.name} is set but X402_RPC_URL is not: direct settlement sends its transactions through that JSON-RPC endpoint`,
    );

  const chosen = [
    options.settler !== undefined ? "option payment.settler" : undefined,
    facilitator.value !== undefined ? facilitator.name : undefined,
    settlerKey !== undefined ? key.name : undefined,
  ].filter((name) => name !== undefined);
  if (chosen.length > 1)
    problems.push(
      `${chosen.join(" and ")} are set together: choose one settlement route (a facilitator settles for you; a settler key settles from this server)`,
    );
  if (!devMode && chosen.length === 0)
    problems.push(
      "no settlement route: set X402_FACILITATOR_URL to settle through an x402 facilitator (e.g. https://x402.org/facilitator, testnets only), " +
        "or X402_RPC_URL and X402_SETTLER_KEY to submit the transfers from this server (that account pays the gas); " +
        "without one the server would run paid jobs without ever collecting the payment",
    );

  let route: SettlementRoute | undefined;
  if (options.settler !== undefined) route = { kind: "custom", settler: options.settler };
  else if (facilitatorUrl !== undefined) route = { kind: "facilitator", url: facilitatorUrl };
  else if (settlerKey !== undefined && rpcUrl !== undefined)
    route = { kind: "direct", rpcUrl, settlerKey: settlerKey as `0x${string}` };
  return { route, rpcUrl, timeoutSeconds };
}

/** REDIS_URL (redis:// or rediss://) and REDIS_KEY_PREFIX. The URL may hold a password: never repeated. */
function resolveRedis(read: Reader): RedisConfig | undefined {
  const url = read.fromEnv("REDIS_URL").value;
  const prefix = read.fromEnv("REDIS_KEY_PREFIX").value;
  if (prefix !== undefined && !/^[\x21-\x7e]{1,100}$/.test(prefix))
    read.problems.push(
      `REDIS_KEY_PREFIX is ${JSON.stringify(prefix.slice(0, 100))}: use 1-100 printable characters without spaces, e.g. "my-agent:"`,
    );
  if (url === undefined) {
    if (prefix !== undefined) read.problems.push("REDIS_KEY_PREFIX is set but REDIS_URL is not");
    return undefined;
  }
  if (!URL.canParse(url) || !/^rediss?:$/.test(new URL(url).protocol)) {
    read.problems.push(
      "REDIS_URL is not a redis:// or rediss:// URL: set it to e.g. redis://localhost:6379 (the shared payment ledger)",
    );
    return undefined;
  }
  return prefix === undefined ? { url } : { url, keyPrefix: prefix };
}

/** METRICS_PORT / METRICS_HOST / METRICS_TOKEN: metrics are off unless a port or a token is set. */
function resolveMetrics(read: Reader): MetricsConfig | undefined {
  const portSetting = read.fromEnv("METRICS_PORT");
  const port =
    portSetting.value === undefined
      ? undefined
      : read.count(undefined, "", "METRICS_PORT", {
          min: 0,
          max: 65535,
          fallback: 0,
          hint: "set it to a port number for a separate metrics listener (0-65535)",
        });
  const host = read.fromEnv("METRICS_HOST").value ?? "127.0.0.1";
  const token = read.fromEnv("METRICS_TOKEN").value;
  if (token !== undefined && token.length < 16)
    read.problems.push(
      "METRICS_TOKEN is too short: use at least 16 characters (e.g. openssl rand -hex 32); it guards GET /metrics",
    );
  if (port === undefined && token === undefined) {
    if (read.fromEnv("METRICS_HOST").value !== undefined)
      read.problems.push("METRICS_HOST is set but METRICS_PORT is not");
    return undefined;
  }
  const config: MetricsConfig = { host };
  if (port !== undefined) config.port = port;
  if (token !== undefined) config.token = token;
  return config;
}
