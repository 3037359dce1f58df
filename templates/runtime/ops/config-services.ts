/**
 * The optional services' settings: the shared ledger (REDIS_URL, REDIS_KEY_PREFIX; the `redis`
 * feature) and Prometheus metrics (METRICS_PORT, METRICS_HOST, METRICS_TOKEN; the `metrics`
 * feature). In a project without the feature, setting one of them refuses the start, with the fix;
 * so does a setting of an optional transport the project lacks (MCP, A2A, the console).
 * Part of your project: edit freely.
 */
import { hasFeature, missingFeature } from "../features.js";
import type { Reader } from "./settings.js";

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

/**
 * Each optional service's or transport's feature checked here: the settings that ask for it, and what
 * it is; a transport's on/off switch (`off`) set to "off" asks for nothing (what a project without it
 * is anyway). The one source of the refusal when a project lacks it (here at start-up;
 * ledger/select.ts and ops/metrics-loader.ts for configurations made by hand).
 */
export const SERVICE_FEATURES = {
  redis: { settings: ["REDIS_URL", "REDIS_KEY_PREFIX"], what: "the shared payment ledger" },
  metrics: {
    settings: ["METRICS_PORT", "METRICS_TOKEN", "METRICS_HOST"],
    what: "Prometheus metrics",
  },
  mcp: {
    settings: ["MCP", "MCP_DEADLINE_SECONDS", "MCP_PROGRESS_SECONDS"],
    what: "MCP tools at POST /mcp",
    off: "MCP",
  },
  a2a: {
    settings: ["A2A", "A2A_DEADLINE_SECONDS", "A2A_TASK_MEMORY_BYTES"],
    what: "A2A at POST /a2a",
    off: "A2A",
  },
  console: { settings: ["CONSOLE"], what: "the console page at GET /", off: "CONSOLE" },
} as const;

type CheckedFeature = keyof typeof SERVICE_FEATURES;

/** What setting `asked` is told in a project without the service's `feature`: refused, with the fix. */
export function serviceAbsent(feature: CheckedFeature, asked: string): string {
  return missingFeature(feature, `${asked} is set (${SERVICE_FEATURES[feature].what})`);
}

/** Settings of optional transports this project lacks (MCP=on without mcp/...): refused, with the fix. */
export function refuseAbsentTransports(read: Reader): void {
  for (const feature of ["mcp", "a2a", "console"] as const)
    if (!hasFeature(feature)) absent(read, feature);
}

/** REDIS_URL (redis:// or rediss://) and REDIS_KEY_PREFIX. */
export function resolveRedis(read: Reader): RedisConfig | undefined {
  if (!hasFeature("redis")) return absent(read, "redis");
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

/** A feature the project lacks: the first of its settings that is set is refused, with the fix. */
function absent(read: Reader, feature: CheckedFeature): undefined {
  const entry: { settings: readonly string[]; off?: string } = SERVICE_FEATURES[feature];
  const asks = (name: string, value = read.fromEnv(name).value) =>
    // "OFF" asks for nothing either: the switch's own check (config.ts) says to write "off".
    value !== undefined && !(name === entry.off && value.toLowerCase() === "off");
  const asked = entry.settings.find((name) => asks(name));
  if (asked) read.problems.push(serviceAbsent(feature, asked));
  return undefined;
}

/** METRICS_PORT / METRICS_HOST / METRICS_TOKEN: metrics are off unless a port or a token is set. */
export function resolveMetrics(read: Reader): MetricsConfig | undefined {
  if (!hasFeature("metrics")) return absent(read, "metrics");
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
