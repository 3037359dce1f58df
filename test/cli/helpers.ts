import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { execa } from "execa";
import { afterEach, expect } from "vitest";

export const CLI = join(import.meta.dirname, "../../bin/create-agent.js");
export const FIXTURES = join(import.meta.dirname, "../../fixtures");

/** Runs the built CLI like a user in a terminal-less shell; never throws on a non-zero exit. */
export function cli(args: string[], cwd?: string) {
  return execa("node", [CLI, ...args], {
    cwd,
    reject: false,
    all: true,
    stdin: "ignore",
    env: { npm_config_user_agent: "" },
  });
}

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh temp folder, removed after the current test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "create-agent-test-"));
  made.push(dir);
  return dir;
}

const ROOT = join(import.meta.dirname, "../..");

/**
 * A copy of the tool with only its runtime dependencies, as `npm ci --omit=dev` leaves it (no x402 client,
 * no viem): its folder. With `cached`, those packages of this repo are linked into its first-use cache
 * (node_modules/.cache/create-agent-x402), as a first use would have installed them.
 */
export async function lightTool(cached: string[] = []): Promise<string> {
  const tool = join(await tempDir(), "create-agent");
  await mkdir(join(tool, "node_modules"), { recursive: true });
  for (const part of ["bin", "dist", "locks", "package.json"])
    await cp(join(ROOT, part), join(tool, part), { recursive: true });
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const link = async (name: string, into: string) => {
    await mkdir(join(into, name, ".."), { recursive: true });
    await symlink(join(ROOT, "node_modules", name), join(into, name), "dir");
  };
  for (const name of Object.keys(pkg.dependencies)) await link(name, join(tool, "node_modules"));
  const cache = join(tool, "node_modules/.cache/create-agent-x402/node_modules");
  for (const name of cached) await link(name, cache);
  return tool;
}

/**
 * A project made by the real CLI from the e2e manifest (two capabilities), without install or git; with
 * every optional feature unless `features` says otherwise (a --features value).
 */
export async function scaffold(features = "all"): Promise<string> {
  const dir = join(await tempDir(), "agent");
  const result = await cli([
    dir,
    "--yes",
    "--no-install",
    "--no-git",
    "--features",
    features,
    "--manifest",
    join(FIXTURES, "e2e/agent.json"),
  ]);
  expect(result.exitCode, result.all).toBe(0);
  return dir;
}

/** Every file under dir as { relative path: contents }, for whole-tree comparisons. */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  for (const entry of entries
    .filter((e) => e.isFile())
    .sort((a, b) => (a.parentPath + a.name).localeCompare(b.parentPath + b.name))) {
    const full = join(entry.parentPath, entry.name);
    out[relative(dir, full)] = await readFile(full, "utf8");
  }
  return out;
}

/** Each dotted path of `object` ("fetch.x402Client", or a method name) is a function. */
export function expectFunctions(object: unknown, paths: readonly string[]): void {
  for (const path of paths) {
    const value = path
      .split(".")
      .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], object);
    expect(typeof value, path).toBe("function");
  }
}
