/**
 * The one table of a project's optional features (beside versions.ts): each is a folder of the runtime
 * (src/runtime/<folder>/) with its npm dependencies. A project gets the core (everything else in
 * templates/runtime, EVM payments among it) plus the folders of its features; the set is recorded in
 * its package.json as `createAgent.features`. templates/runtime/features.ts is the runtime's side: a
 * line of it ending in `// feature: <name>` is kept only in a project that has <name> (pruneFeatureLines).
 */
import { isObject } from "./json-object.js";
import { suggest } from "./suggest.js";
import { dependencies } from "./versions.js";

export interface Feature {
  /** The name users type (`create-agent add <name>`, `--features <name>,...`). */
  name: string;
  /** Its folder under src/runtime/ (POSIX, no trailing slash). */
  folder: string;
  /** The npm packages it needs, pinned from the version table. */
  dependencies: Record<string, string>;
  /** One line for --help, the README and the prompt. */
  summary: string;
  /** The settings (environment variables) it serves. */
  settings: readonly string[];
  /** Whether `create-agent --yes` (and the prompt's default) starts a project with it. */
  byDefault: boolean;
  /** A feature added after projects recorded their features: a project without the record lacks it. */
  newer?: true;
  /**
   * Core files (project paths) the feature was split out of: a project carrying one has the feature,
   * whatever its record says (it was made before the split, with that code in its core).
   */
  splitFrom?: readonly string[];
  /** Another feature it works best with, and what it does without it (said on add and remove). */
  pairsWith?: { feature: string; without: string };
}

const pick = <K extends keyof typeof dependencies>(...names: K[]): Record<string, string> =>
  Object.fromEntries(names.map((name) => [name, dependencies[name]]));

/**
 * Every optional feature, in the order they are listed everywhere. A new project starts with MCP and the
 * console (what a new user tries first: an assistant calling the tools, a page to try a job); Solana,
 * on-chain checks and direct settlement (`onchain`, whose viem is most of a production install), Redis,
 * metrics and facilitator auth are for when a deployment needs them, one command away. A project made
 * before a feature was split out of the core (`onchain`) and carrying its old files keeps it (upgrade).
 */
export const FEATURES: readonly Feature[] = [
  {
    name: "solana",
    folder: "payments/svm",
    dependencies: pick("@x402/svm", "@solana/kit"),
    summary: "accept USDC on Solana (x402 exact scheme) besides EVM chains",
    settings: ["X402_NETWORKS (solana, solana-devnet)", "PAY_TO_SOLANA", "SOLANA_FEE_PAYER_KEY"],
    byDefault: false,
  },
  {
    name: "onchain",
    folder: "payments/evm/onchain",
    dependencies: pick("viem"),
    summary:
      "EVM payments checked on chain before a job runs (X402_RPC_URL) and settled directly (X402_SETTLER_KEY), with viem",
    settings: ["X402_RPC_URL", "X402_RPC_URL_<NET>", "X402_SETTLER_KEY"],
    byDefault: false,
    splitFrom: ["onchain.ts", "direct-settlement.ts", "viem.ts"].map(
      (file) => `src/runtime/payments/evm/${file}`,
    ),
  },
  {
    name: "mcp",
    folder: "mcp",
    dependencies: pick("@modelcontextprotocol/sdk"),
    summary: "every capability as an MCP tool at POST /mcp",
    settings: ["MCP", "MCP_DEADLINE_SECONDS", "MCP_PROGRESS_SECONDS"],
    byDefault: true,
  },
  {
    name: "a2a",
    folder: "a2a",
    dependencies: pick("@a2a-js/sdk"),
    summary: "A2A 1.0 JSON-RPC at POST /a2a, paid in band with a2a-x402",
    settings: ["A2A", "A2A_DEADLINE_SECONDS"],
    byDefault: true,
    newer: true,
  },
  {
    name: "console",
    folder: "console",
    dependencies: {},
    summary: "a page at GET / to try each capability from a browser",
    settings: ["CONSOLE"],
    byDefault: true,
  },
  {
    name: "redis",
    folder: "ledger/redis",
    dependencies: pick("ioredis"),
    summary: "a payment ledger in Redis, shared by several instances",
    settings: ["REDIS_URL", "REDIS_KEY_PREFIX"],
    byDefault: false,
  },
  {
    name: "queue",
    folder: "queue",
    dependencies: pick("bullmq"),
    summary:
      "async paid jobs (Prefer: respond-async, GET /jobs/<id>; A2A return_immediately) on a queue, BullMQ with REDIS_URL",
    settings: [
      "WORKER",
      "WORKER_CONCURRENCY",
      "JOB_RESULT_TTL_SECONDS",
      "JOB_LOCK_SECONDS",
      "WORKER_HEALTH_PORT",
    ],
    byDefault: false,
    newer: true,
    pairsWith: {
      feature: "redis",
      without:
        "its jobs run in this process only (one instance, lost if it stops: compose.yaml runs one instance and no worker service)",
    },
  },
  {
    name: "metrics",
    folder: "metrics",
    dependencies: pick("prom-client"),
    summary: "Prometheus metrics on their own port",
    settings: ["METRICS_PORT", "METRICS_HOST", "METRICS_TOKEN"],
    byDefault: false,
  },
  {
    name: "facilitator-auth",
    folder: "payments/facilitator-auth",
    dependencies: pick("jose"),
    summary: "signed requests to a facilitator that needs them (Coinbase CDP)",
    settings: ["CDP_API_KEY_ID", "CDP_API_KEY_SECRET", "X402_FACILITATOR_AUTH"],
    byDefault: false,
  },
];

export const FEATURE_NAMES: readonly string[] = FEATURES.map((f) => f.name);
export const DEFAULT_FEATURES: readonly string[] = FEATURES.filter((f) => f.byDefault).map(
  (f) => f.name,
);
/** What a project without a feature record (0.1.0, 0.2.0) has: every feature but those added since. */
export const UNRECORDED_FEATURES: readonly string[] = FEATURES.filter((f) => !f.newer).map(
  (f) => f.name,
);
/** Always in a project, never added or removed. */
export const ALWAYS = "evm";

/** A feature name that is not one (or `evm`, always there): the message names the valid ones. */
export class FeatureNameError extends Error {}

/** The feature called `name`; throws FeatureNameError listing the valid names. */
export function featureNamed(name: string): Feature {
  const found = FEATURES.find((f) => f.name === name.trim().toLowerCase()); // as --features reads them
  if (found) return found;
  if (name === ALWAYS)
    throw new FeatureNameError(
      `${ALWAYS} is always included (EVM payments are part of the core); the optional features are ${FEATURE_NAMES.join(", ")}`,
    );
  const match = suggest(name.trim(), FEATURE_NAMES);
  const hint = match === undefined ? "" : ` (did you mean ${match}?)`;
  throw new FeatureNameError(
    `unknown feature ${JSON.stringify(name)}${hint}: the features are ${FEATURE_NAMES.join(", ")}`,
  );
}

/** Feature names in the table's order, each once. */
export function inTableOrder(names: Iterable<string>): string[] {
  const set = new Set(names);
  return FEATURE_NAMES.filter((name) => set.has(name));
}

/**
 * A `--features` value (or the prompt's answer): names separated by commas (spaces allowed); `all` for
 * every feature, `none` (or an empty list) for the core alone. Throws FeatureNameError on an unknown name.
 */
export function parseFeatureList(text: string): string[] {
  const words = text
    .split(",")
    .map((word) => word.trim().toLowerCase())
    .filter((word) => word !== "");
  if (words.length === 1 && words[0] === "all") return [...FEATURE_NAMES];
  if (words.length === 0 || (words.length === 1 && words[0] === "none")) return [];
  for (const word of words) featureNamed(word);
  return inTableOrder(words);
}

/**
 * The features a project records (package.json's createAgent.features), in table order; a project
 * without the record (made by create-agent 0.2.0 or older) has every feature it could carry then
 * (every folder of its time), and none added since (`queue`): upgrade adds none it did not ask for.
 */
export function recordedFeatures(pkg: unknown): string[] {
  if (!hasFeatureRecord(pkg)) return [...UNRECORDED_FEATURES];
  const record = (pkg as { createAgent: { features: unknown[] } }).createAgent.features;
  // As --features and `add` read names: " Solana" hand-edited into the record is solana.
  return inTableOrder(
    record.flatMap((name) => (typeof name === "string" ? [name.trim().toLowerCase()] : [])),
  );
}

/**
 * The features of the project at `root` (upgrade): its record (recordedFeatures), plus each feature
 * split out of the core since, when the project still carries the core files it came from.
 */
export function projectFeatures(pkg: unknown, carries: (path: string) => boolean): string[] {
  const recorded = recordedFeatures(pkg);
  const split = FEATURES.filter((f) => f.splitFrom?.some(carries)).map((f) => f.name);
  return inTableOrder([...recorded, ...split]);
}

/** Whether package.json records the project's features (create-agent 0.3.0 and later do). */
export function hasFeatureRecord(pkg: unknown): boolean {
  return isObject(pkg) && isObject(pkg.createAgent) && Array.isArray(pkg.createAgent.features);
}

/** The npm dependencies of a project with these features: the core's plus each feature's, sorted. */
export function projectDependencies(features: readonly string[]): Record<string, string> {
  const optional = new Set(FEATURES.flatMap((f) => Object.keys(f.dependencies)));
  const wanted = new Set(
    FEATURES.filter((f) => features.includes(f.name)).flatMap((f) => Object.keys(f.dependencies)),
  );
  return Object.fromEntries(
    Object.entries(dependencies).filter(([name]) => !optional.has(name) || wanted.has(name)),
  );
}

/** The feature a runtime file belongs to (its path under src/runtime/), or undefined for the core. */
export function featureOfRuntimePath(path: string): string | undefined {
  return FEATURES.find((f) => path.startsWith(`${f.folder}/`))?.name;
}

const MARKER = /\/\/ feature: ([A-Za-z0-9_-]+)\s*$/;

/**
 * features.ts for a project with `features`: every line ending in `// feature: <name>` is dropped
 * unless <name> is one of them (`evm` is always kept); every other line is kept as it is. Pruning the
 * template again with another set is how `add` and `remove` rewrite the file.
 */
export function pruneFeatureLines(source: string, features: readonly string[]): string {
  const kept = new Set([ALWAYS, ...features]);
  return source
    .split("\n")
    .filter((line) => {
      const marker = MARKER.exec(line);
      return !marker || kept.has(marker[1]!);
    })
    .join("\n");
}
