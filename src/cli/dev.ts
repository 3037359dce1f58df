import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./errors.js";
import { projectRoot } from "./generate.js";
import { watchManifest } from "./watch.js";

/**
 * `create-agent dev` (the project's `npm run dev`): the server in dev mode under `tsx watch`, plus
 * `generate --watch`, in one command. A save of agent.json regenerates src/generated/, and tsx restarts the
 * server on the new code. Ctrl-C stops both; if the server exits on its own, watching stops too.
 */
export async function dev(options: { cwd?: string }): Promise<number> {
  const root = projectRoot(options.cwd);
  const tsx = join(root, "node_modules", ".bin", process.platform === "win32" ? "tsx.cmd" : "tsx");
  if (!existsSync(tsx))
    throw new CliError(`tsx is not installed in ${root}: run \`npm install\` first`);

  const server = spawn(tsx, ["watch", "src/dev.ts"], {
    cwd: root,
    stdio: "inherit",
    shell: process.platform === "win32",
  });
  const exited = once(server, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const watching = new AbortController();
  void exited.then(() => watching.abort());

  const watchCode = await watchManifest(root, { signal: watching.signal });
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  const [serverCode] = await exited;
  return watchCode || (serverCode ?? 0);
}
