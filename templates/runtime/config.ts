/**
 * Configuration: options passed to createApp() win over environment variables. Every problem is
 * collected and reported at once, before the server starts, so a misconfigured service never
 * takes (or misses) a payment. Payment settings are in payments/config.ts (each network family's in
 * its folder), the optional services' (Redis, metrics) in ops/config-services.ts, the reading
 * mechanics in ops/settings.ts. It sits at the top level because it composes every folder's
 * settings (payments, jobs, ops). Part of your project: edit freely.
 */
import { MAX_DEADLINE_AHEAD_SECONDS } from "./jobs/request.js";
import type { Ledger } from "./ledger/ledger.js";
import type { Logger } from "./types.js";
import {
  type PaymentConfig,
  type PaymentOptions,
  type ProductionPaymentConfig,
  resolvePayment,
  type RoutedNetworkConfig,
} from "./payments/config.js";
import { type HostConfig, resolveHosts } from "./ops/config-hosts.js";
import {
  type MetricsConfig,
  type RedisConfig,
  resolveMetrics,
  refuseAbsentTransports,
  resolveRedis,
} from "./ops/config-services.js";
import { type QueueConfig, resolveQueue } from "./ops/config-queue.js";
import { type A2aConfig, resolveA2a } from "./ops/config-a2a.js";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "./ops/logger.js";
import { ConfigError, Reader } from "./ops/settings.js";

export type { MetricsConfig, RedisConfig } from "./ops/config-services.js";
export type { QueueConfig } from "./ops/config-queue.js";
export { ConfigError } from "./ops/settings.js";

const DEFAULT_PORT = 3000;
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
const DEFAULT_RESULT_CACHE_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 30;
/**
 * Below the official MCP clients' 60 s request timeout, with room for settlement (up to
 * SETTLEMENT_MARGIN_SECONDS, 15 s): a tool call that sends no deadline is answered, settled
 * included, before a default client gives up on it. A caller who gives up is not charged anyway.
 */
export const DEFAULT_MCP_DEADLINE_SECONDS = 45;
/** How often a tool call that sent a progressToken gets notifications/progress while it runs. */
export const DEFAULT_MCP_PROGRESS_SECONDS = 10;
/** MAX_DEADLINE_SECONDS may not exceed this (10 years): deadlines further out mean nothing. */
const MAX_DEADLINE_SECONDS_LIMIT = 10 * 365 * 24 * 3600;

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
  /**
   * How far ahead a job's deadline may be, in seconds (default MAX_DEADLINE_SECONDS or 604800,
   * 7 days); further is refused (400), naming the likely unit mistake (milliseconds).
   */
  maxDeadlineSeconds?: number;
}

/** How payments are charged once a job succeeded. HOST and ALLOWED_HOSTS: config-hosts.ts. */
interface CommonConfig extends HostConfig {
  port: number;
  maxBodyBytes: number;
  maxOutputBytes: number;
  /** Bytes of results the in-memory ledger keeps for identical retries. */
  resultCacheMaxBytes: number;
  /** SETTLEMENT_RECONCILE_SECONDS: how often unconfirmed settlements are checked (jobs/reconcile.ts). */
  reconcileSeconds: number;
  shutdownTimeoutSeconds: number;
  /** Largest accepted deadline, in seconds from now. */
  maxDeadlineSeconds: number;
  redis?: RedisConfig;
  metrics?: MetricsConfig;
  /** Async jobs (the `queue` feature): its worker and results; absent without the feature. */
  queue?: QueueConfig;
  publicUrl?: string;
  logLevel: LogLevel;
  corsOrigin: string;
  /** POST /mcp (MCP=off disables it), and the deadline of a tool call that sends none. */
  mcp: McpConfig;
  /** POST /a2a (A2A=off disables it), and the deadline of a task that sends none. */
  a2a: A2aConfig;
}

export interface McpConfig {
  enabled: boolean;
  /** MCP_DEADLINE_SECONDS: a tool call's deadline is now + this, unless its _meta sends one. */
  deadlineSeconds: number;
  /** MCP_PROGRESS_SECONDS: progress notifications' period, for calls that send a progressToken. */
  progressSeconds: number;
}

/** Production always has payment settings; dev mode may have them (validated, unused). */
export type ResolvedConfig =
  | (CommonConfig & { devMode: false; payment: ProductionPaymentConfig })
  | (CommonConfig & { devMode: true; payment?: PaymentConfig });

export function resolveConfig(options: AppOptions = {}): ResolvedConfig {
  const env = options.env ?? process.env;
  const read = new Reader(env);
  const problems = read.problems;
  // Problems are collected in this order: dev mode, limits, MCP, hosts, services, web settings, payment.
  const devMode = resolveDevMode(options, env, read);
  const limits = resolveLimits(options, read);
  refuseAbsentTransports(read);
  const mcp = resolveMcp(read, limits.maxDeadlineSeconds);
  const a2a = resolveA2a(read, limits.maxDeadlineSeconds);
  const hosts = resolveHosts(read);
  const redis = resolveRedis(read);
  const metrics = resolveMetrics(read);
  const queue = resolveQueue(read, redis?.url);
  const web = resolveWeb(options, read);
  const payment = resolvePayment(options.payment ?? {}, devMode, read);

  if (problems.length > 0) throw new ConfigError(problems);
  const common: CommonConfig = {
    ...hosts,
    ...limits,
    logLevel: web.logLevel,
    corsOrigin: web.corsOrigin,
    mcp,
    a2a,
  };
  if (redis) common.redis = redis;
  if (metrics) common.metrics = metrics;
  if (queue) common.queue = queue;
  if (web.publicUrl !== undefined) common.publicUrl = web.publicUrl;
  if (devMode) return payment ? { ...common, devMode, payment } : { ...common, devMode };
  // Unreachable: every network without a route recorded a problem.
  const routed = payment?.networks.flatMap((n) => (n.settlement ? [n as RoutedNetworkConfig] : []));
  if (!payment || !routed || routed.length !== payment.networks.length)
    throw new ConfigError(["payment settings are incomplete"]);
  return { ...common, devMode, payment: { ...payment, networks: routed } };
}

/** Dev mode: the option wins; otherwise SERVICE_DEV_MODE must be exactly "true" or "false"/unset. */
function resolveDevMode(
  options: AppOptions,
  env: Record<string, string | undefined>,
  read: Reader,
): boolean {
  const problems = read.problems;
  let devMode = options.devMode ?? false;
  if (options.devMode === undefined) {
    const s = read.fromEnv("SERVICE_DEV_MODE");
    if (s.value === "true") devMode = true;
    else if (s.value !== undefined && s.value !== "false")
      problems.push(
        `SERVICE_DEV_MODE is ${JSON.stringify(s.value)}: set it to "true" (payments bypassed) or "false"/unset (payments required)`,
      );
  }
  // "Production" or " production " are production too: dev mode is never on by a spelling.
  if (devMode && env.NODE_ENV?.trim().toLowerCase() === "production")
    problems.push(
      `dev mode is on while NODE_ENV is ${JSON.stringify(env.NODE_ENV)}: dev mode lets anyone run jobs for free; unset SERVICE_DEV_MODE (or set it to "false") in production`,
    );
  return devMode;
}

type Limits = Pick<
  CommonConfig,
  | "port"
  | "maxBodyBytes"
  | "maxOutputBytes"
  | "resultCacheMaxBytes"
  | "reconcileSeconds"
  | "shutdownTimeoutSeconds"
  | "maxDeadlineSeconds"
>;

/** PORT and the numeric limits (body, output, result cache, reconcile period, shutdown, deadline). */
function resolveLimits(options: AppOptions, read: Reader): Limits {
  // Read in this order, so their problems are reported in this order.
  return {
    port: read.count(undefined, "port", "PORT", {
      min: 0,
      max: 65535,
      fallback: DEFAULT_PORT,
      hint: "set PORT to a port number (0-65535)",
    }),
    maxBodyBytes: read.count(options.maxBodyBytes, "maxBodyBytes", "MAX_BODY_BYTES", {
      min: 1,
      fallback: DEFAULT_MAX_BODY_BYTES,
      hint: "set it to a positive whole number of bytes",
    }),
    maxOutputBytes: read.count(options.maxOutputBytes, "maxOutputBytes", "MAX_OUTPUT_BYTES", {
      min: 1024,
      fallback: DEFAULT_MAX_OUTPUT_BYTES,
      hint: "set it to a whole number of bytes, at least 1024",
    }),
    resultCacheMaxBytes: read.count(undefined, "", "RESULT_CACHE_MAX_BYTES", {
      min: 0,
      fallback: DEFAULT_RESULT_CACHE_MAX_BYTES,
      hint: "set it to a whole number of bytes (0 keeps no results for retries)",
    }),
    reconcileSeconds: read.count(undefined, "", "SETTLEMENT_RECONCILE_SECONDS", {
      min: 1,
      max: 3600,
      fallback: 15,
      hint: "set it to a whole number of seconds from 1 to 3600 (default 15)",
    }),
    shutdownTimeoutSeconds: read.count(
      options.shutdownTimeoutSeconds,
      "shutdownTimeoutSeconds",
      "SHUTDOWN_TIMEOUT_SECONDS",
      {
        min: 0,
        max: 3600,
        fallback: DEFAULT_SHUTDOWN_TIMEOUT_SECONDS,
        hint: `set it to a whole number of seconds from 0 to 3600 (default ${DEFAULT_SHUTDOWN_TIMEOUT_SECONDS})`,
      },
    ),
    maxDeadlineSeconds: read.count(
      options.maxDeadlineSeconds,
      "maxDeadlineSeconds",
      "MAX_DEADLINE_SECONDS",
      {
        min: 60,
        max: MAX_DEADLINE_SECONDS_LIMIT,
        fallback: MAX_DEADLINE_AHEAD_SECONDS,
        hint: `set it to a whole number of seconds from 60 to ${MAX_DEADLINE_SECONDS_LIMIT} (default ${MAX_DEADLINE_AHEAD_SECONDS}, 7 days)`,
      },
    ),
  };
}

/** LOG_LEVEL, PUBLIC_URL and CORS_ORIGIN: their problems recorded, their values with defaults. */
function resolveWeb(
  options: AppOptions,
  read: Reader,
): { logLevel: LogLevel; publicUrl?: string; corsOrigin: string } {
  const problems = read.problems;
  const logLevel = read.fromEnv("LOG_LEVEL").value;
  if (logLevel !== undefined && !isLogLevel(logLevel))
    problems.push(
      `LOG_LEVEL is ${JSON.stringify(logLevel)}: set it to one of ${LOG_LEVELS.join(", ")}`,
    );

  const publicUrl = read.text(options.publicUrl, "publicUrl", "PUBLIC_URL");
  const url = publicUrl.value;
  // The shape, and a URL Node can parse (a port over 65535, a bad IPv6 literal, an empty host pass the shape).
  if (url !== undefined && (!/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(url) || !URL.canParse(url)))
    problems.push(
      `${publicUrl.name} is ${JSON.stringify(publicUrl.value)}: set it to the service's base URL, e.g. https://agent.example.com`,
    );

  // Browsers may call the service from any site by default; set one origin to restrict that.
  const corsOrigin = read.text(options.corsOrigin, "corsOrigin", "CORS_ORIGIN");
  const origin = corsOrigin.value;
  if (
    origin !== undefined &&
    !(origin === "*" || (/^https?:\/\/[^/?#\s]+$/.test(origin) && URL.canParse(origin)))
  )
    problems.push(
      `${corsOrigin.name} is ${JSON.stringify(corsOrigin.value)}: set it to "*" (any site) or one origin such as https://app.example.com (no path)`,
    );
  return {
    logLevel: isLogLevel(logLevel) ? logLevel : "info",
    corsOrigin: corsOrigin.value ?? "*",
    ...(publicUrl.value !== undefined && { publicUrl: publicUrl.value.replace(/\/+$/, "") }),
  };
}

/** MCP ("on", the default, or "off"), MCP_DEADLINE_SECONDS (default 45) and MCP_PROGRESS_SECONDS (10). */
function resolveMcp(read: Reader, maxDeadlineSeconds: number): McpConfig {
  const enabled = read.onOff("MCP", "no POST /mcp");
  const deadlineSeconds = read.deadline(
    "MCP_DEADLINE_SECONDS",
    DEFAULT_MCP_DEADLINE_SECONDS,
    maxDeadlineSeconds,
  );
  const progressSeconds = read.count(undefined, "", "MCP_PROGRESS_SECONDS", {
    min: 1,
    max: 3600,
    fallback: DEFAULT_MCP_PROGRESS_SECONDS,
    hint: `set it to a whole number of seconds from 1 to 3600; default ${DEFAULT_MCP_PROGRESS_SECONDS}, well under the MCP clients' 60 s request timeout`,
  });
  return { enabled, deadlineSeconds, progressSeconds };
}
