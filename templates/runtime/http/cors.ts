/**
 * CORS, so browser apps on other sites can call the service and pay: they send the payment
 * headers, and may read the payment headers of our answers only if they are exposed.
 * Part of your project: edit freely.
 */
import type { RequestHandler } from "express";
import { AGENT_CARD_PATH, LLMS_TXT_PATH, MCP_PATH, OPENAPI_PATH } from "../discovery/paths.js";

/** Known paths and their methods (HEAD comes free with GET). */
export const ROUTES: Record<string, string> = {
  "/health": "GET, HEAD",
  "/about": "GET, HEAD",
  "/execute": "POST",
  [MCP_PATH]: "POST",
  [AGENT_CARD_PATH]: "GET, HEAD",
  [OPENAPI_PATH]: "GET, HEAD",
  [LLMS_TXT_PATH]: "GET, HEAD",
};

/**
 * Request headers a preflight of a path allows besides the common ones: A2A clients (the official
 * SDK's card resolver among them) send A2A-Version when they fetch the agent card, so a browser asks
 * first; MCP clients send their protocol version with every request.
 */
const EXTRA_ALLOWED_HEADERS: Record<string, string> = {
  [AGENT_CARD_PATH]: "A2A-Version",
  // MCP clients in a browser (the Streamable HTTP transport's headers).
  [MCP_PATH]: "Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
};

const CORS_HEADERS = {
  "Access-Control-Allow-Headers": "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, X-Request-Id",
  "Access-Control-Expose-Headers":
    "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, Retry-After",
};

/** Every answer allows `origin`; a preflight of a known route gets 204 with its methods. */
export function cors(origin: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Headers", CORS_HEADERS["Access-Control-Allow-Headers"]);
    res.setHeader("Access-Control-Expose-Headers", CORS_HEADERS["Access-Control-Expose-Headers"]);
    // Unknown paths fall through to the 404.
    if (req.method !== "OPTIONS" || !Object.hasOwn(ROUTES, req.path)) return next();
    res.set("Access-Control-Allow-Methods", `${ROUTES[req.path]}, OPTIONS`);
    const extra = EXTRA_ALLOWED_HEADERS[req.path];
    if (extra)
      res.set(
        "Access-Control-Allow-Headers",
        `${CORS_HEADERS["Access-Control-Allow-Headers"]}, ${extra}`,
      );
    res.set("Access-Control-Max-Age", "600");
    res.status(204).end();
  };
}
