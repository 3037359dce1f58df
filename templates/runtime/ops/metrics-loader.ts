/**
 * Metrics are opt-in (METRICS_PORT or METRICS_TOKEN), and prom-client is loaded only then, in the
 * background: calls made while it loads are kept (up to a bound) and replayed in order.
 * Part of your project: edit freely.
 */
import type { MetricsSource } from "../http/metrics-endpoint.js";
import type { MetricsConfig } from "./config.js";
import { type Metrics, noMetrics } from "./metrics.js";

export interface LoadedMetrics {
  metrics: Metrics;
  /** What GET /metrics serves; undefined when metrics are off. */
  source: MetricsSource | undefined;
}

const MAX_QUEUED = 10_000;

export function loadMetrics(config: MetricsConfig | undefined): LoadedMetrics {
  if (!config) return { metrics: noMetrics, source: undefined };
  const loading = import("./prometheus.js").then((m) => m.createPrometheusMetrics());
  let real: Metrics | undefined;
  const queue: Array<(m: Metrics) => void> = [];
  void loading.then((p) => {
    real = p.metrics;
    for (const call of queue.splice(0)) call(real);
  });
  const run = (call: (m: Metrics) => void): void => {
    if (real) call(real);
    else if (queue.length < MAX_QUEUED) queue.push(call);
  };
  /** A started measurement whose end may be called before or after the real metrics load. */
  const span = (start: (m: Metrics) => () => void) => {
    let end: (() => void) | undefined;
    run((m) => (end = start(m)));
    return () => run(() => end?.());
  };
  const metrics: Metrics = {
    job: (c, o) => run((m) => m.job(c, o)),
    paymentRefused: (r) => run((m) => m.paymentRefused(r)),
    settlement: (c, r, s, e, n) => run((m) => m.settlement(c, r, s, e, n)),
    handlerStarted: (c) => span((m) => m.handlerStarted(c)),
    handlerAbandoned: (c) => span((m) => m.handlerAbandoned(c)),
    ledgerError: (o) => run((m) => m.ledgerError(o)),
    settlerBalance: (b, l, n) => run((m) => m.settlerBalance?.(b, l, n)),
    feePayerBalance: (b, l, n) => run((m) => m.feePayerBalance?.(b, l, n)),
  };
  const source: MetricsSource = {
    contentType: "text/plain; version=0.0.4; charset=utf-8",
    render: async () => (await loading).render(),
  };
  return { metrics, source };
}
