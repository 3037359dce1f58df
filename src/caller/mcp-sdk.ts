/**
 * The official MCP SDK client (@modelcontextprotocol/sdk: Client over the Streamable HTTP transport), as
 * `create-agent call --mcp` uses it (mcp-send.ts). Like the x402 client (payment.ts), the SDK is a
 * devDependency of create-agent: it would add about 23 MB (88 packages: zod, hono, express, ...) to the
 * light install, whose other users never speak MCP. So it is loaded with a dynamic import() only when
 * --mcp is given, and a missing one is reported before anything is sent, with the command that installs
 * it. In a generated project with the `mcp` feature (`npm run call -- --mcp ...`) it is already there.
 * Its shapes are typed here, not imported (the light install builds without it);
 * test/cli/call-x402-types.test.ts checks that the real package still fits them.
 */
import { dependencies } from "../versions.js";
import { CallError } from "./errors.js";
import { loadFailure, toolRoot } from "./payment.js";
import { shellQuote } from "../shell-quote.js";

/** The x402 v2 MCP transport's `_meta` keys (templates/runtime/mcp/payment.ts, the same names). */
export const MCP_PAYMENT_META_KEY = "x402/payment";
export const MCP_PAYMENT_RESPONSE_META_KEY = "x402/payment-response";

/** A tools/call result (MCP CallToolResult), as far as `call` reads it. */
export interface McpToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: unknown;
}

/** A request's options: the attempt's time limit (retry.ts), and the SDK's own timeout set above it. */
export interface McpRequestOptions {
  signal?: AbortSignal;
  timeout?: number;
}

export interface McpClient {
  connect(transport: unknown, options?: McpRequestOptions): Promise<void>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<McpToolResult>;
  close(): Promise<void>;
}

export interface McpSdk {
  Client: new (info: { name: string; version: string }) => McpClient;
  StreamableHTTPClientTransport: new (
    url: URL,
    options?: { fetch?: typeof fetch; requestInit?: RequestInit },
  ) => unknown;
}

/** `npm install --no-save @modelcontextprotocol/sdk@…`, the version create-agent is tested with. */
export function mcpInstallCommand(): string {
  return `npm install --no-save @modelcontextprotocol/sdk@${dependencies["@modelcontextprotocol/sdk"]}`;
}

/** Loads the official MCP client, or says exactly how to install it (before anything is sent). */
export async function loadMcpSdk(
  importer: (specifier: string) => Promise<unknown> = (specifier) => import(specifier),
): Promise<McpSdk> {
  try {
    const [client, http] = (await Promise.all([
      importer("@modelcontextprotocol/sdk/client/index.js"),
      importer("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    ])) as [Pick<McpSdk, "Client">, Pick<McpSdk, "StreamableHTTPClientTransport">];
    return {
      Client: client.Client,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    };
  } catch (error) {
    throw new CallError(
      "usage",
      `--mcp: the MCP client create-agent speaks MCP with (@modelcontextprotocol/sdk) ${loadFailure(error)}; nothing was sent. Install it in the create-agent folder:\n  cd ${shellQuote(toolRoot())} && ${mcpInstallCommand()}\n(or call without --mcp: POST /execute runs the same jobs at the same prices)`,
    );
  }
}
