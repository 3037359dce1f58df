import { readdir } from "node:fs/promises";

export type TargetState = { kind: "missing" } | { kind: "empty" } | { kind: "non-empty"; entries: string[] } | { kind: "file" };

/** What is at the target path. A folder holding only `.git` counts as empty (a fresh clone or `git init`). */
export async function inspectTarget(dir: string): Promise<TargetState> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "missing" };
    if (code === "ENOTDIR") return { kind: "file" };
    throw error;
  }
  const others = entries.filter((e) => e !== ".git").sort();
  return others.length === 0 ? { kind: "empty" } : { kind: "non-empty", entries: others };
}
