/**
 * Serving metrics (the `metrics` feature), opt-in and never public by default: either a route on the app that requires
 * `Authorization: Bearer <token>`, or a separate plain HTTP server meant for a private interface
 * (127.0.0.1 unless configured otherwise). Part of your project: edit freely.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { GENERIC_INTERNAL_MESSAGE, errorBody, type ErrorBody } from "../errors.js";
import type { MetricsServerOptions, MetricsSource } from "../ops/metrics-loader.js";

export type { MetricsServerOptions, MetricsSource };

const ALLOW = "GET, HEAD";

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/**
 * A check of `Authorization: Bearer <token>` in constant time: both sides are hashed first, so the
 * comparison takes the same time whatever the length or content of what the caller sent.
 */
function bearerCheck(token: string): (authorization: string | undefined) => boolean {
  if (typeof token !== "string" || token.length === 0)
    throw new TypeError("the metrics token must be a non-empty string");
  const expected = sha256(token);
  return (authorization) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "");
    const given = sha256(match?.[1] ?? "");
    // Always compare (even when the header is missing) so timing does not tell the cases apart.
    return timingSafeEqual(given, expected) && match !== null;
  };
}

const UNAUTHORIZED = errorBody(
  "validation",
  "metrics require a token: send Authorization: Bearer <token>, with the token this service was configured with",
);

function methodNotAllowed(method: string): ErrorBody {
  return errorBody(
    "validation",
    `method ${method} is not allowed on the metrics endpoint; use GET`,
  );
}

/**
 * Express handler serving the metrics text to GET (and HEAD) requests carrying
 * `Authorization: Bearer <token>`; 401 with `WWW-Authenticate: Bearer` otherwise.
 * Mount it where you like, e.g. `app.get("/metrics", metricsRoute(prometheus, token))`.
 */
export function metricsRoute(source: MetricsSource, token: string): RequestHandler {
  const authorized = bearerCheck(token);
  return async (req, res) => {
    res.set("Cache-Control", "no-store");
    if (!authorized(req.get("authorization"))) {
      res.set("WWW-Authenticate", 'Bearer realm="metrics"');
      res.status(401).json(UNAUTHORIZED);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.set("Allow", ALLOW);
      res.status(405).json(methodNotAllowed(req.method));
      return;
    }
    let text: string;
    try {
      text = await source.render();
    } catch {
      res.status(500).json(errorBody("internal", GENERIC_INTERNAL_MESSAGE));
      return;
    }
    res.status(200).set("Content-Type", source.contentType).send(text);
  };
}

function sendJson(res: ServerResponse, status: number, body: ErrorBody): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  res.end(text);
}

/**
 * A separate plain HTTP server answering GET /metrics with the metrics text (404 on other paths,
 * 405 for other methods on /metrics). Bind it to a private interface: `host` 127.0.0.1 keeps it local.
 * Resolves once listening (`server.address()` tells the port when `port` is 0); rejects if it cannot listen.
 */
export function startMetricsServer(
  source: MetricsSource,
  options: MetricsServerOptions,
): Promise<Server> {
  const authorized = options.token === undefined ? undefined : bearerCheck(options.token);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      return sendJson(
        res,
        404,
        errorBody("validation", "not found; metrics are served at GET /metrics"),
      );
    }
    if (authorized && !authorized(req.headers.authorization)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
      return sendJson(res, 401, UNAUTHORIZED);
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", ALLOW);
      return sendJson(res, 405, methodNotAllowed(req.method ?? ""));
    }
    let text: string;
    try {
      text = await source.render();
    } catch {
      return sendJson(res, 500, errorBody("internal", GENERIC_INTERNAL_MESSAGE));
    }
    res.writeHead(200, {
      "Content-Type": source.contentType,
      "Content-Length": Buffer.byteLength(text),
      "Cache-Control": "no-store",
    });
    res.end(req.method === "HEAD" ? undefined : text);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, errorBody("internal", GENERIC_INTERNAL_MESSAGE));
      else res.destroy();
    });
  });

  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once("error", onError);
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve(server);
    });
  });
}
