/**
 * The body of a JSON-RPC transport (/mcp, /a2a), read before its SDK sees it: parsed as JSON up to
 * MAX_BODY_BYTES (the limit POST /execute has; the SDKs' own parsers would apply theirs, e.g. 100 kB),
 * and refused as JSON-RPC errors, which is what their clients read: a body that is not JSON (-32700;
 * JSON that is no object or array, e.g. a bare string: -32600),
 * one too large (413, -32600), one nested deeper than POST /execute accepts (-32602 invalid params:
 * jobs/request.ts MAX_NESTING_DEPTH; a deeper one would overflow the SDK's stack). Nothing runs, and
 * nothing is charged, for a refused body. Also their answer while the server shuts down
 * (refuseWhileStopping): 503 with Retry-After, a JSON-RPC error. A transport with another error shape
 * passes its own writer (`answer`: A2A's HTTP+JSON binding, a2a/rest.ts). Part of your project: edit freely.
 */
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import { UnavailableError } from "../errors.js";
import { MAX_NESTING_DEPTH, nestedDeeperThan } from "../jobs/request.js";
import { bodyParserError } from "./transport.js";

/** Seconds a caller is asked to wait before retrying while the server is shutting down. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/** A JSON-RPC error: what a client of a JSON-RPC transport reads from a refused HTTP request. */
export function rpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id });
}

/** How a refused request is answered: its HTTP status, the JSON-RPC error code, message and request id. */
export type Refusal = typeof rpcError;

/** The request id of a parsed JSON-RPC body, when it has one. */
const idOf = (body: unknown): string | number | null => {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

const NOT_AN_OBJECT =
  "Invalid Request: the body is JSON but not a JSON-RPC message (an object) or a batch of them (an array); nothing was run or charged";

/**
 * Whether a body the parser refused is valid JSON all the same: a string, number, boolean or null,
 * which its strict mode will not take. JSON-RPC calls that an invalid request (-32600), not a parse error.
 */
function jsonButNoObject(err: unknown): boolean {
  const body = (err as { body?: unknown }).body;
  const raw = typeof body === "string" ? body.trim() : "";
  if (raw === "" || raw.startsWith("{") || raw.startsWith("[")) return false;
  try {
    JSON.parse(raw);
    return true;
  } catch {
    return false;
  }
}

/**
 * The body parser and its refusals; `nesting`: also refuse a body nested deeper than /execute
 * accepts (a transport that checks each message itself, as /mcp does, leaves it out).
 */
export function jsonRpcBody(
  maxBodyBytes: number,
  nesting: boolean,
  answer: Refusal = rpcError,
): Array<RequestHandler | ErrorRequestHandler> {
  // Typed: tsc resolves app.post's overloads faster.
  const json: RequestHandler = express.json({ limit: maxBodyBytes });
  const badBody: ErrorRequestHandler = (err: unknown, _req, res, next) => {
    const type = typeof err === "object" && err !== null && "type" in err ? err.type : undefined;
    if (type === "entity.parse.failed")
      return jsonButNoObject(err)
        ? answer(res, 400, -32600, NOT_AN_OBJECT)
        : answer(res, 400, -32700, "Parse error: the body is not valid JSON");
    if (type === "entity.too.large")
      return answer(res, 413, -32600, `request body is larger than ${maxBodyBytes} bytes`);
    // A body that cannot be read (does not decompress, an unsupported encoding or charset).
    const unreadable = bodyParserError(err);
    if (unreadable)
      return answer(res, unreadable.status, -32700, `Parse error: ${unreadable.message}`);
    next(err);
  };
  const deep: RequestHandler = (req, res, next) => {
    if (!nestedDeeperThan(req.body, MAX_NESTING_DEPTH)) return next();
    answer(
      res,
      400,
      -32602,
      `Invalid params: the request is nested more than ${MAX_NESTING_DEPTH} levels deep (POST /execute refuses the same); flatten the input; nothing was run or charged`,
      idOf(req.body),
    );
  };
  return nesting ? [json, badBody, deep] : [json, badBody];
}

/** While the server shuts down (`drain.stopping`): 503 with Retry-After, nothing run or charged. */
export function refuseWhileStopping(
  drain: { readonly stopping: boolean },
  answer: Refusal = rpcError,
): RequestHandler {
  return (_req, res, next) => {
    if (!drain.stopping) return next();
    const { message } = new UnavailableError(
      "the server is shutting down and takes no new requests; nothing was run or charged; send it again",
      SHUTDOWN_RETRY_AFTER_SECONDS,
    );
    res.set({ "Retry-After": String(SHUTDOWN_RETRY_AFTER_SECONDS), Connection: "close" });
    answer(res, 503, -32000, message);
  };
}
