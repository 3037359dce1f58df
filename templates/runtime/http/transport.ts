/**
 * Transport errors, answered in the spec's error shape: a body that is not JSON or too large,
 * a wrong Content-Type, an unknown path or method, and anything unexpected (never leaking details).
 * Each is logged ("request refused", at info) with its request id, client address (req.ip: see
 * ops/trust-proxy.ts), method, path, status and reason. Also what every transport's route does: answer
 * 404 when its setting turns it off (mountOff), and load its endpoint on first use (loadOnce); and
 * what Node refuses before Express (answerClientErrors).
 * Part of your project: edit freely.
 */
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from "express";
import { type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import {
  AgentError,
  GENERIC_INTERNAL_MESSAGE,
  ValidationError,
  errorBody,
  errorResponse,
} from "../errors.js";
import { afterLogs } from "../ops/logger.js";
import { clip, quote } from "../ops/text.js";
import type { Logger } from "../types.js";
import type { TransportRoute } from "../transport.js";
import { requestIdOf } from "./request-id.js";

/** The reason logged for a refused request is clipped to this many characters. */
const MAX_LOGGED_REASON = 500;

export function sendError(res: Response, err: ValidationError): void {
  const { status, body } = errorResponse(err);
  res.status(status).json(body);
}

/** sendError, plus one log line saying which request was refused and why. */
export function refuse(logger: Logger, req: Request, res: Response, err: AgentError): void {
  const { status, body } = errorResponse(err);
  logger.info("request refused", {
    request_id: requestIdOf(res),
    client: req.ip,
    method: clip(req.method, 20),
    path: clip(req.path, 200),
    status,
    reason: clip(body.error, MAX_LOGGED_REASON),
  });
  afterLogs(() => res.status(status).json(body)); // after its log line (see ops/logger.ts)
}

/** A transport switched off by its setting: every request to `path` is refused, 404 with `message`. */
export function mountOff(app: Express, path: string, logger: Logger, message: string): void {
  app.all(path, (req, res) =>
    refuse(logger, req, res, new ValidationError(message, { status: 404 })),
  );
}

/**
 * `create`'s result, made on the first call (so a transport's SDK loads only when it is first used) and
 * kept; a failed attempt is forgotten, so the next request tries again.
 */
export function loadOnce<T>(create: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= create().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    }));
}

/**
 * Maps body-parser's errors (they carry `type` and `status`; a body that does not decompress carries
 * zlib's `errno` instead) to validation errors.
 */
export function bodyParserError(err: unknown): ValidationError | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const message =
    "message" in err && typeof err.message === "string" ? err.message.slice(0, 200) : "";
  if ("errno" in err && "status" in err && err.status === 400 && !("type" in err))
    return new ValidationError(
      `request body does not decompress as its Content-Encoding says: ${message}`,
    );
  if (!("type" in err) || typeof err.type !== "string") return undefined;
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

/**
 * Express marks a path parameter it cannot percent-decode (`/jobs/%E0`) as a URIError with status 400:
 * the client's mistake, answered 400 naming the path, not logged as a server fault.
 */
function malformedPath(err: unknown, req: Request): ValidationError | undefined {
  if (!(err instanceof URIError) || !("status" in err) || err.status !== 400) return undefined;
  return new ValidationError(
    `malformed percent-encoding in the path ${quote(req.path, 200)}: nothing was run or charged`,
  );
}

/** 415 unless the request says it carries JSON (checked before the body is read). */
export function requireJson(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const type = req.headers["content-type"];
    if (type === "application/json") return next(); // what nearly every client sends
    if (type?.split(";")[0]?.trim().toLowerCase() === "application/json") return next();
    const got = type ? quote(type, 80) : "none";
    refuse(
      logger,
      req,
      res,
      new ValidationError(`Content-Type must be application/json (got ${got})`, { status: 415 }),
    );
  };
}

/** Known path, wrong method: 405 with the methods that do work. */
export function methodNotAllowed(route: TransportRoute, logger: Logger): RequestHandler {
  const { path, methods: allow } = route;
  return (req, res) => {
    res.set("Allow", allow);
    refuse(
      logger,
      req,
      res,
      new ValidationError(`method ${req.method} is not allowed on ${path}; use ${allow}`, {
        status: 405,
      }),
    );
  };
}

/** An unknown path: 404 naming the endpoints this instance serves (`served`: none a setting turned off). */
export function notFound(logger: Logger, served: readonly TransportRoute[]): RequestHandler {
  const endpoints = served
    .map(({ path, methods }) => `${methods.split(",")[0]} ${path}`)
    .join(", ");
  return (req, res) => {
    refuse(
      logger,
      req,
      res,
      new ValidationError(
        `no route for ${req.method} ${clip(req.path, 200)}; endpoints: ${endpoints}`,
        { status: 404 },
      ),
    );
  };
}

/**
 * Errors from body parsing, a typed refusal a route threw (e.g. a Host that makes no URL,
 * http/base-url.ts), and anything unexpected (logged; the client gets the generic message).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const known = bodyParserError(err) ?? malformedPath(err, req);
    if (known) return refuse(logger, req, res, known);
    if (err instanceof AgentError && err.errorType !== "internal")
      return refuse(logger, req, res, err);
    logger.error("unexpected error handling request", {
      request_id: requestIdOf(res),
      method: req.method,
      path: clip(req.path, 200),
      status: 500,
      reason: GENERIC_INTERNAL_MESSAGE,
      error: err instanceof Error ? err.message : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    res.status(500).json(errorBody("internal", GENERIC_INTERNAL_MESSAGE));
  };
}

/** Node's own refusals of a request it cannot parse: the code it reports -> status and why. */
const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, "request headers are larger than this server reads (16 KiB in all)"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "the request did not arrive in time"],
};

/**
 * A request Node refuses before Express sees it (headers too large, malformed HTTP) is answered in the
 * spec's error shape, where Node's own answer has an empty body. Nothing was run or charged.
 */
export function answerClientErrors(server: Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy();
    const [status, why] = CLIENT_ERRORS[err.code ?? ""] ?? [400, "malformed HTTP request"];
    const body = JSON.stringify(errorBody("validation", `${why}; nothing was run or charged`));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
