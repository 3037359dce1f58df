/**
 * The app, composed: the services every job shares (ledger, payment gate, metrics, drain), GET
 * /health and /about, the transports (features.ts's TRANSPORTS: POST /execute in http/execute.ts,
 * MCP, the console page), the discovery documents (discovery/) describing the same transports, and
 * every other request answered in the spec's error shape. The job logic lives in jobs/, payments in
 * payments/, the ledger in ledger/, HTTP details (CORS, transport errors, request ids, draining) in
 * http/, and Prometheus metrics in metrics/ (ops/metrics-loader.ts). Part of your project: edit freely.
 */
import express from "express";
import { compileValidators } from "./ajv.js";
import { loadHandlers } from "./handlers.js";
import { createDiscovery, mountDiscovery, type ServedSurface } from "./discovery/routes.js";
import { TRANSPORTS } from "./features.js";
import { cors, knownRoutes, type Routes } from "./http/cors.js";
import { createDrain, type Drain } from "./http/drain.js";
import { requestIds } from "./http/request-id.js";
import { errorHandler, methodNotAllowed, notFound } from "./http/transport.js";
import { loadPaidJobs, SERVICE_VERSION, type JobServices } from "./jobs/pipeline.js";
import type { Ledger } from "./ledger/ledger.js";
import { selectLedger } from "./ledger/select.js";
import { ConfigError, resolveConfig, type AppOptions, type ResolvedConfig } from "./config.js";
import { createLogger } from "./ops/logger.js";
import { loopbackPublicUrl } from "./ops/config-hosts.js";
import { loadMetrics, type MetricsSource, metricsRoute } from "./ops/metrics-loader.js";
import type { DiscoveryData } from "./discovery/data.js";
import { type BazaarDeclarations, createBazaar } from "./discovery/bazaar.js";
import { createPaymentGate, describePayments, type PaymentGate } from "./payments/gate.js";
import { unpayableDefaults } from "./payments/deadline-fit.js";
import { familyById } from "./payments/families.js";
import { createRouteHealth, type RouteHealth } from "./payments/route-health.js";
import { servedTransports, type Transport } from "./transport.js";
import type { AgentDefinition, Capability, Logger } from "./types.js";

export type { AppOptions } from "./config.js";

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

export function createApp(agent: AgentDefinition, options: AppOptions = {}): express.Express {
  const config = resolveConfig(options); // throws ConfigError listing every problem
  // Production compiles every schema before taking a paid job; dev mode when a capability is first called.
  if (!config.devMode) {
    const problems = compileValidators(agent.capabilities);
    if (problems.length > 0) throw new ConfigError(problems);
    loadHandlers(agent.capabilities).catch(() => undefined); // startServer awaits (and reports) it
  }
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const { services, runtime } = createServices(agent, config, options, logger);

  if (config.devMode)
    logger.warn(
      "DEV MODE: payment verification is bypassed; anyone can run jobs for free. Never enable it in production.",
    );
  else {
    logger.info(describePayments(config.payment));
    for (const warning of unpayableDefaults(servedTransports(TRANSPORTS, config), config))
      logger.warn(warning);
    const local = loopbackPublicUrl(config.publicUrl);
    if (local) logger.warn(local);
    logger.info(services.ledger.describe());
  }

  const app = express();
  app.locals.runtime = runtime;
  app.disable("x-powered-by");
  app.set("etag", false);
  // TRUST_PROXY (ops/trust-proxy.ts): whose X-Forwarded-* make req.ip, req.protocol and req.host.
  app.set("trust proxy", config.trustProxy);
  // One list of transports (features.ts) drives the routes, CORS and the discovery documents.
  const routes = knownRoutes(TRANSPORTS);
  app.use(requestIds());
  app.use(cors(config.corsOrigin, routes));
  mountHealth(app, services, runtime.settlement);
  mountAbout(app, agent);
  const surface = surfaceOf(TRANSPORTS, routes, config);
  const served = [...surface.paths].map((path) => routes.get(path)!);
  services.endpoints = served;
  services.networkFacts = (n) => familyById(n.family).facts(n);
  const discovery = createDiscovery(agent, config, surface);
  const cardPaths = surface.transports.flatMap((t) => t.discovery?.cardPaths ?? []);
  mountDiscovery(app, discovery, config, logger, cardPaths);
  if (runtime.metrics && config.metrics?.token)
    app.get("/metrics", metricsRoute(runtime.metrics, config.metrics.token));
  for (const transport of TRANSPORTS) transport.mount(app, services, logger);
  for (const route of routes.values()) app.all(route.path, methodNotAllowed(route, logger));
  app.use(notFound(logger, served));
  app.use(errorHandler(logger));
  return app;
}

/** The services every job shares, and what startServer needs (AppRuntime). */
function createServices(
  agent: AgentDefinition,
  config: ResolvedConfig,
  options: AppOptions,
  logger: Logger,
): { services: JobServices; runtime: AppRuntime } {
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
  const { gate, ready } = paymentGate(agent, config, ledger, logger);
  const services: JobServices = { agent, config, gate, ledger, metrics, drain };
  if (gate) {
    loadPaidJobs().catch(() => undefined); // now, off the request path; a failure shows on the first paid job
    // Settlements sent but not confirmed are resolved from the chain (jobs/reconcile.ts).
    import("./jobs/reconcile.js").then(
      (m) => m.startReconciler({ ...services, gate }, logger, config.reconcileSeconds * 1000),
      () => undefined,
    );
  }
  const runtime = { config, logger, ledger, drain, metrics: source, ready, settlement };
  return { services, runtime };
}

/**
 * The payment gate (none in dev mode), its 402s carrying the Bazaar extension built from the
 * discovery data: at once when the registry holds the data, else when its loader has imported it
 * (`ready`: startServer waits for that before it listens).
 */
function paymentGate(
  agent: AgentDefinition,
  config: ResolvedConfig,
  ledger: Ledger,
  logger: Logger,
): { gate: PaymentGate | undefined; ready: Promise<void> } {
  if (config.devMode) return { gate: undefined, ready: Promise.resolve() };
  let bazaar: BazaarDeclarations | undefined;
  const bazaarFrom = (data: DiscoveryData) =>
    (bazaar = createBazaar(agent.capabilities, data, {
      logger,
      maxDeadlineSeconds: config.maxDeadlineSeconds,
    }));
  let ready: Promise<void> = Promise.resolve();
  if (agent.discovery) bazaarFrom(agent.discovery);
  else if (agent.loadDiscovery)
    ready = agent.loadDiscovery().then(
      (data) => void bazaarFrom(data),
      (err: unknown) =>
        logger.error("discovery data did not load: 402s carry no Bazaar extension", {
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  const gate = createPaymentGate(config.payment, {
    exclusive: ledger.exclusive.bind(ledger),
    logger,
    ...((agent.discovery || agent.loadDiscovery) && {
      discovery: (capability: Capability, now?: number) => bazaar?.(capability, now),
    }),
  });
  return { gate, ready };
}

/** What the discovery documents describe: the transports served (not off), and their paths. */
function surfaceOf(
  transports: readonly Transport[],
  routes: Routes,
  config: ResolvedConfig,
): ServedSurface {
  const served = servedTransports(transports, config);
  const off = transports.filter((t) => !served.includes(t));
  const offPaths = new Set(off.flatMap((t) => t.routes.map((r) => r.path)));
  return {
    transports: served,
    paths: new Set([...routes.keys()].filter((path) => !offPaths.has(path))),
    unusedSchemas: off.flatMap((t) => t.discovery?.openapiSchemas ?? []),
    off: off.map((t) => t.name),
  };
}

/** GET /health: whether paid jobs can run now (the ledger, each network's settlement route). */
function mountHealth(app: express.Express, s: JobServices, settlement: RouteHealth | undefined) {
  const { agent, config, drain, ledger } = s;
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
}

/** GET /about: the service version, name and each capability's declaration. */
function mountAbout(app: express.Express, agent: AgentDefinition) {
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
}
