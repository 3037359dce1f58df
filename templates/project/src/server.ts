// Entry point: reads configuration from the environment (and .env), then serves the agent.
// `npm start` runs the built copy in production mode; `npm run dev` runs src/dev.ts.
import { agent } from "./generated/registry.js";
import { startServer } from "./runtime/server.js";

await startServer(agent);
