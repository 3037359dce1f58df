/**
 * Starts the HTTP server: loads .env, checks the configuration and every network's settlement route
 * (its RPC endpoint answers for its chain and the settler account can pay for gas there: see
 * payments/route-health.ts; a facilitator serves it: payments/routes.ts), listens on PORT (on HOST
 * when set, else every interface; and METRICS_PORT when set), and on
 * SIGINT/SIGTERM shuts down gracefully: no new jobs, in-flight jobs finished (or, after
 * SHUTDOWN_TIMEOUT_SECONDS, refused unless already settling), then exit. A refused start exits 1, or
 * 75 (TRANSIENT_EXIT_CODE) when a facilitator did not answer: a process manager should retry later. `npm start` runs node
 * through `exec`, so these signals reach this process. startWorker is `npm run worker`'s process
 * (async jobs only; the `queue` feature, queue/worker-main.ts). Part of your project: edit freely.
 */
import { existsSync } from "node:fs";
import type { Server } from "node:http";
import { createApp, runtimeOf, type AppRuntime } from "./app.js";
import { answerClientErrors } from "./http/transport.js";
import { missingFeature, SERVICES } from "./features.js";
import { loadHandlers } from "./handlers.js";
import { missingPackages, notInstalled } from "./ops/installed.js";
import { startMetricsServer } from "./ops/metrics-loader.js";
import { ConfigError, type AppOptions } from "./config.js";
import { TRANSIENT_EXIT_CODE } from "./ops/settings.js";
import type { AgentDefinition } from "./types.js";

/** After the jobs are answered, how long connections get to finish writing before they are cut. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Stops accepting connections, drains in-flight jobs (up to `timeoutMs`, then cuts those not yet
 * settling), and resolves once every connection is closed and the ledger disconnected. Idle
 * keep-alive connections are closed right away (and again as requests finish) so they cannot
 * hold the server open.
 */
export async function shutdownGracefully(
  server: Server,
  runtime?: Pick<AppRuntime, "drain" | "ledger">,
  timeoutMs = 30_000,
): Promise<{ cut: boolean }> {
  const sweeper = setInterval(() => server.closeIdleConnections(), 200);
  const closed = new Promise<void>((resolve, reject) =>
    server.close((err) => (err ? reject(err) : resolve())),
  );
  server.closeIdleConnections();
  try {
    const drained = runtime ? await runtime.drain.drain(timeoutMs) : { cut: false };
    const forced = setTimeout(
      () => server.closeAllConnections(),
      runtime ? CLOSE_GRACE_MS : timeoutMs,
    );
    await closed.finally(() => clearTimeout(forced));
    await runtime?.ledger.close().catch(() => undefined);
    return drained;
  } finally {
    clearInterval(sweeper);
  }
}

/** Why a port could not be listened on, with what to do about a busy one (and a free port to use). */
async function cannotListen(
  variable: "PORT" | "METRICS_PORT",
  port: number,
  err: Error,
  host?: string,
): Promise<string> {
  const where = variable === "PORT" ? `port ${port}` : `METRICS_PORT ${port}`;
  const code = (err as NodeJS.ErrnoException).code;
  // An address this machine does not have, or a name that does not resolve: the HOST setting's fault.
  if (
    host !== undefined &&
    (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN")
  )
    return `Could not listen on ${where}: ${variable === "PORT" ? "HOST" : "METRICS_HOST"} is ${JSON.stringify(host)}, not an address of this machine (${err.message}): set it to one (127.0.0.1, 0.0.0.0, ::) or unset it\n`;
  if (code !== "EADDRINUSE") return `Could not listen on ${where}: ${err.message}\n`;
  // Loaded only for this message, so a server that starts never loads it.
  const { freePortNear, portInUse } = await import("./ops/port-help.js");
  const help = portInUse(variable, port, await freePortNear(port, host));
  return `Could not listen on ${where}: (EADDRINUSE) ${help}\n`;
}

/**
 * A configuration the server cannot run with (ConfigError): say why on stderr and exit 1; a start refused
 * for a reason that may pass (a facilitator that did not answer) exits TRANSIENT_EXIT_CODE (75) instead,
 * so a process manager restarts it after a delay rather than giving up or looping on a real mistake.
 */
function refuseToStart(err: unknown): never {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`${err.message}\n`);
  return process.exit(err.transient ? TRANSIENT_EXIT_CODE : 1);
}

/** Every package of package.json's dependencies installed, or no start (ops/installed.ts). */
function refuseMissingPackages(): void {
  const missing = missingPackages();
  if (missing.length > 0) refuseToStart(new ConfigError([notInstalled(missing)]));
}

/** What the `queue` feature (queue/worker-main.ts) gives: a process that only runs async jobs. */
export interface WorkerModule {
  runWorker(agent: AgentDefinition, options?: AppOptions): Promise<void>;
}

/** `npm run worker` (the project's server.ts with --worker): async jobs only, no HTTP. */
export async function startWorker(agent: AgentDefinition, options: AppOptions = {}): Promise<void> {
  refuseMissingPackages();
  const load = SERVICES.worker;
  if (!load)
    refuseToStart(new ConfigError([missingFeature("queue", "npm run worker runs async jobs")]));
  await (await load()).runWorker(agent, options);
}

export async function startServer(
  agent: AgentDefinition,
  options: AppOptions = {},
): Promise<Server> {
  // .env in the working directory fills in variables that are not already set (real env wins).
  if (options.env === undefined && existsSync(".env")) process.loadEnvFile(".env");
  refuseMissingPackages();

  let app: ReturnType<typeof createApp>;
  try {
    app = createApp(agent, options);
  } catch (err) {
    refuseToStart(err);
  }
  const runtime = runtimeOf(app);
  const { config, logger } = runtime;

  // Before taking any job (fail closed): an RPC endpoint serving another chain, or a facilitator that
  // does not serve an offered network, would refuse every payment or fail to settle it after the job
  // ran; so would a settler account with no ETH for gas.
  try {
    // Every network's RPC endpoint (reachable, its chain) and the settler's gas on it
    // (payments/route-health.ts), then every network's facilitator (payments/routes.ts).
    await runtime.settlement?.checkAtStart();
    if (!config.devMode) {
      const { checkRoutes } = await import("./payments/routes.js");
      await checkRoutes(config, logger);
    }
  } catch (err) {
    await runtime.ledger.close().catch(() => undefined);
    refuseToStart(err);
  }

  // Production takes no job before every capability's module has loaded (see handlers.ts); one that
  // cannot load stops the start, as a static import of it would.
  if (!config.devMode)
    await loadHandlers(agent.capabilities).catch(async (err: unknown) => {
      await runtime.ledger.close().catch(() => undefined);
      throw err;
    });

  // The discovery data the 402s' Bazaar extension is built from (it never fails the start: see app.ts).
  await runtime.ready;

  const server = await listenOn(app, runtime, agent);
  const metricsServer = await startMetrics(runtime);

  stopOnSignals(server, runtime, metricsServer);
  return server;
}

/** Listens on PORT (on HOST when set, else every interface) and says where; a busy port exits 1. */
async function listenOn(
  app: ReturnType<typeof createApp>,
  { config, logger }: AppRuntime,
  agent: AgentDefinition,
): Promise<Server> {
  const server = await new Promise<Server>((resolve) => {
    const listening = (err?: Error) => {
      if (!err) return resolve(s);
      void cannotListen("PORT", config.port, err, config.host).then((text) => {
        process.stderr.write(text);
        process.exit(1);
      });
    };
    // HOST unset: every interface (Node's default), as before HOST existed.
    const s =
      config.host === undefined
        ? app.listen(config.port, listening)
        : app.listen(config.port, config.host, listening);
  });
  answerClientErrors(server);
  const address = server.address();
  const actualPort = typeof address === "object" && address ? address.port : config.port;
  const anywhere = config.host === undefined || config.host === "0.0.0.0" || config.host === "::";
  const where = anywhere
    ? "localhost"
    : config.host!.includes(":")
      ? `[${config.host}]`
      : config.host;
  logger.info(`${agent.name} ${agent.version} listening on http://${where}:${actualPort}`, {
    mode: config.devMode ? "dev (payments bypassed)" : "production (payments required)",
  });
  return server;
}

/** The metrics server on METRICS_PORT, when metrics are on and that port is set; a busy port exits 1. */
export async function startMetrics(runtime: AppRuntime): Promise<Server | undefined> {
  if (!runtime.metrics || runtime.config.metrics?.port === undefined) return undefined;
  const { port, host } = runtime.config.metrics;
  // Not awaited straight into `metricsServer`: that contextual type (Server | undefined) makes tsc
  // infer catch()'s type against node:http's Server structurally, a fifth of a second of every typecheck.
  const started = await startMetricsServer(runtime.metrics, { port, host }).catch(
    async (err: Error) => {
      process.stderr.write(await cannotListen("METRICS_PORT", port, err, host));
      return process.exit(1);
    },
  );
  const bound = started.address();
  runtime.logger.info(
    `metrics on http://${host}:${typeof bound === "object" && bound ? bound.port : port}/metrics`,
  );
  return started;
}

/**
 * SIGINT/SIGTERM run `stop` (what it says is logged first), then exit 0 ("stopped"), or 1 when it
 * failed; the same signal again exits at once. Returns the function that removes the handlers.
 */
export function onStopSignals(
  logger: AppRuntime["logger"],
  stop: (signal: NodeJS.Signals) => Promise<unknown>,
): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn(`${signal} again: exiting without waiting for running jobs`);
      process.exit(1);
    }
    stopping = true;
    stop(signal).then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error("error while stopping", { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

/**
 * SIGINT/SIGTERM: stop taking jobs, finish in-flight ones (up to SHUTDOWN_TIMEOUT_SECONDS), exit;
 * the same signal again exits at once. The handlers go when the server closes.
 */
function stopOnSignals(server: Server, runtime: AppRuntime, metricsServer?: Server): void {
  const seconds = runtime.config.shutdownTimeoutSeconds;
  const off = onStopSignals(runtime.logger, async (signal) => {
    runtime.logger.info(
      `${signal} received: finishing in-flight jobs for up to ${seconds} s, then exiting (send it again to force)`,
    );
    metricsServer?.close();
    const { cut } = await shutdownGracefully(server, runtime, seconds * 1000);
    if (cut)
      runtime.logger.warn(
        "shutdown timeout reached: jobs still running were refused (503, not charged)",
      );
  });
  server.on("close", () => {
    off();
    metricsServer?.close();
  });
}
