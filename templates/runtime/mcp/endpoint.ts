/**
 * POST /mcp behind its route (route.ts): the official SDK's low-level Server over its Streamable
 * HTTP transport, stateless (a Server and a transport per request, no session), answering JSON (an
 * event stream for a call that asks for progress: progress.ts).
 * tools/list lists the capabilities (tools.ts); tools/call runs one as a job (call.ts); an unknown
 * tool is a JSON-RPC error (-32602), as the MCP specification says; a client's notifications/cancelled
 * stops its call (cancel.ts). A client that accepts only JSON
 * (or sends no Accept) is served as well, with JSON. Loaded, with the SDK, when the
 * first MCP request arrives. Part of your project: edit freely.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import { agentDescription } from "../discovery/agent-card.js";
import type { JobServices } from "../jobs/services.js";
import { quote } from "../ops/text.js";
import type { AgentDefinition, Logger } from "../types.js";
import { callTool } from "./call.js";
import { createCancels } from "./cancel.js";
import { devModeResult } from "./dev-output.js";
import { wantsProgress } from "./progress.js";
import {
  loadSdk,
  type CallToolParams,
  type CallToolResult,
  type McpRequest,
  type McpRequestExtra,
} from "./sdk.js";
import { listTools } from "./tools.js";

/** JSON-RPC's "invalid params": what the MCP specification answers for an unknown tool. */
const INVALID_PARAMS = -32602;

/** tools/call of a tool this server does not have: a JSON-RPC error, not a tool result. */
function unknownTool(agent: AgentDefinition, name: unknown): Error {
  const available = Object.keys(agent.capabilities)
    .slice(0, 50)
    .map((n) => quote(n, 80));
  const error = new Error(
    `Unknown tool: ${quote(name, 80)}; available: ${available.join(", ")} (tools/list); nothing was run or charged`,
  );
  return Object.assign(error, { code: INVALID_PARAMS }); // the SDK answers error.code as the JSON-RPC code
}

/**
 * The SDK's transport refuses (406) a POST whose Accept lacks text/event-stream, though with JSON
 * answers it never streams: a client that accepts JSON (application/json, or a wildcard that covers
 * it, or no Accept at all) is let through by adding it. One that accepts no JSON still gets the 406.
 */
function acceptJson(req: IncomingMessage): void {
  const accept = req.headers.accept;
  if (accept?.includes("text/event-stream")) return;
  if (accept !== undefined && !/application\/json|application\/\*|\*\/\*/i.test(accept)) return;
  const value = "application/json, text/event-stream";
  req.headers.accept = value;
  // The SDK reads headers through @hono/node-server, which also reads rawHeaders.
  const raw = req.rawHeaders.filter((_, i, all) => all[i - (i % 2)]!.toLowerCase() !== "accept");
  raw.push("Accept", value);
  req.rawHeaders.splice(0, req.rawHeaders.length, ...raw);
}

/** The client said it takes an event stream (MCP clients do; a JSON-only client gets JSON). */
const takesEventStream = (req: IncomingMessage): boolean =>
  req.headers.accept?.includes("text/event-stream") ?? false;

/** What an assistant is told at initialize: how the tools are paid. */
function instructions(s: JobServices): string {
  if (!s.gate)
    return "Each tool runs one job of this agent. This instance runs in dev mode: calls are free.";
  return (
    "Each tool runs one job of this agent, paid per call in USDC with x402 (v2, MCP transport). " +
    'An unpaid call returns isError with an x402 PaymentRequired (x402Version, accepts) as structuredContent: sign one of its accepts with an x402 client and call the tool again with the PaymentPayload in params._meta["x402/payment"]. ' +
    'You are charged only for a result you receive (its settlement is in the result\'s _meta["x402/payment-response"]); an identical retry returns the same result without a second charge.'
  );
}

export type McpHandler = (req: Request, res: Response) => Promise<void>;

export async function createMcpEndpoint(s: JobServices, logger: Logger): Promise<McpHandler> {
  const sdk = await loadSdk();
  const { agent, config } = s;
  // Production has the discovery data already (startServer waits for it); dev mode imports it now.
  const discovery = agent.discovery ?? (await agent.loadDiscovery?.().catch(() => undefined));
  const tools = listTools(agent);
  const info = { name: agent.name, version: agent.version, description: agentDescription(agent) };
  const options = { capabilities: { tools: {} }, instructions: instructions(s) };
  const cancels = createCancels();
  const call = async (
    params: CallToolParams,
    logger: Logger,
    extra: McpRequestExtra,
    cancel: AbortSignal | undefined,
  ): Promise<CallToolResult> => {
    const capability = Object.hasOwn(agent.capabilities, params.name)
      ? agent.capabilities[params.name]
      : undefined;
    if (!capability) throw unknownTool(agent, params.name);
    const result = await callTool(s, params, { logger, discovery, extra, cancel });
    return config.devMode ? devModeResult(result, capability) : result;
  };

  const serve = async (req: Request, res: Response): Promise<void> => {
    const requestLogger = logger.child({
      request_id: res.locals.requestId,
      client: req.ip,
      transport: "mcp",
    });
    const server = new sdk.Server(info, options);
    server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(
      sdk.CallToolRequestSchema,
      async (request: McpRequest<CallToolParams>, extra: McpRequestExtra) => {
        // In flight until answered: a graceful shutdown waits for it (and its settlement).
        const leave = s.drain.enter();
        // A cancel stops the handler (ctx.signal) and, like a closed connection, any settlement.
        const cancel = cancels.track(req, extra.requestId);
        const signal = cancel.signal
          ? AbortSignal.any([extra.signal, cancel.signal])
          : extra.signal;
        try {
          return await call(request.params, requestLogger, { ...extra, signal }, cancel.signal);
        } finally {
          cancel.done();
          leave();
        }
      },
    );
    const transport = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      // A call that asked for progress is answered as SSE (a JSON answer cannot carry notifications),
      // when its client takes an event stream; anything else is one JSON answer.
      enableJsonResponse: !(wantsProgress(req.body) && takesEventStream(req)),
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    cancels.receive(req, res);
    acceptJson(req);
    await transport.handleRequest(
      req as IncomingMessage,
      res as ServerResponse,
      req.body as unknown,
    );
  };

  return serve; // the Host check and the body's limits ran before (route.ts)
}
