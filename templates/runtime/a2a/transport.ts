/**
 * A2A as a transport (transport.ts): POST /a2a (route.ts, the official @a2a-js/sdk loaded on the
 * first call), the agent card's JSON-RPC interface (A2A 1.0) and its a2a-x402 extension, and
 * /llms.txt's A2A section (card.ts). Listed in features.ts (TRANSPORTS) while the project has the
 * `a2a` feature; A2A=off keeps the route (answering 404) out of every document.
 * Part of your project: edit freely.
 */
import { A2A_PATH } from "../http/paths.js";
import type { Transport } from "../transport.js";
import { a2aLines, x402Extension } from "./card.js";
import { mountA2a } from "./route.js";

export const A2A_TRANSPORT: Transport = {
  name: "a2a",
  routes: [
    {
      path: A2A_PATH,
      methods: "POST",
      allowHeaders: "A2A-Version, A2A-Extensions, X-A2A-Extensions",
    },
  ],
  enabled: (config) => config.a2a.enabled,
  mount: mountA2a,
  discovery: {
    cardInterface: (base) => ({
      url: `${base}${A2A_PATH}`,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    }),
    cardExtension: (base, facts) => x402Extension(facts, `${base}${A2A_PATH}`),
    llms: (base, facts, config) =>
      a2aLines(`${base}${A2A_PATH}`, facts, config.queue !== undefined),
  },
};
