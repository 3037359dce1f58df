/**
 * The optional features this project includes, and the one place that names them (a network family,
 * a transport besides POST /execute, an optional service). Each feature is a folder of src/runtime
 * with its own dependencies. `npm run add -- <feature>` and `npm run remove -- <feature>` rewrite
 * this file: a line ending in a `feature: <name>` comment is kept only while the project has that
 * feature. Part of your project: edit freely.
 */
import { CONSOLE_TRANSPORT } from "./console/transport.js"; // feature: console
import { EXECUTE_TRANSPORT } from "./http/execute.js";
import { MCP_TRANSPORT } from "./mcp/transport.js"; // feature: mcp
import type { Transport } from "./transport.js";

/** The features this project has (create-agent's names; `evm` and the core are always there). */
export const FEATURES: readonly string[] = [
  "evm",
  "solana", // feature: solana
  "mcp", // feature: mcp
  "console", // feature: console
  "redis", // feature: redis
  "metrics", // feature: metrics
  "facilitator-auth", // feature: facilitator-auth
];

/** Whether this project includes a feature. */
export function hasFeature(name: string): boolean {
  return FEATURES.includes(name);
}

/** What configuration that asks for an absent feature is told (fail closed, with the fix). */
export function missingFeature(feature: string, asked: string): string {
  return `${asked}, which this project does not include: run npm run add -- ${feature}`;
}

/**
 * The ways in, mounted in this order (transport.ts): POST /execute (the core's, always first), then
 * each feature's. They drive the routes, CORS, and what the discovery documents describe.
 */
export const TRANSPORTS: readonly Transport[] = [
  EXECUTE_TRANSPORT,
  MCP_TRANSPORT, // feature: mcp
  CONSOLE_TRANSPORT, // feature: console
];
