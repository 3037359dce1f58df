/**
 * What every job shares, built once by the app (app.ts) and passed to the pipeline.
 * Part of your project: edit freely.
 */
import type { Ledger } from "../ledger/ledger.js";
import type { ResolvedConfig } from "../config.js";
import type { Metrics } from "../ops/metrics.js";
import type { PaymentGate } from "../payments/gate.js";
import type { AgentDefinition } from "../types.js";

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
}
