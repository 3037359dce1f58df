// `npm run dev`: the server in dev mode, restarted by `tsx watch` on every change.
// Dev mode skips the x402 payment gate (anyone can call the agent for free); validation, deadlines and
// error handling work exactly as in production. It refuses to start when NODE_ENV=production.
import { connect, type Socket } from "node:net";

process.env.SERVICE_DEV_MODE = "true";

// `create-agent dev` is told whether the server got as far as listening: when it stops before (a
// configuration it refuses, a busy port), the dev command ends instead of leaving tsx waiting.
const [port, token] = (process.env.CREATE_AGENT_DEV_REPORT ?? "").split(":");
const report =
  port && token
    ? await new Promise<Socket | undefined>((resolve) => {
        const socket = connect(Number(port), "127.0.0.1", () => resolve(socket));
        socket.on("error", () => resolve(undefined));
      })
    : undefined;
report?.unref();
report?.write(`${token}\n`);

await import("./server.js");
report?.end("listening\n");
