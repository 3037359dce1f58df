/**
 * What every job shares, built once by the app (app.ts) and passed to the pipeline.
 * Part of your project: edit freely.
 */
import type { HttpAnswer } from "../http/answer.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ResolvedConfig } from "../config.js";
import type { Metrics } from "../ops/metrics.js";
import type { PaymentGate } from "../payments/gate.js";
import type { AgentDefinition } from "../types.js";
import type { JobCall } from "./pipeline.js";

/**
 * POST /execute's async branch (the `queue` feature, queue/transport.ts sets it): undefined when
 * `prefer` does not ask for respond-async (the job then runs as usual), else the 202 or a refusal.
 */
export interface AsyncJobs {
  accept(call: JobCall, prefer: string): Promise<HttpAnswer | undefined>;
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
  /** Async jobs (Prefer: respond-async); set by the `queue` feature, absent without it. */
  asyncJobs?: AsyncJobs;
}
