/**
 * What every job shares, built once by the app (app.ts) and passed to the pipeline.
 * Part of your project: edit freely.
 */
import type { HttpAnswer } from "../http/answer.js";
import type { Ledger, StoredResult } from "../ledger/ledger.js";
import type { ResolvedConfig } from "../config.js";
import type { Metrics } from "../ops/metrics.js";
import type { NetworkPaymentConfig } from "../payments/config.js";
import type { NetworkFacts } from "../payments/family.js";
import type { PaymentGate } from "../payments/gate.js";
import type { AgentDefinition } from "../types.js";
import type { JobAnswer } from "./outcome.js";
import type { JobCall } from "./pipeline.js";

/**
 * A queued job now: waiting or running; cancelled (and not charged); unknown to the queue (never
 * queued, lost with an in-process queue, or its answer expired); or its answer as POST /execute
 * would send it (what the ledger recorded as charged first).
 */
export type QueuedJobState = "queued" | "running" | "cancelled" | "unknown" | StoredResult;

/** Async jobs (the `queue` feature, queue/transport.ts sets them). */
export interface AsyncJobs {
  /**
   * POST /execute's async branch: undefined when `prefer` does not ask for respond-async (the job
   * then runs as usual), else the 202 or a refusal.
   */
  accept(call: JobCall, prefer: string): Promise<HttpAnswer | undefined>;
  /**
   * Queues a job for a transport that answers later (A2A's return_immediately), checked, verified
   * and reserved as accept's: its queue id, or the answer the job got instead (an offer, a refusal).
   */
  enqueue(call: JobCall): Promise<{ queued: string } | JobAnswer>;
  state(id: string): Promise<QueuedJobState>;
  /**
   * Cancels a queued job unless it has ended: "cancelled" (its handler's ctx.signal aborts, and it
   * is never charged), "ended" (its answer stands, a charge included) or "unknown".
   */
  cancel(id: string): Promise<"cancelled" | "ended" | "unknown">;
}

/** Graceful shutdown, as jobs and their transports see it (http/drain.ts makes it). */
export interface JobDrain {
  /** True once shutdown began: new jobs are refused. */
  readonly stopping: boolean;
  /** Aborts when the drain timeout passed: jobs that have not begun settling give up. */
  readonly cut: AbortSignal;
  /** Counts a job in flight; call the returned function when it has been answered. */
  enter(): () => void;
}

export interface JobServices {
  agent: AgentDefinition;
  config: ResolvedConfig;
  /** The payment gate; undefined only in dev mode, where payment is skipped. */
  gate: PaymentGate | undefined;
  ledger: Ledger;
  metrics: Metrics;
  drain: JobDrain;
  /** The public endpoints this instance serves, with their methods (for pages that list them: the console). */
  endpoints?: ReadonlyArray<{ path: string; methods: string }>;
  /**
   * What an offered network's family says of it (chain id, token): for pages that check what they are
   * asked to pay (the console). Set by app.ts: a transport importing the families' registry would import
   * features.ts, which imports the transports.
   */
  networkFacts?: (net: NetworkPaymentConfig) => NetworkFacts;
  /** Async jobs (Prefer: respond-async); set by the `queue` feature, absent without it. */
  asyncJobs?: AsyncJobs;
}
