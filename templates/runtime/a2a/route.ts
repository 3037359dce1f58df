/**
 * The A2A routes: POST /a2a (JSON-RPC) and /a2a/rest/... (HTTP+JSON: POST /a2a/rest/message:send,
 * GET /a2a/rest/tasks/{id}...), both run by the A2A endpoint (endpoint.ts), imported with the SDK
 * on the first A2A request. Each request runs inside its scope (scope.ts): whether its caller is
 * still connected (its connection closed before the answer was written: a paid job is then not
 * settled, as on POST /execute), its logger and the endpoint's URL: /a2a for both bindings, the
 * resource a task's offer is for (so an offer made on one binding is paid on the other). Refused
 * before the SDK: a request while the server shuts down (503); a body that is not JSON, larger than
 * MAX_BODY_BYTES or nested deeper than /execute accepts (JSON-RPC errors: http/json-rpc-body.ts;
 * the REST binding's shape: rest.ts), and a JSON-RPC body that is no JSON-RPC 2.0 request (-32600). Its A2A
 * version is settled first (negotiate.ts). A2A=off: 404 for both. Part of your project: edit freely.
 */
import type { Express, RequestHandler } from "express";
import { baseUrlOf } from "../http/base-url.js";
import { jsonRpcBody, refuseWhileStopping } from "../http/json-rpc-body.js";
import { A2A_PATH, A2A_REST_PATH } from "../http/paths.js";
import { loadOnce, mountOff } from "../http/transport.js";
import type { JobServices } from "../jobs/services.js";
import type { Logger } from "../types.js";
import type { A2aEndpoint } from "./endpoint.js";
import { jsonRpcEnvelope, negotiateVersion, versionFromMethod } from "./negotiate.js";
import { restBody, restError, restPreflight } from "./rest.js";
import { runInScope } from "./scope.js";

const OFF = "A2A is off on this service (A2A=off): send jobs to POST /execute";

export function mountA2a(app: Express, s: JobServices, logger: Logger): void {
  if (!s.config.a2a.enabled) {
    // /a2a, the REST binding under /a2a/rest and the agent card under both.
    return mountOff(app, `${A2A_PATH}{/*rest}`, logger, OFF);
  }

  const load = loadOnce(() => import("./endpoint.js").then((m) => m.createA2aEndpoint(s, logger)));

  /** Runs one binding of the endpoint on the request, inside its scope. */
  const serve =
    (binding: keyof A2aEndpoint): RequestHandler =>
    async (req, res, next) => {
      const handle = (await load())[binding];
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort();
      });
      const scope = {
        callerGone: gone.signal,
        logger: logger.child({ request_id: res.locals.requestId, transport: "a2a" }),
        resourceUrl: () => `${baseUrlOf(s.config, req)}${A2A_PATH}`,
      };
      if (binding === "jsonRpc") req.url = "/"; // the SDK's handler is a router serving POST /
      runInScope(scope, () => handle(req, res, next));
    };
  // The body: JSON up to MAX_BODY_BYTES and nested no deeper than /execute accepts, else a JSON-RPC
  // error (the SDK's own parser would stop at 100 kB, and a deep body overflow its stack).
  app.post(
    A2A_PATH,
    ...jsonRpcBody(s.config.maxBodyBytes, true),
    refuseWhileStopping(s.drain),
    jsonRpcEnvelope,
    negotiateVersion,
    versionFromMethod,
    serve("jsonRpc"),
  );
  // HTTP+JSON: the SDK's router, mounted at /a2a/rest (it strips the prefix); the same body limits.
  app.options(`${A2A_REST_PATH}/*rest`, restPreflight);
  app.use(
    A2A_REST_PATH,
    ...restBody(s.config.maxBodyBytes),
    refuseWhileStopping(s.drain, restError),
    negotiateVersion,
    serve("rest"),
  );
}
