/**
 * Plain JSON-RPC 2.0 over fetch, for the few reads the settlement route checks make (EVM: eth_chainId,
 * eth_getBalance, eth_gasPrice; Solana: getGenesisHash, getBalance): no chain client is loaded for them.
 * Part of your project: edit freely.
 */
import { clip, oneLine } from "../ops/text.js";

/**
 * One JSON-RPC call: its `result`, whatever its type (the caller checks the shape it expects). Throws
 * an Error whose message names what failed (no answer in time, unreachable and why, a JSON-RPC error,
 * an HTTP error or a body without a result), never the URL's path or query (they often hold an API key).
 */
export async function rpcCall(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
): Promise<unknown> {
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      redirect: "error",
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (err instanceof Error && err.name === "TimeoutError")
      throw new Error(`no answer to ${method} within ${timeoutMs / 1000} s`);
    const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
    const code = typeof cause?.code === "string" ? cause.code : undefined;
    throw new Error(
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
    throw new Error(
      `${method} got HTTP ${status}, not a JSON-RPC result: ${clip(oneLine(text), 200)}`,
    );
  return body.result;
}
