import { existsSync } from "node:fs";
import { join } from "node:path";
import { run } from "./install.js";

export type GitResult = "committed" | "initialized" | "skipped: existing repository" | "skipped: git not available";

/**
 * Makes the project its own repository with a first commit. Leaves alone a folder that is already a
 * repository (or inside one, like a monorepo). Without a git identity, the repository is created and the
 * files staged, but not committed.
 */
export async function initGit(dir: string): Promise<GitResult> {
  if (!(await run("git", ["--version"], dir, "ignore"))) return "skipped: git not available";
  if (existsSync(join(dir, ".git")) || (await run("git", ["rev-parse", "--is-inside-work-tree"], dir, "ignore"))) {
    return "skipped: existing repository";
  }
  if (!(await run("git", ["init", "--quiet"], dir, "ignore"))) return "skipped: git not available";
  await run("git", ["add", "--all"], dir, "ignore");
  const committed = await run("git", ["commit", "--quiet", "--message", "Initial commit from create-agent"], dir, "ignore");
  return committed ? "committed" : "initialized";
}
