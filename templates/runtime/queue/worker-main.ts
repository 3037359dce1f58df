/**
 * `npm run worker` (src/worker.ts): a process that only runs async jobs, taken from the BullMQ queue
 * on REDIS_URL, WORKER_CONCURRENCY at once; no HTTP. Web instances (`npm start`, with WORKER=off to
 * serve HTTP only) and workers scale separately on one Redis. It checks what `npm start` checks
 * before taking a job (configuration, every network's settlement route, the handlers' modules),
 * and on SIGINT/SIGTERM takes no new job, lets the running ones finish (up to
 * SHUTDOWN_TIMEOUT_SECONDS; then cut ones go back to the queue), and exits. With METRICS_PORT (the
 * `metrics` feature) it serves GET /metrics there: the async jobs it ran are counted by it alone.
 * With WORKER_HEALTH_PORT it answers GET /health there (what a web instance's says: its ledger, so
 * its Redis, and each network's settlement route; 503 while it stops), and nothing else: the image's
 * HEALTHCHECK and compose's ask it, so a worker cut off from Redis is seen unhealthy.
 * Part of your project: edit freely.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createApp, runtimeOf } from "../app.js";
import { ConfigError, type AppOptions } from "../config.js";
import { onStopSignals, startMetrics } from "../server.js";
import { howToSet } from "../features.js";
import { loadHandlers } from "../handlers.js";
import type { AgentDefinition, Logger } from "../types.js";
import type { AsyncJobsService } from "./service.js";

/** What the queue's transport leaves for this entry point (transport.ts). */
interface JobsHandle {
  load(): Promise<AsyncJobsService>;
}

function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  return process.exit(1);
}

export async function runWorker(agent: AgentDefinition, options: AppOptions = {}): Promise<void> {
  if (options.env === undefined && existsSync(".env")) process.loadEnvFile(".env");
  const env = options.env ?? process.env;
  let app: ReturnType<typeof createApp>;
  try {
    // This process is the worker, whatever WORKER says for the web instances.
    app = createApp(agent, { ...options, env: { ...env, WORKER: "on" } });
  } catch (err) {
    if (err instanceof ConfigError) refuse(err.message);
    throw err;
  }
  const runtime = runtimeOf(app);
  const { config, logger } = runtime;
  if (!config.redis)
    refuse(
      `npm run worker needs REDIS_URL (${howToSet("REDIS_URL", "redis")}): without Redis the job queue lives in the web process (npm start runs its worker)`,
    );
  try {
    await runtime.settlement?.checkAtStart();
    if (!config.devMode) {
      const { checkRoutes } = await import("../payments/routes.js");
      await checkRoutes(config, logger);
    }
    await loadHandlers(agent.capabilities);
  } catch (err) {
    await runtime.ledger.close().catch(() => undefined);
    if (err instanceof ConfigError) refuse(err.message);
    throw err;
  }
  const jobs = await (app.locals.asyncJobs as JobsHandle).load();
  const metricsServer = await startMetrics(runtime);
  const port = config.queue?.healthPort;
  const health = port ? serveHealth(app, logger, port, config.host) : undefined;
  stopOnSignals(runtime, jobs, () => {
    metricsServer?.close();
    health?.close();
  });
}

/** GET /health on `port`, answered by the app's own check; anything else: 404. */
function serveHealth(
  app: ReturnType<typeof createApp>,
  logger: Logger,
  port: number,
  host?: string,
): Server {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === "/health") return void app(req, res);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(
      '{"status":"failed","error_type":"validation","error":"a worker answers GET /health only"}',
    );
  });
  server.on("error", (err) =>
    logger.error("worker health: could not listen", { port, error: String(err) }),
  );
  server.listen(port, host ?? "0.0.0.0", () =>
    logger.info(`worker health: GET /health on port ${port}`),
  );
  return server;
}

/** SIGINT/SIGTERM: no new job, the running ones finish (or are cut, back to the queue), exit. */
function stopOnSignals(
  runtime: ReturnType<typeof runtimeOf>,
  jobs: AsyncJobsService,
  closeMetrics: () => void,
): void {
  const seconds = runtime.config.shutdownTimeoutSeconds;
  onStopSignals(runtime.logger, async (signal) => {
    runtime.logger.info(
      `${signal} received: no new jobs; finishing running ones for up to ${seconds} s, then exiting (send it again to force)`,
    );
    await runtime.drain.drain(seconds * 1000);
    await jobs.close();
    closeMetrics();
    await runtime.ledger.close().catch(() => undefined);
  });
}
