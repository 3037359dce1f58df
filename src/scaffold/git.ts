import { existsSync } from "node:fs";
import { join } from "node:path";
import { run } from "./install.js";

export type GitResult =
  "committed" | "initialized" | "skipped: existing repository" | "skipped: git not available";

/**
 * Makes the project its own repository with a first commit. Leaves alone a folder that is already a
 * repository (or inside one, like a monorepo). Without a git identity, the repository is created and the
 * files staged, but not committed.
 */
export async function initGit(dir: string): Promise<GitResult> {
  if (existsSync(join(dir, ".git"))) return "skipped: existing repository";
  // One git run both finds git (it cannot start without one) and asks whether dir is inside a repository.
  const inside = await gitExit(["rev-parse", "--is-inside-work-tree"], dir);
  if (inside === "missing") return "skipped: git not available";
  if (inside === 0) return "skipped: existing repository";
  if (!(await run("git", ["init", "--quiet"], dir, "ignore"))) return "skipped: git not available";
  await run("git", ["add", "--all"], dir, "ignore");
  const committed = await run(
    "git",
    ["commit", "--quiet", "--message", "Initial commit from create-agent"],
    dir,
    "ignore",
  );
  return committed ? "committed" : "initialized";
}

/** git's exit code, or "missing" when git cannot start (not installed, not on PATH). */
async function gitExit(args: string[], cwd: string): Promise<number | "missing"> {
  const { spawn } = await import("node:child_process"); // loaded only when git runs
  return new Promise((resolve) => {
    const child = spawn("git", args, {
      cwd,
      stdio: "ignore",
      shell: process.platform === "win32",
    });
    child.on("error", () => resolve("missing"));
    child.on("close", (code) => resolve(code ?? 1));
  });
}

/**
 * Whether the repository dir is in has changes not committed (false without git, or outside a
 * repository): upgrade says so, since its own changes then mix with them in `git diff`.
 */
export async function hasUncommittedChanges(dir: string): Promise<boolean> {
  const { execFile } = await import("node:child_process"); // loaded only when git runs
  return new Promise((resolve) => {
    execFile("git", ["status", "--porcelain"], { cwd: dir, timeout: 10_000 }, (error, stdout) =>
      resolve(!error && stdout.trim() !== ""),
    );
  });
}
