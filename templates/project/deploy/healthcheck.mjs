// The image's HEALTHCHECK: GET /health on this container's own port (a worker's: WORKER_HEALTH_PORT); exit 0
// when the agent answers 200 (ready: configuration, ledger and settlement routes fine), 1 otherwise. No curl
// needed in a slim image.
import { request } from "node:http";

const port = Number(process.env.WORKER_HEALTH_PORT ?? process.env.PORT ?? 3000);
const listening = process.env.HOST;
const host = !listening || listening === "0.0.0.0" || listening === "::" ? "127.0.0.1" : listening;
const req = request({ host, port, path: "/health", timeout: 4000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on("timeout", () => req.destroy(new Error("timeout")));
req.on("error", () => process.exit(1));
req.end();
