/**
 * tools/list: one MCP tool per capability, from the same registry /execute runs. Its inputSchema is
 * exactly the closed JSON Schema the input validator uses. Part of your project: edit freely.
 *
 * Output schemas: the official MCP client (SDK 1.32) checks a result's structuredContent against the
 * tool's outputSchema even when isError is true, and the x402 MCP transport puts a PaymentRequired
 * there. So a tool's outputSchema says "the capability's output, or one of the two failure shapes":
 * the spec's error body, or an x402 PaymentRequired. A successful result always matches its first
 * branch in production (the output is checked before it is delivered, and before any charge).
 */
import { capabilityDescription } from "../discovery/agent-card.js";
import type { AgentDefinition, Capability } from "../types.js";
import type { McpTool } from "./sdk.js";

/** The spec's error body (section 2.5): what a failed tool call's structuredContent is. */
export const ERROR_BODY_SCHEMA = {
  type: "object",
  properties: {
    status: { const: "failed" },
    error_type: { enum: ["validation", "payment", "deadline", "capability", "internal"] },
    error: { type: "string" },
  },
  required: ["status", "error_type", "error"],
} as const;

/** An x402 v2 PaymentRequired: what an unpaid (or refused) paid call's structuredContent is. */
export const PAYMENT_REQUIRED_SCHEMA = {
  type: "object",
  properties: {
    x402Version: { const: 2 },
    error: { type: "string" },
    resource: { type: "object" },
    accepts: { type: "array", items: { type: "object" } },
  },
  required: ["x402Version", "accepts"],
} as const;

/** "classify-review" -> "Classify review": the title a client shows. */
export function toolTitle(name: string): string {
  const words = name.replace(/[-_.]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function objectSchema(schema: unknown): { type: "object"; [keyword: string]: unknown } {
  return typeof schema === "object" && schema !== null && !Array.isArray(schema)
    ? { ...(schema as Record<string, unknown>), type: "object" }
    : { type: "object" };
}

export function toolOf(agent: AgentDefinition, capability: Capability): McpTool {
  const output = capability.validateOutput.schema;
  return {
    name: capability.name,
    description: capabilityDescription(agent, capability.name),
    inputSchema: objectSchema(capability.validateInput.schema),
    outputSchema: {
      type: "object",
      anyOf: [typeof output === "object" ? output : {}, ERROR_BODY_SCHEMA, PAYMENT_REQUIRED_SCHEMA],
    },
    annotations: { title: toolTitle(capability.name) },
  };
}

/** Every capability's tool, in manifest order. */
export function listTools(agent: AgentDefinition): McpTool[] {
  return Object.values(agent.capabilities).map((capability) => toolOf(agent, capability));
}
