/**
 * POST /mcp behind its route (route.ts): the official SDK's low-level Server over its Streamable
 * HTTP transport, stateless (a Server and a transport per request, no session), answering JSON.
 * tools/list lists the capabilities (tools.ts); tools/call runs one as a job (call.ts). Loaded, with
 * the SDK, when the first MCP request arrives. Part of your project: edit freely.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import { agentDescription } from "../discovery/agent-card.js";
import type { JobServices } from "../jobs/services.js";
import type { Logger } from "../types.js";
import { callTool } from "./call.js";
import { wantsProgress } from "./progress.js";
import { loadSdk, type CallToolParams, type McpRequest, type McpRequestExtra } from "./sdk.js";
import { listTools } from "./tools.js";

/** Host names the SDK's DNS-rebinding protection allows on a local server. */
const LOCAL_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

const isLoopback = (address: string | undefined): boolean =>
  address !== undefined &&
  (address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127."));

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
  // A server reached on a loopback address must be named as one (DNS rebinding), or as PUBLIC_URL.
  const hosts = config.publicUrl
    ? [...LOCAL_HOSTS, new URL(config.publicUrl).hostname]
    : LOCAL_HOSTS;
  const checkHost = sdk.hostHeaderValidation(hosts);

  const serve = async (req: Request, res: Response): Promise<void> => {
    const requestLogger = logger.child({ request_id: res.locals.requestId, transport: "mcp" });
    const server = new sdk.Server(info, options);
    server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({ tools }));
    server.setRequestHandler(
      sdk.CallToolRequestSchema,
      async (request: McpRequest<CallToolParams>, extra: McpRequestExtra) => {
        // In flight until answered: a graceful shutdown waits for it (and its settlement).
        const leave = s.drain.enter();
        try {
          return await callTool(s, request.params, { logger: requestLogger, discovery, extra });
        } finally {
          leave();
        }
      },
    );
    const transport = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      // A call that asked for progress is answered as SSE: a JSON answer cannot carry notifications.
      enableJsonResponse: !wantsProgress(req.body),
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(
      req as IncomingMessage,
      res as ServerResponse,
      req.body as unknown,
    );
  };

  return async (req, res) => {
    if (isLoopback(req.socket.localAddress)) {
      let allowed = false;
      checkHost(req, res, () => (allowed = true)); // synchronous: next(), or a 403 already sent
      if (!allowed) return;
    }
    await serve(req, res);
  };
}
