/**
 * The parts of the official MCP SDK (@modelcontextprotocol/sdk) that /mcp uses, typed here by small
 * interfaces, and loaded on the first MCP request. The SDK's own type declarations (zod's among them)
 * would add about 90 files and seconds to every `npm run typecheck` of this project, so the SDK is
 * imported through specifiers the compiler does not follow; create-agent's own tests check these
 * interfaces against the real SDK, at the exact version package.json pins.
 * Part of your project: edit freely.
 */
/** What the SDK's request handlers receive besides the request (the subset used here). */
export interface McpRequestExtra {
  /** Aborted when the request is cancelled or its connection closes. */
  signal: AbortSignal;
  /** The request's JSON-RPC id. */
  requestId: string | number;
  /** Sends a notification related to this request (on its response stream). */
  sendNotification(notification: McpNotification): Promise<void>;
}

/** A server-to-client notification (here: notifications/progress). */
export interface McpNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC request as the SDK hands it to a handler, params already checked by its schema. */
export interface McpRequest<P> {
  method: string;
  params: P;
}

/** tools/call's params (MCP 2025-11-25): the tool, its arguments and the request's `_meta`. */
export interface CallToolParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** A tool as tools/list declares it. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: { type: "object"; [keyword: string]: unknown };
  outputSchema?: { type: "object"; [keyword: string]: unknown };
  annotations?: { title?: string; [hint: string]: unknown };
}

/** A tools/call result. */
export interface CallToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The low-level Server (server/index.js): one per request in stateless mode. */
export interface McpServer {
  setRequestHandler(
    schema: McpRequestSchema,
    handler: (request: McpRequest<any>, extra: McpRequestExtra) => Promise<Record<string, unknown>>,
  ): void;
  connect(transport: McpHttpTransport): Promise<void>;
  close(): Promise<void>;
}

/** The SDK's zod schema of a request method, used only to register a handler for it. */
export type McpRequestSchema = object;

/** StreamableHTTPServerTransport (server/streamableHttp.js) for Node's request and response. */
export interface McpHttpTransport {
  handleRequest(
    req: import("node:http").IncomingMessage,
    res: import("node:http").ServerResponse,
    parsedBody?: unknown,
  ): Promise<void>;
  close(): Promise<void>;
  /** What Server.connect uses (the SDK's Transport). */
  start(): Promise<void>;
  send(message: unknown): Promise<void>;
}

export interface McpSdk {
  Server: new (
    info: { name: string; version: string; description?: string },
    options: { capabilities: { tools: Record<string, never> }; instructions?: string },
  ) => McpServer;
  StreamableHTTPServerTransport: new (options: {
    sessionIdGenerator: undefined;
    enableJsonResponse: boolean;
  }) => McpHttpTransport;
  ListToolsRequestSchema: McpRequestSchema;
  CallToolRequestSchema: McpRequestSchema;
}

/** The SDK's modules that provide McpSdk (paths under @modelcontextprotocol/sdk/). */
export const SDK_MODULES = {
  server: "server/index.js",
  transport: "server/streamableHttp.js",
  types: "types.js",
} as const;

/** Imports one SDK module; a string the compiler does not resolve, so it reads none of its types. */
const load = (path: string): Promise<any> => import(`@modelcontextprotocol/sdk/${path}`);

/** Loads the SDK (the first MCP request does). */
export async function loadSdk(): Promise<McpSdk> {
  const [server, transport, types] = await Promise.all([
    load(SDK_MODULES.server),
    load(SDK_MODULES.transport),
    load(SDK_MODULES.types),
  ]);
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: transport.StreamableHTTPServerTransport,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
  };
}
