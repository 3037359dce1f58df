/**
 * A2A as a transport (transport.ts): POST /a2a and the HTTP+JSON binding under /a2a/rest
 * (route.ts, the official @a2a-js/sdk loaded on the first call), the agent card's two A2A 1.0
 * interfaces (JSON-RPC first, the one clients prefer; then HTTP+JSON) and its a2a-x402 extension,
 * and /llms.txt's A2A section (card.ts). Listed in features.ts (TRANSPORTS) while the project has
 * the `a2a` feature; A2A=off keeps the routes (answering 404) out of every document.
 * Part of your project: edit freely.
 */
import { A2A_PATH, A2A_REST_PATH } from "../http/paths.js";
import type { Transport } from "../transport.js";
import { a2aLines, x402Extension } from "./card.js";
import { A2A_HEADERS } from "./rest.js";
import { mountA2a } from "./route.js";

export const A2A_TRANSPORT: Transport = {
  name: "a2a",
  // Express paths; the REST binding's others (cancel, list, 0.3's /v1/...) are under /a2a/rest too.
  routes: [
    { path: A2A_PATH, methods: "POST", allowHeaders: A2A_HEADERS },
    { path: `${A2A_REST_PATH}/message:send`, methods: "POST", allowHeaders: A2A_HEADERS },
    { path: `${A2A_REST_PATH}/tasks/:id`, methods: "GET, HEAD", allowHeaders: A2A_HEADERS },
  ],
  enabled: (config) => config.a2a.enabled,
  mount: mountA2a,
  discovery: {
    cardInterface: (base) => [
      { url: `${base}${A2A_PATH}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${base}${A2A_REST_PATH}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    // Both bindings' tasks are paid for the resource /a2a (route.ts).
    cardExtension: (base, facts) => x402Extension(facts, `${base}${A2A_PATH}`),
    llms: (base, facts, config) => a2aLines(base, facts, config.queue !== undefined),
  },
};
