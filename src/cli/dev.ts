import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { CliError } from "./errors.js";
import { projectRoot, requireUpgraded } from "./project-root.js";

/**
 * `create-agent dev` (the project's `npm run dev`): the server in dev mode under `tsx watch`, plus
 * `generate --watch`, in one command. A save of agent.json regenerates src/generated/, and tsx restarts the
 * server on the new code. Ctrl-C stops both; if the server exits on its own, watching stops too.
 */
export async function dev(options: { cwd?: string }): Promise<number> {
  const root = projectRoot(options.cwd);
  requireUpgraded(root);
  const tsx = join(root, "node_modules", ".bin", process.platform === "win32" ? "tsx.cmd" : "tsx");
  if (!existsSync(tsx))
    throw new CliError(`tsx is not installed in ${root}: run \`npm install\` first`);

  await ensurePortFree(devPort(root));

  const server = spawn(tsx, ["watch", "src/dev.ts"], {
    cwd: root,
    stdio: "inherit",
    shell: process.platform === "win32",
  });
  const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const watching = new AbortController();
  void exited.then(() => watching.abort());

  // Loaded once the server is starting: the generators take a moment to load, and tsx need not wait for them.
  const { watchManifest } = await import("./watch.js");
  const watchCode = await watchManifest(root, { signal: watching.signal });
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  const [serverCode] = await exited;
  return watchCode || (serverCode ?? 0);
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
  if (problem?.code === "EADDRINUSE")
    throw new CliError(`port ${port} is busy: ${portInUse(Number(port))}`);
}

/**
 * The help the server's runtime gives for a busy PORT (templates/runtime/server.ts portInUse; a test
 * holds the two to the same words): how to find the other process, and what to set.
 */
export function portInUse(port: number): string {
  const find =
    process.platform === "win32" ? `netstat -ano | findstr :${port}` : `lsof -i :${port}`;
  const free = port === 65535 ? port - 1 : port + 1;
  return (
    `another process is listening on port ${port} (see which with \`${find}\`): ` +
    `stop it, or set PORT to a free port, e.g. \`PORT=${free}\` in .env or before the command`
  );
}
