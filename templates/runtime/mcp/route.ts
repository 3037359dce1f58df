/**
 * The /mcp route: POST runs the MCP endpoint (endpoint.ts), which is imported, with the MCP SDK,
 * on the first MCP request, so a service that is never called over MCP never loads it. GET and
 * DELETE answer 405 (app.ts, from this transport's routes: transport.ts): the endpoint is
 * stateless, with no stream or session to open or close. MCP=off: 404. Before the SDK sees a request: the Host check
 * (http/host-check.ts), the body's JSON, and its batch and nesting limits (messages.ts); each refusal
 * is a JSON-RPC error, logged. Part of your project: edit freely.
 */
import type express from "express";
import type { Express, RequestHandler } from "express";
import { MCP_PATH } from "../http/paths.js";
import { createHostCheck } from "../http/host-check.js";
import { jsonRpcBody, refuseWhileStopping, rpcError } from "../http/json-rpc-body.js";
import { requestIdOf } from "../http/request-id.js";
import { loadOnce, mountOff } from "../http/transport.js";
import type { JobServices } from "../jobs/services.js";
import { clip } from "../ops/text.js";
import type { Logger } from "../types.js";
import { checkMessages } from "./messages.js";

export function mountMcp(app: Express, s: JobServices, logger: Logger): void {
  if (!s.config.mcp.enabled)
    return mountOff(
      app,
      MCP_PATH,
      logger,
      "MCP is off on this service (MCP=off): send jobs to POST /execute",
    );
  const load = loadOnce(() => import("./endpoint.js").then((m) => m.createMcpEndpoint(s, logger)));

  const open = refuseWhileStopping(s.drain);

  const serve: RequestHandler = async (req, res) => {
    const handle = await load();
    await handle(req, res);
  };
  // The body: JSON up to MAX_BODY_BYTES, else a JSON-RPC error (nesting: checked per message below).
  const body = jsonRpcBody(s.config.maxBodyBytes, false);
  const { host, messages } = guards(s, logger);
  app.post(MCP_PATH, open, host, ...body, messages, serve);
}

/**
 * The checks before the SDK: the Host header (before the body is read), then the JSON-RPC body's
 * batch and nesting limits. Each refusal gets one log line, as http/transport.ts's refuse() writes.
 */
function guards(
  s: JobServices,
  logger: Logger,
): { host: RequestHandler; messages: RequestHandler } {
  const logRefusal = (
    req: express.Request,
    res: express.Response,
    status: number,
    reason: string,
  ) =>
    logger.info("request refused", {
      request_id: requestIdOf(res),
      method: clip(req.method, 20),
      path: clip(req.path, 200),
      status,
      host: clip(req.headers.host ?? "", 200),
      reason: clip(reason, 500),
    });

  const hostProblem = createHostCheck(s.config);
  const host: RequestHandler = (req, res, next) => {
    const problem = hostProblem(req.headers.host);
    if (problem === undefined) return next();
    logRefusal(req, res, 403, problem);
    rpcError(res, 403, -32000, problem);
  };

  const messages: RequestHandler = (req, res, next) => {
    const refused = checkMessages(req.body as unknown);
    if (refused === undefined) return next();
    logRefusal(req, res, refused.status, refused.reason);
    res.status(refused.status).json(refused.body);
  };
  return { host, messages };
}
