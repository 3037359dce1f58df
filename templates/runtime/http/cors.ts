/**
 * CORS, so browser apps on other sites can call the service and pay: they send the payment
 * headers, and may read the payment headers of our answers only if they are exposed.
 * Part of your project: edit freely.
 */
import type { RequestHandler } from "express";
import { AGENT_CARD_PATH, LLMS_TXT_PATH, OPENAPI_PATH } from "./paths.js";
import type { Transport, TransportRoute } from "../transport.js";

/** Known paths, in order, with their methods (HEAD comes free with GET). */
export type Routes = ReadonlyMap<string, TransportRoute>;

const GET = "GET, HEAD";

/**
 * Every known path: the core's (/health, /about), each transport's (TRANSPORTS in features.ts:
 * POST /execute, /mcp...), then the discovery documents'. A2A clients (the official SDK's card
 * resolver among them) send A2A-Version when they fetch the agent card, so a browser asks first.
 */
export function knownRoutes(transports: readonly Transport[]): Routes {
  const all: TransportRoute[] = [
    { path: "/health", methods: GET },
    { path: "/about", methods: GET },
    ...transports.flatMap((t) => t.routes),
    { path: AGENT_CARD_PATH, methods: GET, allowHeaders: "A2A-Version" },
    { path: OPENAPI_PATH, methods: GET },
    { path: LLMS_TXT_PATH, methods: GET },
  ];
  return new Map(all.map((route) => [route.path, route]));
}

// Prefer (RFC 7240): a browser may ask POST /execute for an async job (the queue feature; a service
// without it ignores the preference, as the RFC allows).
const CORS_HEADERS = {
  "Access-Control-Allow-Headers":
    "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, X-Request-Id, Prefer",
  "Access-Control-Expose-Headers":
    "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, Retry-After",
};

/** Every answer allows `origin`; a preflight of a known route gets 204 with its methods. */
export function cors(origin: string, routes: Routes): RequestHandler {
  return (req, res, next) => {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Headers", CORS_HEADERS["Access-Control-Allow-Headers"]);
    res.setHeader("Access-Control-Expose-Headers", CORS_HEADERS["Access-Control-Expose-Headers"]);
    // Unknown paths fall through to the 404.
    const route = req.method === "OPTIONS" ? routes.get(req.path) : undefined;
    if (!route) return next();
    res.set("Access-Control-Allow-Methods", `${route.methods}, OPTIONS`);
    const extra = route.allowHeaders;
    if (extra)
      res.set(
        "Access-Control-Allow-Headers",
        `${CORS_HEADERS["Access-Control-Allow-Headers"]}, ${extra}`,
      );
    res.set("Access-Control-Max-Age", "600");
    res.status(204).end();
  };
}
