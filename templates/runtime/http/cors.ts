/**
 * CORS, so browser apps on other sites can call the service and pay: they send the payment
 * headers, and may read the payment headers of our answers only if they are exposed.
 * Part of your project: edit freely.
 */
import type { RequestHandler } from "express";

/** Known paths and their methods (HEAD comes free with GET). */
export const ROUTES: Record<string, string> = {
  "/health": "GET, HEAD",
  "/about": "GET, HEAD",
  "/execute": "POST",
};

const CORS_HEADERS = {
  "Access-Control-Allow-Headers": "Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, X-Request-Id",
  "Access-Control-Expose-Headers":
    "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Request-Id, Retry-After",
};

/** Every answer allows `origin`; a preflight of a known route gets 204 with its methods. */
export function cors(origin: string): RequestHandler {
  return (req, res, next) => {
    res.set("Access-Control-Allow-Origin", origin);
    res.set(CORS_HEADERS);
    // Unknown paths fall through to the 404.
    if (req.method !== "OPTIONS" || !Object.hasOwn(ROUTES, req.path)) return next();
    res.set("Access-Control-Allow-Methods", `${ROUTES[req.path]}, OPTIONS`);
    res.set("Access-Control-Max-Age", "600");
    res.status(204).end();
  };
}
