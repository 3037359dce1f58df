/**
 * `create`'s guard against a mistyped command: `create-agent upgarde` in a project is `create upgarde`,
 * which would scaffold and install a second project inside the first. A bare name (no path) given
 * inside an agent project is refused, naming the command it looks like; a path (`./upgarde`) says the
 * folder is meant.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { suggest } from "../suggest.js";
import { CliError } from "./errors.js";

/** The agent project (a folder with agent.json) holding `folder`, if any. */
function enclosingProject(folder: string): string | undefined {
  for (let dir = resolve(folder); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "agent.json"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Throws when `directory` is a bare name given inside an agent project (see the header). */
export function refuseStrayCommand(directory: string | undefined, commands: string[]): void {
  if (directory === undefined || /[\\/]/.test(directory) || directory.startsWith(".")) return;
  const project = enclosingProject(process.cwd());
  if (project === undefined) return;
  const meant = suggest(
    directory,
    commands.filter((name) => name !== "create" && name !== "help"),
  );
  throw new CliError(
    `"${directory}" is not a command${meant ? ` (did you mean ${meant}?)` : ""}, and this folder is inside ` +
      `the agent project ${project}, so it would create a second project in it. Its commands: ` +
      `${commands.filter((name) => name !== "create").join(", ")}. ` +
      `To create a project there anyway, give a path: ./${directory}`,
  );
}
