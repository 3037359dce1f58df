import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { compareVersions, projectToolVersion } from "../upgrade/project-version.js";
import { CliError } from "./errors.js";

/**
 * The project folder a command works on: --cwd, else the current folder; it must hold agent.json.
 * In a module of its own (no generator imports) so the CLI can check it before loading a command.
 */
export function projectRoot(cwd: string | undefined): string {
  const root = resolve(cwd ?? ".");
  if (!existsSync(join(root, "agent.json"))) {
    throw new CliError(
      `no agent.json in ${root}: run this inside a project made by create-agent, or pass --cwd <project folder>`,
    );
  }
  return root;
}

/** This create-agent's version (its package.json, two levels above src/cli and dist/cli alike), read once. */
let version: string | undefined;
export function toolVersion(): string {
  version ??= (
    JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    }
  ).version;
  return version;
}

/** How to run this very create-agent again, for messages (never a bare `npx create-agent`). */
export function thisCli(args: string): string {
  const script = process.argv[1] ?? "create-agent";
  return `node ${/\s/.test(script) ? JSON.stringify(script) : script} ${args}`;
}

/**
 * Refuses to change a project made by an older create-agent: code this version generates needs the
 * runtime it ships, which the project does not have until `upgrade`. The project's own scripts (npm run
 * generate...) run the create-agent that made it, so they are never refused.
 */
export function requireUpgraded(root: string): void {
  let made: string | undefined;
  try {
    made = projectToolVersion(root);
  } catch (error) {
    throw new CliError(`${(error as Error).message}; fix it first (nothing was changed)`);
  }
  const current = toolVersion();
  if (made === undefined || compareVersions(made, current) >= 0) return;
  throw new CliError(
    `this project was made by create-agent ${made}; this is ${current}, whose generated code needs its newer runtime. ` +
      `Run upgrade first: ${thisCli(`upgrade --cwd ${JSON.stringify(root)}`)} (or use the project's own ${made}: its npm scripts run it)`,
  );
}
