// The runtime types the MCP SDK by small local interfaces (templates/runtime/mcp/sdk.ts) so a project's
// typecheck never reads the SDK's declarations. Here they are checked against the real SDK, at the version
// package.json pins: `satisfies` fails `npm run typecheck` when an export no longer fits, and the test
// checks that the loader hands out exactly these exports.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  ToolSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { MCP_PROTOCOL_VERSION } from "../../templates/runtime/http/paths.js";
import type { CallToolResult, McpTool } from "../../templates/runtime/mcp/sdk.js";
import { loadSdk, type McpSdk } from "../../templates/runtime/mcp/sdk.js";
import { listTools } from "../../templates/runtime/mcp/tools.js";
import { makeAgent } from "./helpers.js";

const real = {
  Server,
  StreamableHTTPServerTransport,
  ListToolsRequestSchema,
  CallToolRequestSchema,
} satisfies McpSdk;

// What the runtime builds fits what the SDK declares (compile time).
type SdkTool = ReturnType<typeof ToolSchema.parse>;
type SdkResult = ReturnType<typeof CallToolResultSchema.parse>;
export const toolFits = (tool: McpTool): SdkTool => tool;
export const resultFits = (result: CallToolResult): SdkResult => result;

describe("the MCP SDK as the runtime types it", () => {
  it("is loaded through the runtime's loader as exactly the SDK's exports", async () => {
    const sdk = await loadSdk();
    for (const [name, value] of Object.entries(real))
      expect(sdk[name as keyof McpSdk], name).toBe(value);
  });

  it("speaks the protocol revision the discovery documents name", () => {
    expect(MCP_PROTOCOL_VERSION).toBe(LATEST_PROTOCOL_VERSION);
  });

  it("lists tools the SDK's own schema accepts", () => {
    for (const tool of listTools(makeAgent()))
      expect(ToolSchema.safeParse(tool).success).toBe(true);
  });
});
