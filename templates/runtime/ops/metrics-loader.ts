/**
 * Metrics are opt-in (METRICS_PORT or METRICS_TOKEN), and the `metrics` feature (metrics/:
 * prom-client, GET /metrics, the metrics port) is loaded through features.ts only then, in the
 * background: calls made while it loads are kept (up to a bound) and replayed in order.
 * Part of your project: edit freely.
 */
import type { Server } from "node:http";
import type { RequestHandler } from "express";
import { SERVICES } from "../features.js";
import { type MetricsConfig, serviceAbsent } from "./config-services.js";
import { type AsyncJobState, type Metrics, noMetrics } from "./metrics.js";
import { ConfigError } from "./settings.js";

/** What serves the metrics text. */
export interface MetricsSource {
  contentType: string;
  render(): Promise<string>;
}

export interface MetricsServerOptions {
  port: number;
  host: string;
  /** When set, requests must also send `Authorization: Bearer <token>`. */
  token?: string;
}

/** What the `metrics` feature (metrics/service.ts) gives the core. */
export interface MetricsModule {
  createPrometheusMetrics(): MetricsSource & { metrics: Metrics };
  metricsRoute(source: MetricsSource, token: string): RequestHandler;
  startMetricsServer(source: MetricsSource, options: MetricsServerOptions): Promise<Server>;
}

export interface LoadedMetrics {
  metrics: Metrics;
  /** What GET /metrics serves; undefined when metrics are off. */
  source: MetricsSource | undefined;
}

let feature: Promise<MetricsModule> | undefined;
/** The `metrics` feature, loaded once; a ConfigError when this project does not include it. */
function loadFeature(): Promise<MetricsModule> {
  const load = SERVICES.metrics;
  // resolveConfig refuses METRICS_* without the feature; this is for configurations made by hand.
  if (!load) throw new ConfigError([serviceAbsent("metrics", "METRICS_PORT or METRICS_TOKEN")]);
  return (feature ??= load());
}

/** GET /metrics behind `Authorization: Bearer <token>` (metrics/endpoint.ts, once loaded). */
export function metricsRoute(source: MetricsSource, token: string): RequestHandler {
  const route = loadFeature().then((m) => m.metricsRoute(source, token));
  route.catch(() => undefined); // reported by the first request
  return async (req, res, next) => (await route)(req, res, next);
}

/** The separate metrics server (metrics/endpoint.ts); resolves once listening. */
export async function startMetricsServer(
  source: MetricsSource,
  options: MetricsServerOptions,
): Promise<Server> {
  return (await loadFeature()).startMetricsServer(source, options);
}

const MAX_QUEUED = 10_000;

export function loadMetrics(config: MetricsConfig | undefined): LoadedMetrics {
  if (!config) return { metrics: noMetrics, source: undefined };
  const loading = loadFeature().then((m) => m.createPrometheusMetrics());
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
  const asyncJobStarted: Metrics["asyncJobStarted"] = (c, q) => {
    let end: ((state: AsyncJobState) => void) | undefined;
    run((m) => (end = m.asyncJobStarted?.(c, q)));
    return (state) => run(() => end?.(state));
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
    asyncQueue: (read) => run((m) => m.asyncQueue?.(read)),
    asyncJobStarted,
  };
  const source: MetricsSource = {
    contentType: "text/plain; version=0.0.4; charset=utf-8",
    render: async () => (await loading).render(),
  };
  return { metrics, source };
}
