// Entry point: reads configuration from the environment (and .env), then serves the agent.
// `npm start` runs the built copy in production mode; `npm run dev` runs src/dev.ts.
// `npm run worker` (--worker) runs async jobs only, from the queue on REDIS_URL (the `queue` feature).
import { agent } from "./generated/registry.js";
import { startServer, startWorker } from "./runtime/server.js";

if (process.argv.includes("--worker")) await startWorker(agent);
else await startServer(agent);
