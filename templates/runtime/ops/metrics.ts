/**
 * What the runtime counts: jobs and their outcomes, payment refusals, settlements and earnings,
 * handlers in flight, async jobs (the queue's depth, how they ended, time queued and running). The runtime calls this interface; metrics/prometheus.ts (the `metrics`
 * feature) implements it with prom-client and is only loaded when metrics are enabled (this file
 * imports nothing).
 * Part of your project: implement Metrics to send these elsewhere (StatsD, OpenTelemetry...).
 */

/** How a job ended, as the client saw it. */
export type JobOutcome =
  | "completed"
  | "validation"
  | "capability"
  | "payment_required"
  | "payment"
  | "deadline"
  | "internal"
  | "unavailable"
  | "caller_gone";

export type SettlementOutcome = "settled" | "failed" | "uncertain";

/** How an async job ended: completed (its answer is the output), or failed (an error body, nothing charged). */
export type AsyncJobState = "completed" | "failed";

/** The async job queue's depth: jobs waiting for a worker, and jobs a worker is running. */
export interface AsyncQueueCounts {
  queued: number;
  running: number;
}

export interface Metrics {
  /**
   * A job was answered: agent_jobs_total{capability,outcome}.
   * `capability` is a declared capability's name, or "" when the request named none or an unknown
   * one (counted as "(unknown)", so a caller cannot create label values at will).
   */
  job(capability: string, outcome: JobOutcome): void;
  /** A payment was refused: agent_payment_refusals_total{reason}. `reason` is a short code from a fixed set. */
  paymentRefused(reason: string): void;
  /**
   * A settlement attempt ended: agent_settlements_total{capability,result,network},
   * agent_settlement_duration_seconds{capability}, and when settled
   * agent_usdc_earned_total{capability,network} (`earnedAtomic` in USDC atomic units, 6 decimals).
   * `network`: the CAIP-2 id of the offered network the payment was on (a fixed set).
   */
  settlement(
    capability: string,
    result: SettlementOutcome,
    seconds: number,
    earnedAtomic?: bigint,
    network?: string,
  ): void;
  /**
   * A handler started: agent_handlers_in_flight +1. Call the returned function when it stops
   * (-1, and its duration observed in agent_handler_duration_seconds{capability}); extra calls do nothing.
   */
  handlerStarted(capability: string): () => void;
  /**
   * A handler is still running after its job was answered (e.g. 408): agent_handlers_abandoned +1.
   * Call the returned function when it finally stops (-1); extra calls do nothing.
   */
  handlerAbandoned(capability: string): () => void;
  /** A ledger (replay store) operation failed: agent_ledger_errors_total{operation}. */
  ledgerError(operation: string): void;
  /**
   * The direct-settlement account's ETH on one network's chain, read at start-up, by GET /health
   * and on each metrics scrape (at most every few seconds): agent_settler_balance_eth{network}, and
   * agent_settler_balance_low_eth{network}, the balance below which the server warns (gas for 100
   * settlements at that chain's gas price). `network`: the CAIP-2 id of an offered network.
   * Optional: implementations written before it existed need not have it.
   */
  settlerBalance?(balanceWei: bigint, lowWei: bigint, network?: string): void;
  /**
   * The Solana fee payer's SOL (SOLANA_FEE_PAYER_KEY, direct settlement on Solana), read by GET
   * /health and on each metrics scrape (at most every few seconds): agent_fee_payer_balance_sol{network},
   * and agent_fee_payer_balance_low_sol{network}, the balance below which the server warns (fees for
   * 1000 settlements). In lamports (1 SOL = 10^9). `network`: the CAIP-2 id of an offered Solana network.
   * Optional: implementations written before it existed need not have it.
   */
  feePayerBalance?(lamports: bigint, lowLamports: bigint, network?: string): void;
  /**
   * The async job queue (the `queue` feature) says how to read its depth, once it is loaded: read on
   * each metrics scrape, agent_async_jobs_queued and agent_async_jobs_running (with BullMQ, the shared
   * queue's counts: every instance reports the same). Optional.
   */
  asyncQueue?(read: () => Promise<AsyncQueueCounts>): void;
  /**
   * A worker took an async job that had waited `queuedSeconds` since it was accepted:
   * agent_async_job_queued_seconds{capability}. Call the returned function when the job ended:
   * agent_async_jobs_total{capability,state}, agent_async_job_running_seconds{capability}; extra
   * calls do nothing. A job cut by a shutdown and sent back to the queue does not end here. Optional.
   */
  asyncJobStarted?(capability: string, queuedSeconds: number): (state: AsyncJobState) => void;
}

const nothing = (): void => {};

/** Metrics that go nowhere: the default when metrics are off. */
export const noMetrics: Metrics = Object.freeze({
  job: nothing,
  paymentRefused: nothing,
  settlement: nothing,
  handlerStarted: () => nothing,
  handlerAbandoned: () => nothing,
  ledgerError: nothing,
  settlerBalance: nothing,
  feePayerBalance: nothing,
  asyncQueue: nothing,
  asyncJobStarted: () => nothing,
});
