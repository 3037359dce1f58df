/**
 * The /a2a route: POST runs the A2A endpoint (endpoint.ts), imported with the SDK on the first A2A
 * request. Each request runs inside its scope (scope.ts): whether its caller is still connected
 * (its connection closed before the answer was written: a paid job is then not settled, as on
 * POST /execute), its logger and the endpoint's URL. Refused before the SDK: a request while the
 * server shuts down (503); a body that is not JSON, larger than MAX_BODY_BYTES or nested deeper
 * than /execute accepts (JSON-RPC errors: http/json-rpc-body.ts). A2A=off: 404. Part of your project: edit freely.
 */
import type { Express, RequestHandler } from "express";
import { baseUrlOf } from "../http/base-url.js";
import { jsonRpcBody, refuseWhileStopping } from "../http/json-rpc-body.js";
import { A2A_PATH } from "../http/paths.js";
import { loadOnce, mountOff } from "../http/transport.js";
import type { JobServices } from "../jobs/services.js";
import type { Logger } from "../types.js";
import { runInScope } from "./scope.js";

export function mountA2a(app: Express, s: JobServices, logger: Logger): void {
  if (!s.config.a2a.enabled)
    return mountOff(
      app,
      A2A_PATH,
      logger,
      "A2A is off on this service (A2A=off): send jobs to POST /execute",
    );

  const load = loadOnce(() => import("./endpoint.js").then((m) => m.createA2aEndpoint(s, logger)));

  const serve: RequestHandler = async (req, res, next) => {
    const handle = await load();
    const gone = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    const scope = {
      callerGone: gone.signal,
      logger: logger.child({ request_id: res.locals.requestId, transport: "a2a" }),
      resourceUrl: () => `${baseUrlOf(s.config, req)}${A2A_PATH}`,
    };
    req.url = "/"; // the SDK's handler is a router serving POST /
    runInScope(scope, () => handle(req, res, next));
  };
  // The body: JSON up to MAX_BODY_BYTES and nested no deeper than /execute accepts, else a JSON-RPC
  // error (the SDK's own parser would stop at 100 kB, and a deep body overflow its stack).
  app.post(
    A2A_PATH,
    ...jsonRpcBody(s.config.maxBodyBytes, true),
    refuseWhileStopping(s.drain),
    serve,
  );
}
