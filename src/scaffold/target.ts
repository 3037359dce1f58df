import { readdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

export type TargetState =
  | { kind: "missing" }
  | { kind: "empty" }
  | { kind: "non-empty"; entries: string[] }
  | { kind: "file" }
  /** The target cannot be a folder: `file`, a folder on its way, is a file. */
  | { kind: "blocked"; file: string };

/** What is at the target path. A folder holding only `.git` counts as empty (a fresh clone or `git init`). */
export async function inspectTarget(dir: string): Promise<TargetState> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "missing" };
    if (code === "ENOTDIR") return blockedBy(dir);
    throw error;
  }
  const others = entries.filter((e) => e !== ".git").sort();
  return others.length === 0 ? { kind: "empty" } : { kind: "non-empty", entries: others };
}

/** ENOTDIR: the target itself is a file, or the nearest existing folder on its way is one. */
async function blockedBy(dir: string): Promise<TargetState> {
  for (let path = dir; ; path = dirname(path)) {
    const found = await stat(path).catch(() => undefined);
    if (found && !found.isDirectory())
      return path === dir ? { kind: "file" } : { kind: "blocked", file: path };
    if (found || dirname(path) === path) return { kind: "file" }; // not expected: said as before
  }
}
