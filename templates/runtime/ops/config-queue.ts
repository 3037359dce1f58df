/**
 * The `queue` feature's settings (async jobs: Prefer: respond-async, GET /jobs/<id>): whether this
 * process runs a worker (WORKER), how many jobs it runs at once (WORKER_CONCURRENCY), how long a
 * finished job's answer is kept for polling (JOB_RESULT_TTL_SECONDS) and how long a worker that
 * stopped answering keeps its job before another worker takes it over (JOB_LOCK_SECONDS). In a
 * project without the feature, setting one of them refuses the start, with the fix.
 * Part of your project: edit freely.
 */
import { hasFeature, howToSet, missingFeature } from "../features.js";
import type { Reader } from "./settings.js";

export interface QueueConfig {
  /** WORKER: "on" (default) runs a worker beside the HTTP server; "off" serves HTTP only. */
  worker: boolean;
  /** WORKER_CONCURRENCY: jobs one worker runs at once (default 4). */
  concurrency: number;
  /** JOB_RESULT_TTL_SECONDS: how long a finished job's answer can be polled (default 86400). */
  resultTtlSeconds: number;
  /** JOB_LOCK_SECONDS: a worker silent this long loses its job to another worker (default 30). */
  lockSeconds: number;
  /** WORKER_HEALTH_PORT: where `npm run worker` answers GET /health (the container's check); unset: nowhere. */
  healthPort?: number;
}

const SETTINGS = [
  "WORKER",
  "WORKER_CONCURRENCY",
  "JOB_RESULT_TTL_SECONDS",
  "JOB_LOCK_SECONDS",
  "WORKER_HEALTH_PORT",
];

/** The queue's settings, or undefined in a project without the `queue` feature. */
export function resolveQueue(read: Reader, redisUrl: string | undefined): QueueConfig | undefined {
  if (!hasFeature("queue")) {
    const asked = SETTINGS.find((name) => read.fromEnv(name).value !== undefined);
    if (asked) read.problems.push(missingFeature("queue", `${asked} is set (async jobs)`));
    return undefined;
  }
  const worker = read.fromEnv("WORKER").value;
  if (worker !== undefined && worker !== "on" && worker !== "off")
    read.problems.push(
      `WORKER is ${JSON.stringify(worker.slice(0, 40))}: set it to "off" (this process serves HTTP only; workers run with npm run worker) or "on" (the default)`,
    );
  if (worker === "off" && redisUrl === undefined)
    read.problems.push(
      `WORKER is off but REDIS_URL is not set: without Redis the job queue lives in this process, so this process must run its worker; ${howToSet("REDIS_URL", "redis")} to share the queue with separate workers (npm run worker)`,
    );
  const concurrency = read.count(undefined, "", "WORKER_CONCURRENCY", {
    min: 1,
    max: 1000,
    fallback: 4,
    hint: "set it to a whole number of jobs from 1 to 1000 (default 4)",
  });
  const resultTtlSeconds = read.count(undefined, "", "JOB_RESULT_TTL_SECONDS", {
    min: 60,
    max: 30 * 86_400,
    fallback: 86_400,
    hint: "set it to a whole number of seconds from 60 to 2592000 (default 86400, one day)",
  });
  const lockSeconds = read.count(undefined, "", "JOB_LOCK_SECONDS", {
    min: 2,
    max: 3600,
    fallback: 30,
    hint: "set it to a whole number of seconds from 2 to 3600 (default 30)",
  });
  const healthPort = read.fromEnv("WORKER_HEALTH_PORT").value;
  const health =
    healthPort === undefined
      ? {}
      : {
          healthPort: read.count(undefined, "", "WORKER_HEALTH_PORT", {
            min: 1,
            max: 65_535,
            fallback: 0,
            hint: "set it to the port npm run worker answers GET /health on (1-65535), or unset it",
          }),
        };
  return { worker: worker !== "off", concurrency, resultTtlSeconds, lockSeconds, ...health };
}
