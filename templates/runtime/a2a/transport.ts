/**
 * A2A as a transport (transport.ts): POST /a2a and the HTTP+JSON binding under /a2a/rest
 * (route.ts, the official @a2a-js/sdk loaded on the first call), the agent card's two A2A 1.0
 * interfaces (JSON-RPC first, the one clients prefer; then HTTP+JSON) and its a2a-x402 extension,
 * and /llms.txt's A2A section (card.ts); the agent card is also served under /a2a and /a2a/rest. Listed in features.ts (TRANSPORTS) while the project has
 * the `a2a` feature; A2A=off keeps the routes (answering 404) out of every document.
 * Part of your project: edit freely.
 */
import { A2A_PATH, A2A_REST_PATH, AGENT_CARD_PATH } from "../http/paths.js";
import { plainTextField } from "../jobs/request.js";
import type { Transport } from "../transport.js";
import { a2aLines, x402Extension } from "./card.js";
import { A2A_HEADERS } from "./rest.js";
import { mountA2a } from "./route.js";

/**
 * The agent card under each A2A URL as well: a client given the card's /a2a (or /a2a/rest) URL, not the
 * service's, resolves the card from it (the A2A SDKs' card resolvers, the A2A TCK).
 */
const CARD_PATHS = [A2A_PATH, A2A_REST_PATH].map((path) => `${path}${AGENT_CARD_PATH}`);

export const A2A_TRANSPORT: Transport = {
  name: "a2a",
  // Express paths; the REST binding's others (cancel, list, 0.3's /v1/...) are under /a2a/rest too.
  routes: [
    { path: A2A_PATH, methods: "POST", allowHeaders: A2A_HEADERS },
    { path: `${A2A_REST_PATH}/message:send`, methods: "POST", allowHeaders: A2A_HEADERS },
    { path: `${A2A_REST_PATH}/tasks/:id`, methods: "GET, HEAD", allowHeaders: A2A_HEADERS },
    ...CARD_PATHS.map((path) => ({ path, methods: "GET, HEAD", allowHeaders: "A2A-Version" })),
  ],
  enabled: (config) => config.a2a.enabled,
  mount: mountA2a,
  discovery: {
    cardPaths: CARD_PATHS,
    cardInterface: (base) => [
      { url: `${base}${A2A_PATH}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${base}${A2A_REST_PATH}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    // Both bindings' tasks are paid for the resource /a2a (route.ts).
    cardExtension: (base, facts) => x402Extension(facts, `${base}${A2A_PATH}`),
    llms: (base, facts, config, agent) =>
      a2aLines(base, facts, config.queue !== undefined, plainTextField(agent)),
  },
};
