/**
 * GET /openapi.json: the generated OpenAPI 3.1 document (src/generated/openapi.json) with the
 * service's public URL as its server. Part of your project: edit freely.
 */
import type { DiscoveryData, JsonObject } from "./data.js";
import { MCP_PATH, MCP_PROTOCOL_VERSION } from "./paths.js";

/**
 * The OpenAPI document for the service at `base`; the shared document itself is left untouched.
 * `networks`: the offered networks in the seller's order, listed in x-x402.
 * `mcp`: POST /mcp is on, and documented as one JSON-RPC endpoint (MCP's methods are the MCP spec's).
 */
export function buildOpenApi(
  data: DiscoveryData,
  base: string,
  mcp = false,
  networks?: readonly { caip2: string; asset: string; payTo: string }[],
): JsonObject {
  const { openapi, info, ...rest } = data.openapi;
  delete rest.servers; // ours replaces any the document had
  // Several networks: x-x402 lists them (configuration, not generation), in the seller's order.
  const x402 = rest["x-x402"];
  if (networks && networks.length > 1)
    rest["x-x402"] = {
      ...(typeof x402 === "object" && x402 !== null ? x402 : {}),
      networks: networks.map((n) => ({ network: n.caip2, asset: n.asset, payTo: n.payTo })),
    };
  if (mcp && typeof rest.paths === "object" && rest.paths !== null)
    rest.paths = { ...rest.paths, [MCP_PATH]: mcpPath() };
  return { openapi, info, servers: [{ url: base }], ...rest };
}

/** POST /mcp: a JSON-RPC 2.0 message in, a JSON-RPC answer out (MCP Streamable HTTP, stateless). */
function mcpPath(): JsonObject {
  const rpc = {
    type: "object",
    required: ["jsonrpc"],
    properties: { jsonrpc: { const: "2.0" }, id: { type: ["string", "integer"] } },
  };
  return {
    post: {
      operationId: "mcp",
      summary: "Model Context Protocol: every capability as a tool",
      description:
        `MCP Streamable HTTP (stateless, protocol ${MCP_PROTOCOL_VERSION}): send JSON-RPC messages such as initialize, tools/list and tools/call; ` +
        "each tool is a capability, run and paid as a POST /execute job. A paid call carries its x402 v2 PaymentPayload in " +
        'params._meta["x402/payment"] (an unpaid one is answered with the PaymentRequired as the tool result). ' +
        "Send Accept: application/json, text/event-stream. Methods and results: the MCP specification.",
      requestBody: { required: true, content: { "application/json": { schema: rpc } } },
      responses: {
        "200": {
          description: "The JSON-RPC answer (tool failures are results with isError: true)",
          content: { "application/json": { schema: rpc } },
        },
        "202": { description: "A notification, accepted" },
        "400": { description: "Not a JSON-RPC message (JSON-RPC error body)" },
        "403": {
          description: "A Host header that is not this server's, on a local server (DNS rebinding)",
        },
        "406": { description: "The Accept header lacks application/json or text/event-stream" },
      },
    },
  };
}
