/**
 * The HTTP layer: three endpoints, and every other request answered in the spec's error shape.
 * The job logic itself lives in execute.ts. Part of your project: edit freely.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import { resolveConfig, type AppOptions } from "./ops/config.js";
import { GENERIC_INTERNAL_MESSAGE, ValidationError, errorBody, errorResponse } from "./errors.js";
import { SERVICE_VERSION, executeJob } from "./jobs/pipeline.js";
import { createLogger } from "./ops/logger.js";
import { createPaymentGate, describePayments } from "./payments/gate.js";
import { createMemoryReplayStore } from "./ledger/memory.js";
import type { AgentDefinition } from "./types.js";

export type { AppOptions } from "./ops/config.js";

/** Known paths and their methods (HEAD comes free with GET). */
const ROUTES: Record<string, string> = {
  "/health": "GET, HEAD",
  "/about": "GET, HEAD",
  "/execute": "POST",
};

/**
 * CORS, so browser apps on other sites can call the service and pay: they send the payment
 * headers, and may read the payment headers of our answers only if they are exposed.
 */
const CORS_HEADERS = {
  "Access-Control-Allow-Headers": "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT",
  "Access-Control-Expose-Headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE",
};

function sendError(res: Response, err: ValidationError): void {
  const { status, body } = errorResponse(err);
  res.status(status).json(body);
}

/** Maps body-parser's errors (they carry `type` and `status`) to validation errors. */
function bodyParserError(err: unknown): ValidationError | undefined {
  if (typeof err !== "object" || err === null || !("type" in err) || typeof err.type !== "string")
    return undefined;
  const message = "message" in err && typeof err.message === "string" ? err.message : "";
  switch (err.type) {
    case "entity.parse.failed":
      return new ValidationError(`request body is not valid JSON: ${message}`);
    case "entity.too.large":
      return new ValidationError(
        `request body is larger than ${"limit" in err ? String(err.limit) : "the limit of"} bytes`,
        { status: 413 },
      );
    case "encoding.unsupported":
    case "charset.unsupported":
      return new ValidationError(`unsupported request body encoding: ${message}`, { status: 415 });
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
    case "stream.not.readable":
      return new ValidationError(`could not read the request body: ${message}`);
    default:
      return undefined;
  }
}

/** 415 unless the request says it carries JSON (checked before the body is read). */
function requireJson(req: Request, res: Response, next: NextFunction): void {
  const type = req.get("content-type");
  if (type?.split(";")[0]?.trim().toLowerCase() === "application/json") return next();
  const got = type ? JSON.stringify(type) : "none";
  sendError(
    res,
    new ValidationError(`Content-Type must be application/json (got ${got})`, { status: 415 }),
  );
}

export function createApp(agent: AgentDefinition, options: AppOptions = {}): express.Express {
  const config = resolveConfig(options); // throws ConfigError listing every problem
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const gate = config.devMode ? undefined : createPaymentGate(config.payment);
  const replayStore = options.replayStore ?? createMemoryReplayStore();

  if (config.devMode)
    logger.warn(
      "DEV MODE: payment verification is bypassed; anyone can run jobs for free. Never enable it in production.",
    );
  else logger.info(describePayments(config.payment));

  const app = express();
  app.disable("x-powered-by");

  app.use((req, res, next) => {
    res.set("Access-Control-Allow-Origin", config.corsOrigin);
    res.set(CORS_HEADERS);
    // Preflight of a known route: 204 with its methods. Unknown paths fall through to the 404.
    if (req.method !== "OPTIONS" || !Object.hasOwn(ROUTES, req.path)) return next();
    res.set("Access-Control-Allow-Methods", `${ROUTES[req.path]}, OPTIONS`);
    res.set("Access-Control-Max-Age", "600");
    res.status(204).end();
  });

  app.get("/health", (_req, res) => {
    res.json({ name: agent.name, version: agent.version, status: "ok" });
  });

  app.get("/about", (_req, res) => {
    const capabilities = Object.fromEntries(
      Object.entries(agent.capabilities).map(([name, c]) => [name, c.declaration]),
    );
    res.json({ service_version: SERVICE_VERSION, name: agent.name, capabilities });
  });

  app.post(
    "/execute",
    requireJson,
    express.json({ limit: config.maxBodyBytes, strict: false, type: () => true }),
    async (req, res) => {
      const base = config.publicUrl ?? `${req.protocol}://${req.get("host")}`;
      const response = await executeJob({
        agent,
        config,
        body: req.body as unknown,
        header: (name) => req.get(name),
        resourceUrl: `${base}/execute`,
        logger,
        replayStore,
        gate,
      });
      res.status(response.status).set(response.headers).json(response.body);
    },
  );

  // Known path, wrong method: 405 with the methods that do work.
  for (const [path, allow] of Object.entries(ROUTES)) {
    app.all(path, (req, res) => {
      res.set("Allow", allow);
      sendError(
        res,
        new ValidationError(`method ${req.method} is not allowed on ${path}; use ${allow}`, {
          status: 405,
        }),
      );
    });
  }

  app.use((req, res) => {
    const endpoints = "GET /health, GET /about, POST /execute";
    sendError(
      res,
      new ValidationError(
        `no route for ${req.method} ${req.path.slice(0, 200)}; endpoints: ${endpoints}`,
        {
          status: 404,
        },
      ),
    );
  });

  // Errors from body parsing, and anything unexpected (never leak details to the client).
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const known = bodyParserError(err);
    if (known) return sendError(res, known);
    logger.error("unexpected error handling request", {
      method: req.method,
      path: req.path,
      error: err instanceof Error ? err.message : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    res.status(500).json(errorBody("internal", GENERIC_INTERNAL_MESSAGE));
  });

  return app;
}
