/**
 * `create-agent call --mcp`: the job request call.ts writes for POST /execute, carried instead as an MCP
 * tools/call (x402 v2 MCP transport) by the official MCP SDK client over Streamable HTTP (mcp-sdk.ts), and
 * its answer handed back as the HTTP answer /execute gives. It is a fetch, the one call.ts sends every
 * attempt through, so all around it stays call's own, unchanged: the retrying fetch (retry.ts: a lost
 * answer re-sends the identical call, the same signed payment), the official x402 client and the guards
 * that check an offer before anything is signed and the payment before it leaves (call-pay.ts), the
 * receipt. Nothing here signs or chooses: a payment is forwarded exactly as it was checked.
 *
 *   request   {job_id, task: {capability, input}, deadline} -> tools/call {name, arguments, _meta: {job_id,
 *             deadline}}; its PAYMENT-SIGNATURE (x402 v2) -> _meta["x402/payment"], the PaymentPayload
 *   answer    a result -> 200 {job_id, output}, its _meta["x402/payment-response"] as PAYMENT-RESPONSE;
 *             isError with an x402 v2 PaymentRequired -> 402 with it as PAYMENT-REQUIRED (and as the body:
 *             a refusal's `error`, e.g. "in use", stays readable); isError with the spec's error body -> that
 *             body (402 for a payment error; with _meta.retry_after_seconds, the 429, 503 or 402 ("in use",
 *             "settlement unconfirmed") with Retry-After /execute sends: retry.ts waits it out); a JSON-RPC
 *             error -> its error object; each marked in the MCP_ANSWER header for mcpErrorAnswer. An HTTP
 *             refusal of the POST itself (403, 404, a 503 with Retry-After, a redirect) is handed back as it
 *             is, so retry.ts treats it as over HTTP.
 * Every answer is read up to ANSWER_LIMITS.result (guard-read.ts) before the SDK sees it.
 */
import { errorAnswer, sentNote } from "./call-answer.js";
import { CallError } from "./errors.js";
import { ANSWER_LIMITS, readLimited } from "./guard-read.js";
import { decodeBase64Json, isObjectRecord, type SignedPayment } from "./guard.js";
import { saysInUse, saysUnconfirmed } from "./retry.js";
import {
  MCP_PAYMENT_META_KEY,
  MCP_PAYMENT_RESPONSE_META_KEY,
  type McpSdk,
  type McpToolResult,
} from "./mcp-sdk.js";

/** Marks what an answer of mcpSend is: a tool's "result" or "tool-error", or an "rpc-error". */
export const MCP_ANSWER = "x-create-agent-mcp-answer";
/** A refusal's `_meta` key: seconds before the identical call may be sent again (the runtime's mcp/call.ts). */
const RETRY_AFTER_META_KEY = "retry_after_seconds";
/** The SDK's own request timeout, kept above every attempt's (retry.ts's signal ends an attempt). */
const SDK_TIMEOUT_MS = 24 * 60 * 60 * 1000;
/** The HTTP status of each of the spec's error types, as POST /execute answers them (for retry.ts). */
const STATUS: Record<string, number> = { validation: 400, payment: 402, deadline: 408 };

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
const answer = (
  status: number,
  body: unknown,
  kind: string,
  headers: Record<string, string> = {},
) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", [MCP_ANSWER]: kind, ...headers },
  });

/** A fetch that sends call.ts's job request to `url` (the service's /mcp) as one tools/call. */
export function mcpSend(sdk: McpSdk, fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const job = JSON.parse(await request.text()) as {
      job_id: string;
      task: { capability: string; input: Record<string, unknown> };
      deadline: number;
    };
    const payment = paymentOf(request.headers);
    const signal = init?.signal ?? undefined;
    const refused: { response?: Response } = {};
    const transport = new sdk.StreamableHTTPClientTransport(new URL(request.url), {
      fetch: readingFetch(fetchImpl, refused, signal),
      // Never followed: a job and its payment go to the service's own address only (retry.ts).
      requestInit: { redirect: "manual" },
    });
    const client = new sdk.Client({ name: "create-agent-call", version: "1" });
    const options = { timeout: SDK_TIMEOUT_MS, ...(signal ? { signal } : {}) };
    const meta = { job_id: job.job_id, deadline: job.deadline };
    try {
      await client.connect(transport, options);
      const result = await client.callTool(
        {
          name: job.task.capability,
          arguments: job.task.input,
          _meta: payment === undefined ? meta : { ...meta, [MCP_PAYMENT_META_KEY]: payment },
        },
        undefined,
        options,
      );
      return toolAnswer(result, job.job_id);
    } catch (error) {
      if (refused.response) return refused.response; // the POST itself was refused over HTTP
      if (signal?.aborted) throw signal.reason; // the attempt's time limit: retry.ts decides
      const rpc = rpcError(error);
      if (rpc) return answer(502, { jsonrpc: "2.0", error: rpc }, "rpc-error");
      throw error; // the connection failed (retry.ts re-sends), or the answer is no MCP answer
    } finally {
      await client.close().catch(() => {});
    }
  };
}

/** The x402 v2 PaymentPayload a request carries, decoded; an x402 v1 payment is never sent over MCP. */
function paymentOf(headers: Headers): unknown {
  if (headers.has("x-payment"))
    throw new CallError(
      "payment",
      "an x402 v1 payment cannot be sent over MCP (its transport is x402 v2); it was not sent",
    );
  const header = headers.get("payment-signature");
  return header === null ? undefined : decodeBase64Json(header, "the payment", "signed");
}

/**
 * The fetch the SDK's transport sends through: POST only (no GET stream, no session to end: the
 * server is stateless), every answer read whole up to the limit, and a refusal kept for mcpSend.
 */
function readingFetch(
  fetchImpl: typeof fetch,
  refused: { response?: Response },
  signal: AbortSignal | undefined,
): typeof fetch {
  return async (url, init) => {
    if ((init?.method ?? "GET") !== "POST") return new Response(null, { status: 405 });
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => !!s);
    const response = await fetchImpl(url, { ...init, signal: AbortSignal.any(signals) });
    const where = `the answer to POST ${String(url)}`;
    const data = await readLimited(response, ANSWER_LIMITS.result, where);
    const headers = new Headers(response.headers);
    headers.delete(MCP_ANSWER);
    const copy = () =>
      new Response([101, 204, 205, 304].includes(response.status) ? null : data, {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    if (!response.ok && response.status !== 405) refused.response ??= copy();
    return copy();
  };
}

/** A JSON-RPC error answer (the SDK's McpError), as its error object; else undefined. */
function rpcError(error: unknown): { code: number; message: string } | undefined {
  if (!(error instanceof Error) || error.name !== "McpError") return undefined;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code !== "number") return undefined;
  return { code, message: error.message.replace(/^MCP error -?\d+: /, "") };
}

/** A tool result as /execute's answer (module comment). */
function toolAnswer(result: McpToolResult, jobId: string): Response {
  const body = result.structuredContent ?? textOf(result.content);
  const meta = isObjectRecord(result._meta) ? result._meta : {};
  if (result.isError) {
    if (isObjectRecord(body) && body.x402Version === 2)
      return answer(402, body, "tool-error", { "payment-required": b64(body) });
    const type = isObjectRecord(body) ? body.error_type : undefined;
    const wait = meta[RETRY_AFTER_META_KEY];
    // Refused for now, nothing run or charged: the payer's cap (a payment error) or an outage, the 429
    // or 503 with Retry-After POST /execute sends, which retry.ts waits out (within its limits). But
    // "in use" and "settlement unconfirmed" stay the 402s with Retry-After POST /execute sends too:
    // retry.ts waits those out until the job's deadline, saying why.
    const error = isObjectRecord(body) ? body.error : undefined;
    const held = saysInUse(error) || saysUnconfirmed(error);
    if (typeof wait === "number" && Number.isInteger(wait) && wait > 0)
      return answer(held ? 402 : type === "payment" ? 429 : 503, body ?? null, "tool-error", {
        "retry-after": String(wait),
      });
    return answer((typeof type === "string" && STATUS[type]) || 500, body ?? null, "tool-error");
  }
  const receipt = meta[MCP_PAYMENT_RESPONSE_META_KEY];
  const id = typeof meta.job_id === "string" ? meta.job_id : jobId;
  return answer(
    200,
    { job_id: id, ...(body === undefined ? {} : { output: body }) },
    "result",
    isObjectRecord(receipt) ? { "payment-response": b64(receipt) } : {},
  );
}

/** A result's first text block: its JSON when it is JSON, else the text itself; undefined: none. */
function textOf(content: unknown): unknown {
  const first = Array.isArray(content) ? (content[0] as unknown) : undefined;
  if (!isObjectRecord(first) || typeof first.text !== "string") return undefined;
  try {
    return JSON.parse(first.text) as unknown;
  } catch {
    return first.text;
  }
}

/**
 * The error a non-200 answer of mcpSend means (errorAnswer's counterpart): a tool's error body is typed
 * as it says (no HTTP status: a tool error has none), a JSON-RPC error names its code, and an HTTP
 * refusal of the POST is read as over HTTP, its status shown.
 */
export function mcpErrorAnswer(
  status: number,
  text: string,
  url: string,
  sent?: SignedPayment,
  headers?: Headers,
): CallError {
  const kind = headers?.get(MCP_ANSWER);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const signed = sentNote(sent);
  const rpc = isObjectRecord(body) && isObjectRecord(body.error) ? body.error : undefined;
  if (rpc && typeof rpc.code === "number" && typeof rpc.message === "string") {
    const from = kind ? `${url}` : `HTTP ${status} from POST ${url}`;
    return new CallError(
      rpc.code === -32602 ? "validation" : "service",
      `${from}: JSON-RPC error ${rpc.code}: ${rpc.message}${signed}`,
      { ...(kind ? {} : { status }), error: rpc.message },
    );
  }
  if (kind !== "tool-error") return errorAnswer(status, text, url, sent);
  if (isObjectRecord(body) && typeof body.error_type === "string" && typeof body.error === "string")
    return new CallError(
      body.error_type,
      `MCP tool error ${body.error_type}: ${body.error}${signed}`,
      {
        error: body.error,
      },
    );
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new CallError(
    "service",
    `${url} answered the tools/call with an error that is not the spec's error body (spec 2.5): ${shown}${signed}`,
  );
}
