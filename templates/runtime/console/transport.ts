/**
 * The console page as a transport (transport.ts): GET / for browsers (route.ts). It adds no known
 * path: other clients and methods on / get what they got before (404), and no discovery document
 * mentions it. Listed in features.ts (TRANSPORTS) while the project has the `console` feature.
 * Part of your project: edit freely.
 */
import { SERVICE_VERSION } from "../jobs/request.js";
import type { Transport } from "../transport.js";
import { consoleFacts } from "./facts.js";
import { mountConsole } from "./route.js";

export const CONSOLE_TRANSPORT: Transport = {
  name: "console",
  routes: [],
  // CONSOLE=off: no page (read when mounted, route.ts).
  mount: (app, s) =>
    mountConsole(app, s.agent, {
      devMode: s.config.devMode,
      serviceVersion: SERVICE_VERSION,
      ...consoleFacts(s.config, s.endpoints, s.networkFacts),
    }),
};
