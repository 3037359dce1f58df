// The image's HEALTHCHECK: GET /health on this container's own port (a worker's: WORKER_HEALTH_PORT); exit 0
// when the agent answers 200 (ready: configuration, ledger and settlement routes fine), 1 otherwise, saying
// why (`docker inspect --format '{{json .State.Health}}' <container>` shows it). No curl needed in a slim image.
import { request } from "node:http";

const port = Number(process.env.WORKER_HEALTH_PORT ?? process.env.PORT ?? 3000);
const listening = process.env.HOST;
const host = !listening || listening === "0.0.0.0" || listening === "::" ? "127.0.0.1" : listening;
const fail = (why) => {
  process.stderr.write(`GET http://${host}:${port}/health: ${why}\n`);
  process.exit(1);
};
const req = request({ host, port, path: "/health", timeout: 8000 }, (res) => {
  if (res.statusCode === 200) process.exit(0);
  let body = "";
  res.setEncoding("utf8");
  res.on("data", (chunk) => (body += chunk).length > 2000 && res.destroy());
  res.on("close", () => fail(`${res.statusCode} ${body.slice(0, 500)}`));
});
req.on("timeout", () => req.destroy(new Error("no answer within 8 s")));
req.on("error", (err) => fail(err.message));
req.end();
