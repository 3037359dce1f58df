/**
 * POST /mcp in the OpenAPI document (openapi.ts): one JSON-RPC 2.0 endpoint (MCP Streamable HTTP,
 * stateless, JSON answers; an event stream for a call that asks for progress), its message and answer
 * schemas in components (McpMessage, McpAnswer). The server serves it unless MCP=off, so the
 * generated document has it and the runtime removes it, with those two schemas, when MCP is off
 * (templates/runtime/discovery/openapi.ts).
 *
 * The message schema is what the MCP SDK's transport parses (its JSON-RPC request and notification
 * schemas are strict objects: no other keys), so a request that fits the schema reaches the server's
 * methods and gets a JSON-RPC answer rather than a transport error.
 */
type Json = { [key: string]: unknown };

// What the embedded runtime serves and enforces (templates/runtime); a test keeps these in sync with it.
/** http/paths.ts MCP_PATH. */
export const MCP_PATH = "/mcp";
/** http/paths.ts MCP_PROTOCOL_VERSION: the MCP revision the SDK speaks. */
export const MCP_PROTOCOL_VERSION = "2025-11-25";
/** mcp/messages.ts MAX_BATCH_MESSAGES. */
export const MAX_BATCH_MESSAGES = 20;

const ID: Json = {
  type: ["string", "integer"],
  description: "The request's id; a message without one is a notification (answered 202).",
};

/** params._meta: the MCP request metadata, plus this service's keys (see the description). */
const META: Json = {
  type: "object",
  description:
    "tools/call: `job_id` and `deadline` (Unix seconds) set what a POST /execute body sets; `x402/payment` carries the x402 v2 PaymentPayload of a paid call.",
  properties: {
    progressToken: { type: ["string", "integer"] },
    "io.modelcontextprotocol/related-task": {
      type: "object",
      required: ["taskId"],
      properties: { taskId: { type: "string" } },
    },
  },
};

/** A JSON-RPC request or notification, as a client sends it. */
const MESSAGE: Json = {
  type: "object",
  additionalProperties: false,
  required: ["jsonrpc", "method"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: ID,
    method: { type: "string", examples: ["initialize", "tools/list", "tools/call"] },
    params: { type: "object", properties: { _meta: META } },
  },
};

/** A JSON-RPC answer: a result, or an error (id null when the request could not be read). */
const ANSWER: Json = {
  type: "object",
  required: ["jsonrpc"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: ["string", "integer", "null"] },
    result: { type: "object" },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: { type: "string" }, data: {} },
    },
  },
};

/** Shared by the request and every answer: components.schemas of the document (openapi.ts). */
export const MCP_SCHEMAS = { McpMessage: MESSAGE, McpAnswer: ANSWER } as const;
const MESSAGE_REF: Json = { $ref: "#/components/schemas/McpMessage" };
const ANSWER_REF: Json = { $ref: "#/components/schemas/McpAnswer" };

const oneOrBatch = (schema: Json, maxItems?: number): Json => ({
  oneOf: [
    schema,
    { type: "array", minItems: 1, ...(maxItems !== undefined && { maxItems }), items: schema },
  ],
});

const rpcError = (description: string): Json => ({
  description,
  content: { "application/json": { schema: ANSWER_REF } },
});

/** The path item of POST /mcp; `maxDepth`: openapi.ts MAX_NESTING_DEPTH. */
export function mcpPathItem(maxDepth: number): Json {
  return {
    post: {
      tags: ["jobs"],
      operationId: "mcp",
      summary: "Model Context Protocol: every capability as a tool",
      // Paid tool calls carry their payment in the JSON-RPC body, not in an HTTP credential.
      security: [],
      description: [
        `MCP Streamable HTTP (stateless, protocol ${MCP_PROTOCOL_VERSION}): send JSON-RPC messages such as initialize, tools/list and tools/call; ` +
          "each tool is a capability, run and paid as a POST /execute job. A paid call carries its x402 v2 PaymentPayload in " +
          'params._meta["x402/payment"] (an unpaid one is answered with the PaymentRequired as the tool result). ' +
          "Methods and results: the MCP specification; an unknown tool is the JSON-RPC error -32602.",
        "",
        "Answers are JSON: any Accept that takes JSON works (`application/json`, " +
          "`application/json, text/event-stream` as MCP clients send, `*/*`, or none). A tools/call that sends " +
          "params._meta.progressToken from a client that accepts text/event-stream is answered as an event stream " +
          "carrying notifications/progress, then its answer.",
        "",
        `A batch (an array) holds at most ${MAX_BATCH_MESSAGES} messages, no two requests with the same id and at most one tools/list; ` +
          `a message nests at most ${maxDepth} levels (as POST /execute). ` +
          "The Host header must name this server (localhost, " +
          "127.0.0.1, [::1], an IP address, PUBLIC_URL's host or ALLOWED_HOSTS): DNS-rebinding protection.",
      ].join("\n"),
      requestBody: {
        required: true,
        content: { "application/json": { schema: oneOrBatch(MESSAGE_REF, MAX_BATCH_MESSAGES) } },
      },
      responses: {
        "200": {
          description:
            "The JSON-RPC answer, one per request (tool failures are results with isError: true; an unknown tool or invalid params, a JSON-RPC error)",
          content: { "application/json": { schema: oneOrBatch(ANSWER_REF) } },
        },
        "202": { description: "Only notifications: accepted, no answer" },
        "400": rpcError(
          "Not JSON, not a JSON-RPC message, or a batch over its limits (JSON-RPC error, id null)",
        ),
        "403": rpcError("The Host header does not name this server (DNS-rebinding protection)"),
        "406": rpcError("The Accept header takes no JSON"),
        "413": rpcError("The body is larger than MAX_BODY_BYTES"),
        "415": rpcError("The Content-Type is not application/json"),
        "503": rpcError("The server is shutting down; send it again (Retry-After)"),
      },
    },
  };
}
