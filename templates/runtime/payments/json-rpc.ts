/**
 * Plain JSON-RPC 2.0 over fetch, for the few reads the settlement route checks make (EVM: eth_chainId,
 * eth_getBalance, eth_gasPrice; Solana: getGenesisHash, getBalance): no chain client is loaded for them.
 * Part of your project: edit freely.
 */
import { scrubUrl } from "../ops/redact.js";
import { clip, oneLine } from "../ops/text.js";

/**
 * Where a request goes and how (also for @solana/kit's RPC client, svm/scheme.ts): credentials written in the URL (https://user:pass@host/...) become
 * Basic authorization, as viem's http transport sends them (fetch refuses a URL that holds them).
 */
export function request(url: string): { target: URL; headers: Record<string, string> } {
  const target = new URL(url);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (target.username !== "" || target.password !== "") {
    const user = decodeURIComponent(target.username);
    const pass = decodeURIComponent(target.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
    target.username = "";
    target.password = "";
  }
  return { target, headers };
}

/** A call that may succeed later: no answer in time, unreachable, or HTTP 429 or 5xx. */
export class TransientRpcError extends Error {}

/**
 * One JSON-RPC call: its `result`, whatever its type (the caller checks the shape it expects). Throws
 * an Error whose message names what failed (no answer in time, unreachable and why, a JSON-RPC error,
 * an HTTP error or a body without a result), never the URL's user info, path or query (they often hold a
 * password or an API key), even where the node or fetch repeats them.
 */
export async function rpcCall(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
): Promise<unknown> {
  try {
    return await rpcCallUnscrubbed(url, method, params, timeoutMs);
  } catch (err) {
    const message = scrubUrl(err instanceof Error ? err.message : String(err), url);
    throw err instanceof TransientRpcError ? new TransientRpcError(message) : new Error(message);
  }
}

async function rpcCallUnscrubbed(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
): Promise<unknown> {
  let status: number;
  let text: string;
  try {
    const { target, headers } = request(url);
    const res = await fetch(target, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (err instanceof Error && err.name === "TimeoutError")
      throw new TransientRpcError(`no answer to ${method} within ${timeoutMs / 1000} s`);
    const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
    const code = typeof cause?.code === "string" ? cause.code : undefined;
    throw new TransientRpcError(
      `unreachable (${code ?? (cause instanceof Error ? cause.message : String(err))})`,
    );
  }
  let body: { result?: unknown; error?: { message?: unknown } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  if (body?.error !== undefined)
    throw new Error(
      `${method} answered an error: ${clip(oneLine(String(body.error.message)), 200)}`,
    );
  if (status < 200 || status > 299 || body?.result === undefined)
    throw new (status === 429 || status >= 500 ? TransientRpcError : Error)(
      `${method} got HTTP ${status}, not a JSON-RPC result: ${clip(oneLine(text), 200)}`,
    );
  return body.result;
}
