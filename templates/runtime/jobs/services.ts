/**
 * What every job shares, built once by the app (app.ts) and passed to the pipeline.
 * Part of your project: edit freely.
 */
import type { Drain } from "../http/drain.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ResolvedConfig } from "../ops/config.js";
import type { Metrics } from "../ops/metrics.js";
import type { PaymentGate } from "../payments/gate.js";
import type { AgentDefinition } from "../types.js";

export interface JobServices {
  agent: AgentDefinition;
  config: ResolvedConfig;
  /** The payment gate; undefined only in dev mode, where payment is skipped. */
  gate: PaymentGate | undefined;
  ledger: Ledger;
  metrics: Metrics;
  drain: Drain;
}
