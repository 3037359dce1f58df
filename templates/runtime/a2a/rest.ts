/**
 * What A2A's HTTP+JSON (REST) binding at /a2a/rest needs besides the SDK's restHandler (route.ts
 * mounts it; endpoint.ts makes it over the same request handler, and so the same checks, as POST
 * /a2a): its body, read before the SDK sees it as /a2a's is (JSON, application/json or
 * application/a2a+json as the SDK takes, up to MAX_BODY_BYTES, nested no deeper than /execute
 * accepts: http/json-rpc-body.ts), refused in the binding's own error shape (a google.rpc.Status
 * `{error: {code, status, message, details}}`, what the SDK answers with); and the CORS preflight
 * of its paths that carry a task id (/a2a/rest/tasks/{id}...), which no fixed route lists.
 * Part of your project: edit freely.
 */
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import { jsonRpcBody } from "../http/json-rpc-body.js";

/** The request headers an A2A client sends (a preflight allows them). */
export const A2A_HEADERS = "A2A-Version, A2A-Extensions, X-A2A-Extensions";

/** google.rpc.Code names of the statuses this binding refuses with (others: INVALID_ARGUMENT). */
const STATUS_NAMES: Record<number, string> = { 503: "UNAVAILABLE", 413: "INVALID_ARGUMENT" };

/** A refused request, in the binding's error shape (the JSON-RPC code is not part of it). */
export function restError(res: Response, status: number, _code: number, message: string): void {
  const name = STATUS_NAMES[status] ?? "INVALID_ARGUMENT";
  res.status(status).json({ error: { code: status, status: name, message, details: [] } });
}

/** The body parser and its refusals. */
export function restBody(maxBodyBytes: number): Array<RequestHandler | ErrorRequestHandler> {
  // strict: false, as the SDK's own: 0.3 clients post a literal `null` to a body-less method.
  const json: RequestHandler = express.json({
    type: ["application/json", "application/a2a+json"],
    limit: maxBodyBytes,
    strict: false,
  });
  // jsonRpcBody's checks (its parser finds the body already read, and skips it).
  return [json, ...jsonRpcBody(maxBodyBytes, true, restError)];
}

/** A preflight of any path under /a2a/rest: its methods and A2A's headers (Allow-Origin: cors.ts). */
export const restPreflight: RequestHandler = (_req, res) => {
  const common = res.getHeader("Access-Control-Allow-Headers");
  res.set({
    "Access-Control-Allow-Methods": "GET, HEAD, POST, OPTIONS",
    "Access-Control-Allow-Headers": common ? `${String(common)}, ${A2A_HEADERS}` : A2A_HEADERS,
    "Access-Control-Max-Age": "600",
  });
  res.status(204).end();
};
