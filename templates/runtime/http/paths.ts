/**
 * The public paths: where the discovery documents are served (discovery/routes.ts serves them;
 * cors.ts lists them), where MCP is (mcp/) and where A2A is (a2a/).
 * Part of your project: edit freely.
 */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";
export const OPENAPI_PATH = "/openapi.json";
export const LLMS_TXT_PATH = "/llms.txt";
export const MCP_PATH = "/mcp";
/** The MCP protocol revision POST /mcp speaks (the SDK's latest; a repo test checks it). */
export const MCP_PROTOCOL_VERSION = "2025-11-25";
/** A2A's JSON-RPC endpoint (a2a/, A2A 1.0 and 0.3), also the resource its tasks are paid for. */
export const A2A_PATH = "/a2a";
/** The base URL of A2A's HTTP+JSON (REST) binding (a2a/: /a2a/rest/message:send, /a2a/rest/tasks/{id}...). */
export const A2A_REST_PATH = `${A2A_PATH}/rest`;
