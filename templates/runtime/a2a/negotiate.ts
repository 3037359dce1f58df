/**
 * What POST /a2a and /a2a/rest settle before the SDK reads a request (a2a/route.ts):
 * - its A2A version. The SDK reads only the `A2A-Version` header, and takes a request without one as
 *   0.3 (as the spec says). The spec also lets a client give the version as a request parameter
 *   (`?A2A-Version=1.0`), which is copied to the header here. And a JSON-RPC request with neither,
 *   whose method is one of 1.0's (SendMessage, GetTask...: every 0.3 method has a slash, message/send,
 *   tasks/get), can only mean 1.0: it is read as 1.0 instead of answered "method not found".
 * - the JSON-RPC envelope: `jsonrpc: "2.0"`, a string `method`, an `id` that is a string, an integer
 *   or null. Anything else is -32600 Invalid Request, as JSON-RPC 2.0 says (the SDK's 1.0 handler
 *   answers -32602 invalid params, and echoes an id of any type). Nothing runs for a refused request.
 * Part of your project: edit freely.
 */
import type { RequestHandler } from "express";
import { rpcError } from "../http/json-rpc-body.js";
import { isObject } from "../ops/json-object.js";

const VERSION_HEADER = "a2a-version";
/** A 1.0 JSON-RPC method name (SendMessage, GetTask, ListTasks...); 0.3's are message/send, tasks/get. */
const V1_METHOD = /^[A-Z][A-Za-z]*$/;

/** Sets the request's A2A version from `?A2A-Version=` when no header gives it (both bindings). */
export const negotiateVersion: RequestHandler = (req, _res, next) => {
  const asked = req.query["A2A-Version"];
  if (req.headers[VERSION_HEADER] === undefined && typeof asked === "string")
    req.headers[VERSION_HEADER] = asked;
  next();
};

/** JSON-RPC, after negotiateVersion: a request still without a version that names a 1.0 method is 1.0. */
export const versionFromMethod: RequestHandler = (req, _res, next) => {
  const method: unknown = isObject(req.body) ? req.body.method : undefined;
  if (req.headers[VERSION_HEADER] === undefined && typeof method === "string")
    if (V1_METHOD.test(method)) req.headers[VERSION_HEADER] = "1.0";
  next();
};

const validId = (id: unknown): id is string | number | null | undefined =>
  id === undefined || id === null || typeof id === "string" || Number.isSafeInteger(id);

/** Why a body is not a JSON-RPC 2.0 request, or undefined. */
function envelopeProblem(body: unknown): string | undefined {
  if (!isObject(body)) return "the body must be one JSON-RPC request object (A2A takes no batches)";
  if (body.jsonrpc !== "2.0") return '`jsonrpc` must be "2.0"';
  if (!validId(body.id)) return "`id` must be a string, an integer or null";
  if (typeof body.method !== "string") return "`method` must be a string";
  return undefined;
}

/** -32600 Invalid Request for a body that is not a JSON-RPC 2.0 request (under its id when that is valid). */
export const jsonRpcEnvelope: RequestHandler = (req, res, next) => {
  const problem = envelopeProblem(req.body);
  if (problem === undefined) return next();
  const id: unknown = isObject(req.body) ? req.body.id : undefined;
  const echoed = validId(id) && id !== undefined ? id : null;
  rpcError(res, 200, -32600, `Invalid Request: ${problem}; nothing was run`, echoed);
};
