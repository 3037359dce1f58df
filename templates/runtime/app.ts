/**
 * The HTTP layer: the spec's three endpoints plus the discovery documents (discovery/), and every
 * other request answered in the spec's error shape. The job logic lives in jobs/, payments in
 * payments/, the ledger in ledger/, HTTP details (CORS, transport errors, request ids, draining) in
 * http/, and Prometheus metrics in metrics/ (ops/metrics-loader.ts). Part of your project: edit freely.
 */
import express from "express";
import { compileValidators } from "./ajv.js";
import { loadHandlers } from "./handlers.js";
import { createDiscovery, mountDiscovery } from "./discovery/routes.js";
import { UnavailableError } from "./errors.js";
import { cors, ROUTES } from "./http/cors.js";
import { createDrain, type Drain } from "./http/drain.js";
import { baseUrlOf } from "./http/base-url.js";
import { requestIds } from "./http/request-id.js";
import { errorHandler, methodNotAllowed, notFound, requireJson, refuse } from "./http/transport.js";
import {
  executeJob,
  loadPaidJobs,
  SERVICE_VERSION,
  type JobResponse,
  type JobServices,
} from "./jobs/pipeline.js";
import type { Ledger } from "./ledger/ledger.js";
import { selectLedger } from "./ledger/select.js";
import { ConfigError, resolveConfig, type AppOptions, type ResolvedConfig } from "./ops/config.js";
import { afterLogs, createLogger } from "./ops/logger.js";
import { loadMetrics, type MetricsSource, metricsRoute } from "./ops/metrics-loader.js";
import { mountMcp } from "./mcp/route.js";
import { mountConsole } from "./console/route.js";
import type { DiscoveryData } from "./discovery/data.js";
import { type BazaarDeclarations, createBazaar } from "./payments/bazaar.js";
import { createPaymentGate, describePayments } from "./payments/gate.js";
import { createRouteHealth, type RouteHealth } from "./payments/route-health.js";
import type { AgentDefinition, Capability, Logger } from "./types.js";

export type { AppOptions } from "./ops/config.js";

/** What startServer (server.ts) needs from an app besides its request handling. */
export interface AppRuntime {
  config: ResolvedConfig;
  logger: Logger;
  ledger: Ledger;
  drain: Drain;
  /** What GET /metrics serves, when metrics are enabled. */
  metrics: MetricsSource | undefined;
  /** Resolves when what a paid job's 402 needs has loaded (the discovery data); never rejects. */
  ready: Promise<void>;
  /** Whether each network's settlement route can collect (production; not for a custom settler without RPC). */
  settlement: RouteHealth | undefined;
}

/** The runtime parts of an app made by createApp. */
export function runtimeOf(app: express.Express): AppRuntime {
  return app.locals.runtime as AppRuntime;
}

/**
 * A job's answer, its body already serialized: written as Express's res.send writes JSON (same
 * headers), without parsing the Content-Type back or looking for an ETag on every job.
 */
function sendAnswer(res: express.Response, answer: JobResponse, sent: () => void): void {
  res.statusCode = answer.status;
  for (const name in answer.headers) res.setHeader(name, answer.headers[name]!);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(answer.body));
  // After the job's log line is written (see ops/logger.ts); `sent` once the answer is handed over.
  afterLogs(() => {
    try {
      res.end(answer.body);
    } catch {
      res.destroy(); // nothing else to tell a caller whose answer cannot be written
    } finally {
      sent();
    }
  });
}

/** Seconds a caller is asked to wait before retrying while the server is shutting down. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

export function createApp(agent: AgentDefinition, options: AppOptions = {}): express.Express {
  const config = resolveConfig(options); // throws ConfigError listing every problem
  // Production compiles every schema before taking a paid job; dev mode when a capability is first called.
  if (!config.devMode) {
    const problems = compileValidators(agent.capabilities);
    if (problems.length > 0) throw new ConfigError(problems);
    loadHandlers(agent.capabilities).catch(() => undefined); // startServer awaits (and reports) it
  }
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const ledger = selectLedger(config, agent.name, logger, options.ledger);
  const loaded = loadMetrics(config.metrics);
  const { metrics } = loaded;
  const settlement = config.devMode
    ? undefined
    : createRouteHealth(config.payment, { logger, metrics });
  // A scrape reads the settler's balance on each network afresh (at most every few seconds, see route-health.ts).
  const source =
    loaded.source && settlement
      ? {
          ...loaded.source,
          render: async () => {
            await settlement.report();
            return loaded.source!.render();
          },
        }
      : loaded.source;
  const drain = createDrain();
  // The 402's Bazaar extension, built from the discovery data: at once when the registry holds the
  // data, else when its loader has imported it (startServer waits for that before it listens).
  let bazaar: BazaarDeclarations | undefined;
  const bazaarFrom = (data: DiscoveryData) =>
    (bazaar = createBazaar(agent.capabilities, data, {
      logger,
      maxDeadlineSeconds: config.maxDeadlineSeconds,
    }));
  let ready: Promise<void> = Promise.resolve();
  if (!config.devMode) {
    if (agent.discovery) bazaarFrom(agent.discovery);
    else if (agent.loadDiscovery)
      ready = agent.loadDiscovery().then(
        (data) => void bazaarFrom(data),
        (err: unknown) =>
          logger.error("discovery data did not load: 402s carry no Bazaar extension", {
            error: err instanceof Error ? err.message : String(err),
          }),
      );
  }
  const gate = config.devMode
    ? undefined
    : createPaymentGate(config.payment, {
        exclusive: ledger.exclusive.bind(ledger),
        logger,
        ...((agent.discovery || agent.loadDiscovery) && {
          discovery: (capability: Capability, now?: number) => bazaar?.(capability, now),
        }),
      });
  const services: JobServices = { agent, config, gate, ledger, metrics, drain };
  if (gate) {
    loadPaidJobs().catch(() => undefined); // now, off the request path; a failure shows on the first paid job
    // Settlements sent but not confirmed are resolved from the chain (jobs/reconcile.ts).
    import("./jobs/reconcile.js").then(
      (m) => m.startReconciler({ ...services, gate }, logger, config.reconcileSeconds * 1000),
      () => undefined,
    );
  }

  if (config.devMode)
    logger.warn(
      "DEV MODE: payment verification is bypassed; anyone can run jobs for free. Never enable it in production.",
    );
  else {
    logger.info(describePayments(config.payment));
    logger.info(ledger.describe());
  }

  const app = express();
  app.locals.runtime = {
    config,
    logger,
    ledger,
    drain,
    metrics: source,
    ready,
    settlement,
  } satisfies AppRuntime;
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(requestIds());
  app.use(cors(config.corsOrigin));

  app.get("/health", async (_req, res) => {
    const problems: string[] = [];
    if (drain.stopping) problems.push("shutting down");
    const [ledgerUp, routes] = await Promise.all([
      config.devMode || ledger.ping().catch(() => false),
      settlement?.report(),
    ]);
    if (!ledgerUp)
      problems.push("payment ledger unreachable: paid jobs are refused until it is back");
    problems.push(...(routes?.problems ?? []));
    const status = problems.length === 0 ? "ok" : "degraded";
    res
      .status(problems.length === 0 ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json({
        name: agent.name,
        version: agent.version,
        status,
        ...(problems.length ? { problems } : {}),
        // With several networks: each one's route, by CAIP-2 id (route-health.ts).
        ...(routes?.networks && { networks: routes.networks }),
      });
  });

  const about = {
    service_version: SERVICE_VERSION,
    name: agent.name,
    capabilities: Object.fromEntries(
      Object.entries(agent.capabilities).map(([name, c]) => [name, c.declaration]),
    ),
  };
  app.get("/about", (_req, res) => {
    res.json(about);
  });

  // GET / for browsers: the console page (console/); CONSOLE=off disables it.
  mountConsole(app, agent, { devMode: config.devMode, serviceVersion: SERVICE_VERSION });

  mountDiscovery(app, createDiscovery(agent, config), config, logger);

  if (source && config.metrics?.token)
    app.get("/metrics", metricsRoute(source, config.metrics.token));

  const jsonOnly = requireJson(logger);
  // Typed: tsc picks app.post's overload sooner (bench/typecheck.mjs).
  const json: express.RequestHandler = express.json({
    limit: config.maxBodyBytes,
    strict: false,
    type: () => true,
  });
  app.post(
    "/execute",
    (req, res, next) => {
      if (!drain.stopping) return jsonOnly(req, res, next); // 415 unless the body says it is JSON
      res.set({ "Retry-After": String(SHUTDOWN_RETRY_AFTER_SECONDS), Connection: "close" });
      refuse(
        logger,
        req,
        res,
        new UnavailableError(
          "the server is shutting down and takes no new jobs; nothing was run or charged; send it again",
          SHUTDOWN_RETRY_AFTER_SECONDS,
        ),
      );
    },
    json,
    async (req, res) => {
      // In flight until answered, even if the caller hung up: a shutdown waits for its settlement
      // and for the answer to be written.
      const leave = drain.enter();
      let answering = false;
      // The caller is gone once the connection closes before the answer was written: a paid job
      // then is not settled (jobs/paid.ts), its answer kept for an identical retry.
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort();
      });
      try {
        const answer = await executeJob(services, {
          body: req.body as unknown,
          header: (name) => req.get(name),
          resourceUrl: () => `${baseUrlOf(config, req)}/execute`, // throws a 400 for an invalid Host
          logger: logger.child({ request_id: res.locals.requestId }),
          callerGone: gone.signal,
        });
        sendAnswer(res, answer, leave);
        answering = true;
      } finally {
        if (!answering) leave();
      }
    },
  );

  mountMcp(app, services, logger); // POST /mcp: every capability as an MCP tool (mcp/)

  for (const path of Object.keys(ROUTES)) app.all(path, methodNotAllowed(path, logger));
  app.use(notFound(logger));
  app.use(errorHandler(logger));
  return app;
}
