/**
 * The async job queue's metrics (prom-client, the `metrics` feature), part of prometheus.ts's
 * registry: the queue's depth, read on each scrape (agent_async_jobs_queued, agent_async_jobs_running),
 * how async jobs ended (agent_async_jobs_total{capability,state}), and how long they waited for a
 * worker and then ran (agent_async_job_queued_seconds, agent_async_job_running_seconds).
 * Part of your project: edit freely.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { AsyncJobState, AsyncQueueCounts, Metrics } from "../ops/metrics.js";

/** Time an async job waited for a worker: from 10 ms to an hour. */
const QUEUED_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/** Time an async job ran: from a second to a day. */
const RUNNING_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 10800, 21600, 86400];
/** One scrape (its gauges collected at once) reads the queue once for both gauges. */
const READ_REUSE_MS = 100;

export interface AsyncJobMetricsOptions {
  registry: Registry;
  /** A metric's full name (with the prefix). */
  name(n: string): string;
  /** The bounded capability label. */
  capabilityLabel(capability: string): string;
}

/** Seconds as a histogram takes them. */
const seconds = (ms: number): number => Math.max(0, ms) / 1000;

/** Reads the queue's counts once per scrape; undefined while it cannot (Redis away). */
function countsReader() {
  let read: (() => Promise<AsyncQueueCounts>) | undefined;
  let last: { at: number; counts: Promise<AsyncQueueCounts | undefined> } | undefined;
  return {
    set: (reader: () => Promise<AsyncQueueCounts>) => (read = reader),
    counts(): Promise<AsyncQueueCounts | undefined> {
      if (!read) return Promise.resolve({ queued: 0, running: 0 });
      const now = Date.now();
      if (!last || now - last.at > READ_REUSE_MS)
        last = { at: now, counts: read().catch(() => undefined) };
      return last.counts;
    },
  };
}

export function asyncJobMetrics(
  options: AsyncJobMetricsOptions,
): Required<Pick<Metrics, "asyncQueue" | "asyncJobStarted">> {
  const { name, capabilityLabel } = options;
  const registers = [options.registry];
  const reader = countsReader();
  const depth = (n: string, help: string, key: keyof AsyncQueueCounts) =>
    new Gauge({
      name: name(n),
      help,
      registers,
      async collect() {
        const counts = await reader.counts();
        if (counts) this.set(counts[key]);
      },
    });
  depth(
    "agent_async_jobs_queued",
    "Async jobs (Prefer: respond-async) waiting for a worker, read on each scrape. With BullMQ (REDIS_URL) the shared queue's count, the same on every instance: take the max, not the sum.",
    "queued",
  );
  depth(
    "agent_async_jobs_running",
    "Async jobs a worker is running, read on each scrape. With BullMQ the shared queue's count (every worker's), the same on every instance.",
    "running",
  );
  const ended = new Counter({
    name: name("agent_async_jobs_total"),
    help: "Async jobs that ended, by capability and state: completed (answered with its output, settled) or failed (an error body: handler error, deadline, invalid output, payment refused; nothing charged).",
    labelNames: ["capability", "state"],
    registers,
  });
  const queued = new Histogram({
    name: name("agent_async_job_queued_seconds"),
    help: "Time async jobs waited from their 202 until a worker took them, in seconds, by capability.",
    labelNames: ["capability"],
    buckets: QUEUED_BUCKETS,
    registers,
  });
  const running = new Histogram({
    name: name("agent_async_job_running_seconds"),
    help: "Time async jobs ran on a worker until they ended (completed or failed, settlement included), in seconds, by capability.",
    labelNames: ["capability"],
    buckets: RUNNING_BUCKETS,
    registers,
  });

  return {
    asyncQueue(read) {
      reader.set(read);
    },
    asyncJobStarted(capability, queuedSeconds) {
      const label = capabilityLabel(capability);
      if (Number.isFinite(queuedSeconds))
        queued.observe({ capability: label }, Math.max(0, queuedSeconds));
      const started = performance.now();
      let done = false;
      return (state: AsyncJobState) => {
        if (done) return;
        done = true;
        ended.inc({ capability: label, state });
        running.observe({ capability: label }, seconds(performance.now() - started));
      };
    },
  };
}
