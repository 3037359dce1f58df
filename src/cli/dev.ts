import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { CliError } from "./errors.js";
import { projectRoot, requireUpgraded } from "./project-root.js";

/** The project `dev` and `dev --paid` run in (upgraded to this CLI), and its tsx, or what to install. */
export function devProject(cwd: string | undefined): { root: string; tsx: string } {
  const root = projectRoot(cwd);
  requireUpgraded(root);
  const tsx = join(root, "node_modules", ".bin", process.platform === "win32" ? "tsx.cmd" : "tsx");
  if (!existsSync(tsx))
    throw new CliError(`tsx is not installed in ${root}: run \`npm install\` first`);
  return { root, tsx };
}

/**
 * `create-agent dev` (the project's `npm run dev`): the server in dev mode under `tsx watch`, plus
 * `generate --watch`, in one command. A save of agent.json regenerates src/generated/, and tsx restarts the
 * server on the new code. Ctrl-C stops both; if the server exits on its own, watching stops too.
 */
export async function dev(options: { cwd?: string }): Promise<number> {
  const { root, tsx } = devProject(options.cwd);

  await ensurePortFree(devPort(root));

  const firstStart = await listenForFirstStart();
  const server = spawn(tsx, ["watch", "src/dev.ts"], {
    cwd: root,
    stdio: "inherit",
    shell: process.platform === "win32",
    env: { ...process.env, [START_REPORT_ENV]: firstStart.address },
  });
  const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const watching = new AbortController();
  void exited.then(() => watching.abort());
  // A server that stops before it listens (a configuration it refuses, such as NODE_ENV=production, or
  // a busy port) would leave tsx waiting for a change and nothing serving: stop everything instead.
  let refused = false;
  void firstStart.outcome.then((outcome) => {
    firstStart.close();
    if (outcome !== "stopped") return;
    refused = true;
    watching.abort();
  });

  // Loaded once the server is starting: the generators take a moment to load, and tsx need not wait for them.
  const { watchManifest } = await import("./watch.js");
  const watchCode = await watchManifest(root, { signal: watching.signal });
  firstStart.close();
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  const [serverCode] = await exited;
  if (refused) {
    process.stderr.write(
      "create-agent dev: the server stopped before it listened (its reason is above), so nothing is running.\n",
    );
    return 1;
  }
  return watchCode || (serverCode ?? 0);
}

/**
 * Set for src/dev.ts: `<port>:<token>` of a local socket it connects to before the server starts and
 * writes "listening" to once the server listens. The connection closing before that line means the
 * server process ended before it listened.
 */
const START_REPORT_ENV = "CREATE_AGENT_DEV_REPORT";

/**
 * Waits for src/dev.ts to say how the first server start went: "listening", or "stopped" when its
 * connection closed first. Only the first start counts: a later restart by tsx that fails (a typo being
 * fixed) keeps the dev loop running. Projects whose dev.ts never connects keep the old behaviour.
 */
async function listenForFirstStart(): Promise<{
  address: string;
  outcome: Promise<"listening" | "stopped">;
  close(): void;
}> {
  const token = randomBytes(16).toString("hex");
  let settle!: (outcome: "listening" | "stopped") => void;
  const outcome = new Promise<"listening" | "stopped">((resolve) => (settle = resolve));
  const server = createServer((socket) => {
    let text = "";
    let ours = false;
    let listening = false;
    socket.setEncoding("utf8");
    socket.on("error", () => undefined); // a reset is how a dying server's connection may end
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > 1000) return socket.destroy(); // not src/dev.ts
      ours ||= text.startsWith(`${token}\n`);
      if (ours && /^listening$/m.test(text)) {
        listening = true;
        settle("listening");
      }
    });
    socket.on("close", () => {
      if (ours && !listening) settle("stopped");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return { address: `${port}:${token}`, outcome, close: () => server.close() };
}

/** The port the dev server will listen on: PORT from the environment, else from .env, else 3000. */
export function devPort(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.PORT) return env.PORT;
  const file = join(root, ".env");
  if (existsSync(file)) {
    const match = /^\s*PORT\s*=\s*["']?(\d+)["']?\s*$/m.exec(readFileSync(file, "utf8"));
    if (match) return match[1]!;
  }
  return "3000";
}

/**
 * Refuses to start when another process already listens on the port: `tsx watch` would otherwise
 * keep waiting for changes behind a server that exited, and nothing would serve.
 */
export async function ensurePortFree(port: string): Promise<void> {
  if (!/^\d+$/.test(port) || Number(port) === 0) return; // the server itself reports a bad PORT
  const probe = createServer();
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    probe.once("error", resolve);
    probe.listen(Number(port), () => probe.close(() => resolve(undefined)));
  });
  if (problem?.code === "EADDRINUSE") {
    const free = await freePortNear(Number(port));
    throw new CliError(`port ${port} is busy: ${portInUse(Number(port), free)}`);
  }
}

/** Whether nothing listens on `port` on any interface (as the dev server binds). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * The first port after `port` (then before it, at the top of the range) that is free now: the
 * runtime's freePortNear (templates/runtime/ops/port-help.ts), which a test holds to the same answer.
 */
export async function freePortNear(port: number): Promise<number | undefined> {
  for (let i = 1; i <= 50; i++) {
    const candidate = port + i <= 65535 ? port + i : port - i;
    if (candidate > 0 && (await isFree(candidate))) return candidate;
  }
  return undefined;
}

/**
 * The help the server's runtime gives for a busy PORT (templates/runtime/ops/port-help.ts portInUse; a
 * test holds the two to the same words): how to find the other process, and a port checked free.
 */
export function portInUse(port: number, free: number | undefined): string {
  const find =
    process.platform === "win32" ? `netstat -ano | findstr :${port}` : `lsof -i :${port}`;
  const instead =
    free === undefined
      ? "set PORT to a free port in .env or before the command"
      : `set PORT to a free port, e.g. \`PORT=${free}\` (free right now) in .env or before the command`;
  return `another process is listening on port ${port} (see which with \`${find}\`): stop it, or ${instead}`;
}
