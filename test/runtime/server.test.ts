// startServer and graceful shutdown, in-process (the signal handler itself calls process.exit, so
// it is exercised through shutdownGracefully, which it delegates to).
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { shutdownGracefully, startServer } from "../../templates/runtime/server.js";
import { captureLogger, job, makeAgent, post } from "./helpers.js";

let server: Server | undefined;
afterEach(async () => {
  if (server?.listening) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
  }
  server = undefined;
});

describe("startServer", () => {
  it("listens on PORT and logs the URL and the mode", async () => {
    const logger = captureLogger();
    server = await startServer(makeAgent(), {
      env: { PORT: "0", SERVICE_DEV_MODE: "true" },
      logger,
    });
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
    const line = logger.lines.find((l) => l.message.includes("listening"));
    expect(line?.message).toContain(`http://localhost:${port}`);
    expect(line?.fields.mode).toMatch(/dev/);
    expect(
      logger.lines.some(
        (l) => l.level === "warn" && /payment verification is bypassed/.test(l.message),
      ),
    ).toBe(true);
  });

  it("removes its signal handlers when the server closes", async () => {
    const before = process.listenerCount("SIGTERM");
    server = await startServer(makeAgent(), {
      env: { PORT: "0", SERVICE_DEV_MODE: "true" },
      logger: captureLogger(),
    });
    expect(process.listenerCount("SIGTERM")).toBe(before + 1);
    await new Promise((r) => server!.close(r));
    expect(process.listenerCount("SIGTERM")).toBe(before);
  });
});

describe("shutdownGracefully", () => {
  it("lets an in-flight job finish, then stops accepting connections", async () => {
    server = await startServer(makeAgent(), {
      env: { PORT: "0", SERVICE_DEV_MODE: "true" },
      logger: captureLogger(),
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // An idle keep-alive connection must not hold the shutdown open.
    await fetch(`${url}/health`);
    const inFlight = post(url, job("slow", { ms: 400 }));
    await new Promise((r) => setTimeout(r, 100));
    let closed = false;
    const shutdown = shutdownGracefully(server).then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual({ text: "done" });
    await shutdown;
    expect(closed).toBe(true);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
