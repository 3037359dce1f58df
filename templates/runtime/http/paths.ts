/**
 * The public paths: where the discovery documents are served (discovery/routes.ts serves them;
 * cors.ts lists them) and where MCP is (mcp/).
 * Part of your project: edit freely.
 */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";
export const OPENAPI_PATH = "/openapi.json";
export const LLMS_TXT_PATH = "/llms.txt";
export const MCP_PATH = "/mcp";
/** The MCP protocol revision POST /mcp speaks (the SDK's latest; a repo test checks it). */
export const MCP_PROTOCOL_VERSION = "2025-11-25";
