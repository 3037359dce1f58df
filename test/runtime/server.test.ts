// startServer and graceful shutdown, in-process (the signal handler itself calls process.exit, so
// it is exercised through shutdownGracefully, which it delegates to).
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ensurePortFree, portInUse as devHelp } from "../../src/cli/dev.js";
import { createApp, runtimeOf } from "../../templates/runtime/app.js";
import { portInUse } from "../../templates/runtime/ops/port-help.js";
import { shutdownGracefully, startServer } from "../../templates/runtime/server.js";
import {
  anvilAccount,
  captureLogger,
  closeAfterEach,
  job,
  listen,
  makeAgent,
  post,
  production,
  recordingSettler,
  paymentSignature,
} from "./helpers.js";

let server: Server | undefined;
closeAfterEach(() => server);

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

  it("listens on HOST only when it is set (a proxy on the same machine wants 127.0.0.1)", async () => {
    const logger = captureLogger();
    server = await startServer(makeAgent(), {
      env: { PORT: "0", HOST: "127.0.0.1", SERVICE_DEV_MODE: "true" },
      logger,
    });
    const { address, port } = server.address() as AddressInfo;
    expect(address).toBe("127.0.0.1");
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    // Another address of this machine (127.0.0.2 is loopback too on Linux) is not listened on.
    if (process.platform === "linux")
      await expect(fetch(`http://127.0.0.2:${port}/health`)).rejects.toThrow();
    const line = logger.lines.find((l) => l.message.includes("listening"));
    expect(line?.message).toContain(`http://127.0.0.1:${port}`);
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

describe("startServer on a busy port", () => {
  afterEach(() => vi.restoreAllMocks());

  /** A listener on every interface (as the server binds), on `port` (0: any free one). */
  async function squat(port = 0) {
    const squatter = createServer();
    await new Promise<void>((resolve, reject) => {
      squatter.once("error", reject);
      squatter.listen(port, () => resolve());
    });
    return squatter;
  }
  const close = (s: ReturnType<typeof createServer>) => new Promise((r) => s.close(r));

  /** Two busy ports side by side (`port` and `port + 1`), as a second agent left on the next port does. */
  async function twoBusyPorts() {
    for (let attempt = 0; attempt < 20; attempt++) {
      const first = await squat();
      const port = (first.address() as AddressInfo).port;
      if (port >= 65535) {
        await close(first);
        continue;
      }
      const second = await squat(port + 1).catch(() => undefined);
      if (second) return { port, squatters: [first, second] };
      await close(first);
    }
    throw new Error("found no two free ports side by side");
  }

  /** Whether a port can be listened on now, on every interface. */
  const canListen = async (port: number) => {
    const probe = await squat(port).catch(() => undefined);
    if (probe) await close(probe);
    return probe !== undefined;
  };

  /** startServer on `env` with stderr and process.exit stubbed: the code it exits with, and what it wrote. */
  async function startExiting(env: Record<string, string>) {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const exited = new Promise<number | undefined>((resolve) =>
      vi.spyOn(process, "exit").mockImplementation(((code?: number) => {
        resolve(code);
        return undefined as never;
      }) as typeof process.exit),
    );
    void startServer(makeAgent(), { env, logger: captureLogger() });
    const code = await exited;
    return { code, stderr: written.join("") };
  }

  /** startServer's stderr and exit code when PORT is a port another process holds. */
  async function busyPort() {
    const { port, squatters } = await twoBusyPorts();
    const { code, stderr } = await startExiting({ SERVICE_DEV_MODE: "true", PORT: String(port) });
    const suggested = Number(/`PORT=(\d+)`/.exec(stderr)?.[1]);
    const free = await canListen(suggested);
    for (const s of squatters) await close(s);
    return { port, code, stderr, suggested, free };
  }

  it("PORT: says how to find the other process and suggests a port it checked is free (the next one is busy too), exit 1", async () => {
    const { port, code, stderr, suggested, free } = await busyPort();
    expect(code).toBe(1);
    expect(stderr).toBe(
      `Could not listen on port ${port}: (EADDRINUSE) ${portInUse("PORT", port, suggested)}\n`,
    );
    expect(suggested, stderr).not.toBe(port + 1); // busy too: never suggested
    expect(free, `${stderr}: the port suggested is busy`).toBe(true);
    expect(portInUse("PORT", port, suggested)).toBe(
      `another process is listening on port ${port} (see which with \`lsof -i :${port}\`): ` +
        `stop it, or set PORT to a free port, e.g. \`PORT=${suggested}\` (free right now) in .env or before the command`,
    );
    // create-agent dev's own check of the port gives the same help, word for word.
    expect(devHelp(port, suggested)).toBe(portInUse("PORT", port, suggested));
    expect(devHelp(port, undefined)).toBe(portInUse("PORT", port, undefined));
  });

  it("HOST naming an address this machine does not have: the start names HOST, exit 1", async () => {
    // 192.0.2.1 (TEST-NET-1): nobody's address.
    const { code, stderr } = await startExiting({
      SERVICE_DEV_MODE: "true",
      PORT: "0",
      HOST: "192.0.2.1",
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^Could not listen on port 0: HOST is "192\.0\.2\.1", not an address of this machine \(.*EADDRNOTAVAIL.*\): set it to one/,
    );
  });

  it("`npm run dev` on a busy PORT suggests a port it checked is free, not the busy next one", async () => {
    const { port, squatters } = await twoBusyPorts();
    const refused = await ensurePortFree(String(port)).then(
      () => "started",
      (err: unknown) => String(err),
    );
    const suggested = Number(/`PORT=(\d+)`/.exec(refused)?.[1]);
    const free = await canListen(suggested);
    for (const s of squatters) await close(s);
    expect(refused).toContain(`port ${port} is busy`);
    expect(suggested, refused).not.toBe(port + 1);
    expect(free, `${refused}: the port suggested is busy`).toBe(true);
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

describe("graceful shutdown of paid jobs", () => {
  async function paidServer(settler = recordingSettler()) {
    const agent = makeAgent();
    const app = createApp(agent, { env: {}, logger: captureLogger(), ...production(settler) });
    const running = await listen(app);
    server = running.server;
    return { agent, settler, url: running.url, runtime: runtimeOf(app) };
  }
  const pay = () => paymentSignature(anvilAccount());

  it("refuses new jobs with 503 + Retry-After while draining, finishes the one in flight, and /health says so", async () => {
    const { settler, url, runtime } = await paidServer();
    const inFlight = post(url, job("slow", { ms: 400 }), { "payment-signature": await pay() });
    await new Promise((r) => setTimeout(r, 100));
    // Draining without closing the listener, so a new job can still reach the app (in real life it
    // arrives on a keep-alive connection opened before the shutdown).
    const drained = runtime.drain.drain(5000);
    const late = await post(url, job("echo", { text: "x" }), { "payment-signature": await pay() });
    expect(late.status).toBe(503);
    expect(late.headers.get("retry-after")).toBe("1");
    expect(late.headers.get("connection")).toBe("close");
    expect(late.body).toMatchObject({ status: "failed", error_type: "internal" });
    expect(late.body.error).toMatch(/shutting down.*nothing was run or charged/);
    expect((await fetch(`${url}/health`)).status).toBe(503);
    expect((await inFlight).status).toBe(200);
    expect(await drained).toEqual({ cut: false });
    expect(settler.settled()).toBe(1);
  });

  it("after the drain timeout, a job still in its handler gets 503 and is not charged", async () => {
    const { settler, url, runtime } = await paidServer();
    const header = await pay();
    const inFlight = post(url, job("slow", { ms: 5000, ignoreSignal: true }), {
      "payment-signature": header,
    });
    await new Promise((r) => setTimeout(r, 100));
    const result = await shutdownGracefully(server!, runtime, 300);
    expect(result).toEqual({ cut: true });
    const res = await inFlight;
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/shutting down.*nothing was charged/);
    expect(settler.settled()).toBe(0);
    // Its authorization was freed on the way out: reserving it again succeeds.
    expect(
      (
        await runtime.ledger.reserve(
          `84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:${anvilAccount().address.toLowerCase()}:${JSON.parse(Buffer.from(header, "base64").toString()).payload.authorization.nonce}`,
          1000,
        )
      ).status,
    ).toBe("reserved");
  });

  it("a job that is settling when the drain times out is settled and answered, never cut", async () => {
    const settler = recordingSettler();
    settler.behave.delayMs = 800;
    const { url, runtime } = await paidServer(settler);
    const inFlight = post(url, job("echo", { text: "x" }), { "payment-signature": await pay() });
    await new Promise((r) => setTimeout(r, 200)); // now inside settle()
    const result = await shutdownGracefully(server!, runtime, 100);
    expect(result).toEqual({ cut: true });
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.headers.get("payment-response")).not.toBeNull();
    expect(settler.settled()).toBe(1);
  });
});
