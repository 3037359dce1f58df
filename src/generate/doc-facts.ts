/**
 * The numbers the generated project's documents (README.md, .env.example) state about its runtime, in
 * one place: the project templates render them from here (`{{facts.<name>}}`), and
 * test/generate/doc-facts.test.ts holds each to the runtime behaviour it describes (templates/runtime,
 * src/caller) and the tool's README to the same numbers. Change a default there, change it here.
 */

/** Digits grouped by commas, as the README's prose writes large numbers (40000 -> "40,000"). */
const grouped = (n: number): string => n.toLocaleString("en-US");

const SOLANA_PAYMENT_LIFE_SECONDS = 45;
const SETTLEMENT_MARGIN_SECONDS = 15;
const MAX_DEADLINE_SECONDS = 7 * 24 * 3600;
const SOLANA_MAX_COMPUTE_UNITS = 40_000;
const SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS = 10_000;
const SHUTDOWN_TIMEOUT_SECONDS = 30;

export const DOC_FACTS = {
  /** Seconds a Solana payment is counted to live (its blockhash): payments/svm/life.ts. */
  solanaPaymentLifeSeconds: SOLANA_PAYMENT_LIFE_SECONDS,
  /** Seconds kept after a job's deadline to settle its payment: payments/settlement.ts. */
  settlementMarginSeconds: SETTLEMENT_MARGIN_SECONDS,
  /** Solana pays only for jobs due within this many seconds (the life less the margin). */
  solanaDueWithinSeconds: SOLANA_PAYMENT_LIFE_SECONDS - SETTLEMENT_MARGIN_SECONDS,
  /** MCP_DEADLINE_SECONDS' default: an MCP call's deadline when it sends none. */
  mcpDeadlineSeconds: 45,
  /** MCP_PROGRESS_SECONDS' default: the period of progress notifications. */
  mcpProgressSeconds: 10,
  /** MAX_DEADLINE_SECONDS' default, in seconds and in days. */
  maxDeadlineSeconds: MAX_DEADLINE_SECONDS,
  maxDeadlineDays: MAX_DEADLINE_SECONDS / 86_400,
  /** SOLANA_MAX_COMPUTE_UNITS' and SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS' defaults, plain and grouped. */
  solanaMaxComputeUnits: SOLANA_MAX_COMPUTE_UNITS,
  solanaMaxComputeUnitsText: grouped(SOLANA_MAX_COMPUTE_UNITS),
  solanaMaxPriorityFee: SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS,
  solanaMaxPriorityFeeText: grouped(SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS),
  /** PORT's default: the port the server listens on (the Dockerfile's EXPOSE, fly.toml's internal_port). */
  port: 3000,
  /** The path of the health check every deployment points at (app.ts). */
  healthPath: "/health",
  /** SHUTDOWN_TIMEOUT_SECONDS' default: how long SIGTERM's drain waits for jobs in flight. */
  shutdownTimeoutSeconds: SHUTDOWN_TIMEOUT_SECONDS,
  /** How long a process manager waits after SIGTERM before killing (systemd's TimeoutStopSec, compose's
   *  stop_grace_period, Fly's kill_timeout): the drain plus room to settle and answer. */
  stopTimeoutSeconds: SHUTDOWN_TIMEOUT_SECONDS + 15,
  /** A refused start's exit codes: a wrong configuration (do not restart), and a transient failure
   *  (ops/settings.ts TRANSIENT_EXIT_CODE: a facilitator did not answer; restart after a delay). */
  configErrorExitCode: 1,
  transientExitCode: 75,
} as const;
