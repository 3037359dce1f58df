/**
 * What POST /mcp checks in a JSON-RPC body before the MCP SDK sees it (mcp/route.ts), so that nothing
 * runs, and nothing is charged, for a body it refuses:
 * - a batch (a JSON array of messages) holds at most MAX_BATCH_MESSAGES messages, no two requests
 *   with the same id (the SDK would run both and answer one: two paid calls, two charges, one
 *   answer), and at most MAX_LISTS_PER_BATCH tools/list (each answer is the whole tool list, so a
 *   batch of them would turn a small request into a large answer);
 * - no message nests objects or arrays deeper than /execute accepts (jobs/request.ts
 *   MAX_NESTING_DEPTH, counted from the message as /execute counts from its body): -32602 invalid
 *   params, as /execute answers 400;
 * - a tools/call has params {name: string, arguments?: object, _meta?: object}: -32602 invalid
 *   params naming what is wrong (the SDK would answer -32603 with its schema library's dump); and
 *   no key "__proto__" anywhere in them: the SDK's schema library drops it, so the job would run on
 *   other input than the caller sent (POST /execute keeps it as data).
 * - every message is a JSON-RPC 2.0 message: `jsonrpc: "2.0"`, and a string `method` (a request or a
 *   notification, its `id`, if any, a string or a number) or an `id` with a `result` or an `error` (a
 *   response): else -32600 Invalid Request, as JSON-RPC says (the SDK answers -32700 parse error).
 * Part of your project: edit freely.
 */
import { MAX_NESTING_DEPTH, nestedDeeperThan } from "../jobs/request.js";
import { isObject } from "../ops/json-object.js";
import { quote } from "../ops/text.js";

/** Most messages in one JSON-RPC batch. */
export const MAX_BATCH_MESSAGES = 20;
/** Most tools/list requests in one JSON-RPC batch. */
export const MAX_LISTS_PER_BATCH = 1;

/** JSON-RPC error codes used here. */
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** A refused body: the HTTP status, the JSON-RPC answer, and the reason to log. */
export interface RpcRefusal {
  status: number;
  body: { jsonrpc: "2.0"; id: string | number | null; error: { code: number; message: string } };
  reason: string;
}

type Id = string | number;
const isId = (id: unknown): id is Id => typeof id === "string" || typeof id === "number";
/** The JSON-RPC messages of a POST body: one, or a batch's. */
export const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);
/** A JSON-RPC request (not a notification or a response): a method and an id. */
const requestId = (m: unknown): Id | undefined =>
  isObject(m) && typeof m.method === "string" && isId(m.id) ? m.id : undefined;

function refusal(status: number, code: number, message: string, id: Id | null = null): RpcRefusal {
  return { status, body: { jsonrpc: "2.0", id, error: { code, message } }, reason: message };
}

/** Why a batch is refused before anything in it runs, or undefined. */
function batchProblem(batch: unknown[]): RpcRefusal | undefined {
  if (batch.length > MAX_BATCH_MESSAGES)
    return refusal(
      400,
      INVALID_REQUEST,
      `Invalid Request: a batch holds at most ${MAX_BATCH_MESSAGES} messages (this one has ${batch.length}); nothing in it was run or charged: send fewer at a time`,
    );
  const ids = new Set<string>();
  let lists = 0;
  for (const message of batch) {
    const id = requestId(message);
    if (id === undefined) continue;
    // 1 and "1" count as the same id: a client matching answers by id may well confuse them.
    if (ids.has(String(id)))
      return refusal(
        400,
        INVALID_REQUEST,
        `Invalid Request: two requests in this batch have the id ${quote(id, 80)}; nothing in it was run or charged: give every request of a batch its own id`,
      );
    ids.add(String(id));
    if ((message as { method: string }).method === "tools/list" && ++lists > MAX_LISTS_PER_BATCH)
      return refusal(
        400,
        INVALID_REQUEST,
        `Invalid Request: a batch holds at most ${MAX_LISTS_PER_BATCH} tools/list request; nothing in it was run or charged`,
      );
  }
  return undefined;
}

const tooDeep = (what: string): string =>
  `Invalid params: ${what} is nested more than ${MAX_NESTING_DEPTH} levels deep (POST /execute refuses the same); flatten the tool's arguments; nothing was run or charged`;

/** Why a tools/call's params are not {name: string, arguments?: object, _meta?: object}, or undefined. */
function callProblem(message: unknown): string | undefined {
  if (!isObject(message) || message.method !== "tools/call") return undefined;
  const { params } = message;
  const wrong = !isObject(params)
    ? "params must be an object"
    : typeof params.name !== "string"
      ? "params.name must be the tool's name (a string)"
      : params.arguments !== undefined && !isObject(params.arguments)
        ? "params.arguments must be an object of the tool's input fields"
        : params._meta !== undefined && !isObject(params._meta)
          ? "params._meta must be an object"
          : holdsKey(params, PROTO)
            ? `a key named "${PROTO}" in params, which the MCP SDK drops (the job would run on other input than sent): rename it, or send the job to POST /execute`
            : undefined;
  return wrong && `Invalid params: tools/call: ${wrong}; nothing was run or charged`;
}

/** The key JSON.parse keeps as data and the SDK's schema library drops (it would set a prototype). */
const PROTO = "__proto__";

/** Whether an object in `value` has the own key `key` (depth already bounded: messageProblem). */
function holdsKey(value: unknown, key: string): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (!Array.isArray(value) && Object.hasOwn(value, key)) return true;
  return Object.values(value).some((child) => holdsKey(child, key));
}

/** Why a message is no JSON-RPC 2.0 message, or undefined. */
function envelopeProblem(m: unknown): string | undefined {
  const wrong = !isObject(m)
    ? "a message must be a JSON-RPC object"
    : m.jsonrpc !== "2.0"
      ? '`jsonrpc` must be "2.0"'
      : typeof m.method === "string"
        ? m.id === undefined || isId(m.id)
          ? undefined
          : "`id` must be a string or a number"
        : isId(m.id) && ("result" in m || "error" in m)
          ? undefined
          : "a message needs a string `method` (or, as a response, an `id` and a `result` or `error`)";
  return wrong && `Invalid Request: ${wrong}; nothing was run or charged`;
}

/** Why one message is refused (its reason), or undefined. */
function messageProblem(message: unknown, what: string): string | undefined {
  return nestedDeeperThan(message, MAX_NESTING_DEPTH) ? tooDeep(what) : callProblem(message);
}

/** Why a JSON-RPC body (one message or a batch) is refused before the SDK reads it, or undefined. */
export function checkMessages(body: unknown): RpcRefusal | undefined {
  const notRpc = messagesOf(body)
    .map(envelopeProblem)
    .find((p) => p !== undefined);
  if (notRpc) return refusal(400, INVALID_REQUEST, notRpc);
  if (!Array.isArray(body)) {
    const problem = messageProblem(body, "the request");
    if (problem === undefined) return undefined;
    // A request gets its error under its own id (HTTP 200, as every JSON-RPC error of a request).
    const id = requestId(body);
    return id === undefined
      ? refusal(400, INVALID_PARAMS, problem.replace("the request", "the message"))
      : refusal(200, INVALID_PARAMS, problem, id);
  }
  const problem = batchProblem(body);
  if (problem) return problem;
  for (const message of body) {
    const wrong = messageProblem(message, "a message of this batch");
    if (wrong) return refusal(400, INVALID_PARAMS, wrong);
  }
  return undefined;
}
