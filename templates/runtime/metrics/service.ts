/**
 * The `metrics` feature's entry point, as features.ts loads it (only when METRICS_PORT or
 * METRICS_TOKEN is set): prom-client's metrics, the GET /metrics route and the metrics port.
 * Part of your project: edit freely.
 */
export { metricsRoute, startMetricsServer } from "./endpoint.js";
export { createPrometheusMetrics } from "./prometheus.js";
