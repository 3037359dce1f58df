import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
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
