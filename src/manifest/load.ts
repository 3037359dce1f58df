/** Entry points: manifest text or file -> validated AgentModel, or a ManifestError listing every problem. */
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { ManifestError } from "./errors.js";
import type { AgentManifest, AgentModel } from "./model.js";
import { buildModel } from "./model-build.js";
import { parseJsonText } from "./parse.js";
import { Source } from "./source.js";
import { validateManifest } from "./validate.js";

/** Parses and validates `text`; `file` is only used in messages. */
export function parseManifest(text: string, file: string): AgentModel {
  // Editors on Windows may save a byte-order mark; it is invisible, so drop it rather than report it.
  const clean = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const src = new Source(clean, file);
  const root = parseJsonText(src);
  if (root !== undefined) validateManifest(src, root);
  if (src.problems.length > 0) throw new ManifestError(src.sortedProblems());
  // Strict JSON without duplicates by now, so JSON.parse gives exactly the validated tree.
  return buildModel(JSON.parse(clean) as AgentManifest);
}

/** Reads and parses a manifest file. `displayName` defaults to the path relative to the working directory. */
export async function loadManifest(path: string, displayName?: string): Promise<AgentModel> {
  const absolute = resolve(path);
  const file = displayName ?? defaultDisplayName(absolute);
  const fail = (message: string): never => {
    throw new ManifestError([{ file, path: "", message }]);
  };
  let text: string;
  try {
    if ((await stat(absolute)).isDirectory()) {
      fail(`is a directory, not a manifest file (looked at ${absolute}); point at the agent.json inside it`);
    }
    text = await readFile(absolute, "utf8");
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return fail(`file not found (looked at ${absolute})`);
    if (code === "EACCES" || code === "EPERM") return fail(`cannot read the file: permission denied (${absolute})`);
    return fail(`cannot read the file: ${(error as Error).message}`);
  }
  return parseManifest(text, file);
}

function defaultDisplayName(absolute: string): string {
  const rel = relative(process.cwd(), absolute);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? absolute : rel;
}
