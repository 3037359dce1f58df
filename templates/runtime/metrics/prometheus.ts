/**
 * Metrics in Prometheus' text format, with prom-client (the `metrics` feature). Each call makes its
 * own registry (never prom-client's global one), so two apps in one process, or tests, do not clash.
 * Only imported when metrics are enabled. Part of your project: edit freely.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { JobOutcome, Metrics, SettlementOutcome } from "../ops/metrics.js";
import { asyncJobMetrics } from "./async-jobs.js";

export interface PrometheusOptions {
  /** Prepended to every metric name, default processes' ones included (e.g. "myagent_"). Default "". */
  prefix?: string;
  /** Include Node's process metrics (CPU, memory, event loop lag, GC...). Default true. */
  defaultMetrics?: boolean;
}

export interface PrometheusMetrics {
  /** What the runtime calls. */
  metrics: Metrics;
  /** Content-Type of render()'s text: "text/plain; version=0.0.4; charset=utf-8". */
  contentType: string;
  /** Everything in the registry, in Prometheus' text exposition format. */
  render(): Promise<string>;
}

/** Handler run time: from 10 ms to 5 minutes. */
const HANDLER_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Settlement time (facilitator or on-chain): from 50 ms to a minute. */
const SETTLEMENT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60];

/** Label for a job with no capability, or one that is not declared. */
const UNKNOWN = "(unknown)";
/** Label values beyond this many distinct ones per label are counted as "(other)": a bug cannot blow up the series count. */
const MAX_LABEL_VALUES = 200;
const MAX_LABEL_LENGTH = 100;

/** Keeps a label's values to a bounded set, whatever callers pass. */
function labelGuard(empty: string): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    const label = value === "" ? empty : String(value).slice(0, MAX_LABEL_LENGTH);
    if (seen.has(label)) return label;
    if (seen.size >= MAX_LABEL_VALUES) return "(other)";
    seen.add(label);
    return label;
  };
}

/** Seconds as a histogram accepts them: finite and not negative. */
function duration(seconds: number): number | undefined {
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(0, seconds);
}

/** Calls `end` once, however many times the returned function is called. */
function once(end: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    end();
  };
}

/** The counter, gauge and histogram makers of a registry, their names after `name`'s prefix. */
function makers(registry: Registry, name: (n: string) => string) {
  const registers = [registry];
  // One metric a line: name (after the prefix), help, labels; histograms also their buckets.
  const counter = <L extends string>(n: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name: name(n), help, labelNames, registers });
  const gauge = <L extends string>(n: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name: name(n), help, labelNames, registers });
  const histogram = <L extends string>(
    n: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => new Histogram<L>({ name: name(n), help, labelNames, buckets, registers });
  return { counter, gauge, histogram };
}

type Makers = ReturnType<typeof makers>;

/** The series of jobs, payments, handlers and the ledger. */
function jobSeries({ counter, gauge, histogram }: Makers) {
  return {
    jobs: counter(
      "agent_jobs_total",
      'Jobs answered, by capability ("(unknown)" when the request named none or an undeclared one) and outcome: completed, or the error type the client got (validation, capability, payment_required = no payment sent, payment = payment refused, deadline, internal, unavailable).',
      ["capability", "outcome"],
    ),
    paymentRefusals: counter(
      "agent_payment_refusals_total",
      "Payments refused before the job ran, by reason (e.g. bad signature, expired, wrong amount, replayed).",
      ["reason"],
    ),
    settlements: counter(
      "agent_settlements_total",
      "Settlement attempts of verified payments, by capability, result (settled, failed: no money moved, uncertain: outcome unknown, check the chain) and network (CAIP-2 id).",
      ["capability", "result", "network"],
    ),
    settlementSeconds: histogram(
      "agent_settlement_duration_seconds",
      "Time taken to settle a payment (facilitator or on-chain), in seconds, by capability.",
      ["capability"],
      SETTLEMENT_BUCKETS,
    ),
    earned: counter(
      "agent_usdc_earned_total",
      "USDC received from settled payments, in whole USDC (not atomic units), by capability and network (CAIP-2 id).",
      ["capability", "network"],
    ),
    inFlight: gauge("agent_handlers_in_flight", "Capability handlers running right now."),
    handlerSeconds: histogram(
      "agent_handler_duration_seconds",
      "Time capability handlers ran, in seconds, by capability (until they returned or threw, even after a deadline).",
      ["capability"],
      HANDLER_BUCKETS,
    ),
    abandoned: gauge(
      "agent_handlers_abandoned",
      "Handlers still running after their job was already answered (e.g. deadline passed, 408): work the client no longer waits for. Should drop back to 0.",
    ),
    ledgerErrors: counter(
      "agent_ledger_errors_total",
      "Failed operations of the payment ledger (replay store), by operation.",
      ["operation"],
    ),
  };
}

/** The balances of the accounts that pay settlements' gas (EVM) and fees (Solana), with their warning levels. */
function balanceSeries({ gauge }: Makers) {
  return {
    settlerBalance: gauge(
      "agent_settler_balance_eth",
      "ETH held by the direct-settlement account (X402_SETTLER_KEY) on each network's chain (CAIP-2 id), which pays the gas of every settlement there. Read at start-up, by GET /health and on scrapes (at most every 5 s).",
      ["network"],
    ),
    settlerLow: gauge(
      "agent_settler_balance_low_eth",
      "The settler balance below which the server warns, by network: gas for 100 settlements at that chain's current gas price. Alert when agent_settler_balance_eth < agent_settler_balance_low_eth.",
      ["network"],
    ),
    // Its own series, not agent_settler_balance_eth{network="solana:…"}: another account
    // (SOLANA_FEE_PAYER_KEY), another unit, and an alert comparing it with the ETH threshold would be wrong.
    feePayerBalance: gauge(
      "agent_fee_payer_balance_sol",
      "SOL held by the Solana fee payer (SOLANA_FEE_PAYER_KEY, direct settlement) on each Solana network (CAIP-2 id), which pays the fee of every settlement there. Read by GET /health and on scrapes (at most every 5 s).",
      ["network"],
    ),
    feePayerLow: gauge(
      "agent_fee_payer_balance_low_sol",
      "The fee payer balance below which the server warns, by Solana network: fees for 1000 settlements. Alert when agent_fee_payer_balance_sol < agent_fee_payer_balance_low_sol.",
      ["network"],
    ),
  };
}

export function createPrometheusMetrics(options: PrometheusOptions = {}): PrometheusMetrics {
  const prefix = options.prefix ?? "";
  if (prefix !== "" && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix))
    throw new TypeError(
      `metrics prefix ${JSON.stringify(prefix)} is not valid: use letters, digits, "_" and ":", not starting with a digit`,
    );
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix });
  const name = (n: string): string => `${prefix}${n}`;

  const capabilityLabel = labelGuard(UNKNOWN);
  const reasonLabel = labelGuard("(none)");
  const operationLabel = labelGuard("(none)");

  const make = makers(registry, name);
  const series = jobSeries(make);
  const { jobs, paymentRefusals, settlements, settlementSeconds, earned } = series;
  const { inFlight, handlerSeconds, abandoned, ledgerErrors } = series;
  const { settlerBalance, settlerLow, feePayerBalance, feePayerLow } = balanceSeries(make);

  const metrics: Metrics = {
    job(capability: string, outcome: JobOutcome) {
      jobs.inc({ capability: capabilityLabel(capability), outcome });
    },
    paymentRefused(reason: string) {
      paymentRefusals.inc({ reason: reasonLabel(reason) });
    },
    settlement(
      capability: string,
      result: SettlementOutcome,
      seconds: number,
      earnedAtomic?: bigint,
      network = "",
    ) {
      const label = capabilityLabel(capability);
      settlements.inc({ capability: label, result, network });
      const observed = duration(seconds);
      if (observed !== undefined) settlementSeconds.observe({ capability: label }, observed);
      if (result === "settled" && earnedAtomic !== undefined && earnedAtomic > 0n)
        earned.inc({ capability: label, network }, Number(earnedAtomic) / 1e6);
    },
    handlerStarted(capability: string) {
      const label = capabilityLabel(capability);
      const started = performance.now();
      inFlight.inc();
      return once(() => {
        inFlight.dec();
        handlerSeconds.observe({ capability: label }, (performance.now() - started) / 1000);
      });
    },
    handlerAbandoned(_capability: string) {
      abandoned.inc();
      return once(() => abandoned.dec());
    },
    ledgerError(operation: string) {
      ledgerErrors.inc({ operation: operationLabel(operation) });
    },
    settlerBalance(balanceWei: bigint, lowWei: bigint, network = "") {
      settlerBalance.set({ network }, Number(balanceWei) / 1e18);
      settlerLow.set({ network }, Number(lowWei) / 1e18);
    },
    feePayerBalance(lamports: bigint, lowLamports: bigint, network = "") {
      feePayerBalance.set({ network }, Number(lamports) / 1e9);
      feePayerLow.set({ network }, Number(lowLamports) / 1e9);
    },
    ...asyncJobMetrics({ registry, name, capabilityLabel }),
  };

  return {
    metrics,
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
}
