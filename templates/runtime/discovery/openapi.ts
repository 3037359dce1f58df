/**
 * GET /openapi.json: the generated OpenAPI 3.1 document (src/generated/openapi.json) with the
 * service's public URL as its server. Part of your project: edit freely.
 */
import type { DiscoveryData, JsonObject } from "./data.js";
import { MCP_PATH, MCP_PROTOCOL_VERSION } from "./paths.js";

/** How the serving instance differs from the generated document. */
export interface OpenApiMode {
  /** Dev mode: jobs are free, so POST /execute needs no payment header (no security). */
  free?: boolean;
  /** POST /mcp is on: documented as one JSON-RPC endpoint (MCP's methods are the MCP spec's). */
  mcp?: boolean;
  /** The offered networks in the seller's order; with several, x-x402 lists them. */
  networks?: readonly { caip2: string; asset: string; payTo: string }[];
}

/** The OpenAPI document for the service at `base`; the shared document itself is left untouched. */
export function buildOpenApi(
  data: DiscoveryData,
  base: string,
  mode: OpenApiMode = {},
): JsonObject {
  const { openapi, info, ...rest } = data.openapi;
  delete rest.servers; // ours replaces any the document had
  // Several networks: x-x402 lists them (configuration, not generation), in the seller's order.
  const x402 = rest["x-x402"];
  const networks = mode.networks;
  if (networks && networks.length > 1)
    rest["x-x402"] = {
      ...(typeof x402 === "object" && x402 !== null ? x402 : {}),
      networks: networks.map((n) => ({ network: n.caip2, asset: n.asset, payTo: n.payTo })),
    };
  if (mode.mcp && typeof rest.paths === "object" && rest.paths !== null)
    rest.paths = { ...rest.paths, [MCP_PATH]: mcpPath() };
  const doc: JsonObject = { openapi, info, servers: [{ url: base }], ...rest };
  return mode.free ? withoutPayment(doc) : doc;
}

type Operation = JsonObject & { security?: unknown; description?: string };

/**
 * Dev mode skips the payment gate, so the document must not require a payment for /execute: its
 * security becomes `[]` (none), its description says why, and the payment headers' security
 * schemes, now used by nothing, go. Only the objects on the way to what changes are copied.
 */
function withoutPayment(doc: JsonObject): JsonObject {
  const paths = doc.paths as Record<string, Record<string, Operation>> | undefined;
  const execute = paths?.["/execute"]?.post;
  if (!paths || !execute) return doc;
  const post: Operation = {
    ...execute,
    security: [],
    description: `This server runs in dev mode: jobs are free and payment headers are ignored.\n\n${execute.description ?? ""}`,
  };
  const { securitySchemes: _, ...components } = (doc.components ?? {}) as JsonObject;
  return {
    ...doc,
    paths: { ...paths, "/execute": { ...paths["/execute"], post } },
    ...(doc.components ? { components } : {}),
  };
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
      // Paid tool calls carry their payment in the JSON-RPC body, not in an HTTP credential.
      security: [],
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
