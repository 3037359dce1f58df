import { execFile } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { PackageManager } from "../generate/package-manager.js";
import { TOOL_ROOT } from "../scaffold/tool-home.js";
import { readTarGz } from "../scaffold/tarball.js";
import { listFiles } from "../write/apply.js";

/**
 * The most a vendored create-agent may unpack to. The real one is well under 2 MB; a larger archive (a
 * gzip bomb) is refused before it can fill memory.
 */
export const MAX_TOOL_BYTES = 64 * 1024 * 1024;

/** Folders of a scaffolded project that are never part of the merge base. */
const SKIPPED = new Set([".git", "node_modules"]);

/** How long the older create-agent may take to scaffold the base (it packs itself, writes ~70 files). */
const SCAFFOLD_TIMEOUT_MS = 120_000;

/**
 * The only variables of the environment the older create-agent is given: where programs, the home and
 * temporary folders are, and the locale. Never the rest: payer keys, API tokens and the like stay out of a
 * program that was merely unpacked from the project (which anyone with write access to it could change).
 */
const PASSED_VARIABLES = [
  "PATH",
  "HOME",
  "TMPDIR",
  "TMP",
  "TEMP",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  // Windows needs these to start processes and find its folders.
  "SystemRoot",
  "SYSTEMROOT",
  "windir",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "PATHEXT",
  "ComSpec",
];

/** What the older create-agent runs with: the passed variables only, plus CI=1 (never a prompt). */
export function vendoredToolEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const name of PASSED_VARIABLES) if (env[name] !== undefined) kept[name] = env[name];
  // No npm_config_user_agent: --package-manager says which one.
  return { ...kept, CI: "1" };
}

/** Paths an unpacked create-agent must have: without them it is not one. */
const TOOL_FILES = ["package.json", "bin/create-agent.js"];

/**
 * What the create-agent that made a project generated for it: the merge base of `upgrade`. The project
 * holds that very tool in vendor/ (the tarball its `create-agent` devDependency points at), so it is
 * unpacked into a temporary folder and asked to scaffold the project's agent.json (`manifestText`) again
 * (same package manager and features, no install, no git) into another one. Its dependencies are the project's installed ones when
 * present, else this create-agent's own (the same libraries). Returns every file it wrote, by
 * project-relative POSIX path. Temporary folders are removed; nothing in the project is touched.
 */
export async function pristineProject(
  root: string,
  tarball: string,
  manifestText: string,
  packageManager: PackageManager,
  features?: readonly string[],
): Promise<Map<string, Buffer>> {
  const tarballFile = resolve(root, tarball);
  if (!existsSync(tarballFile))
    throw new Error(
      `${tarball} is missing: upgrade needs the create-agent that made this project (its vendored tarball) to know what it generated. Restore it (e.g. \`git checkout -- ${tarball}\`)`,
    );
  const work = await mkdtemp(join(tmpdir(), "create-agent-upgrade-"));
  // Stopped meanwhile (Ctrl-C, a closed terminal): the temporary folder goes too, then the process.
  const stop = (signal: NodeJS.Signals) => {
    try {
      // The old create-agent may still be writing there: retried, and never a crash instead of the exit.
      rmSync(work, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      process.stderr.write(`create-agent: stopped; remove the temporary folder ${work}\n`);
    }
    process.exit(128 + (constants.signals[signal] ?? 1));
  };
  for (const signal of STOP_SIGNALS) process.once(signal, stop);
  try {
    const tool = join(work, "tool");
    await unpackTool(tarballFile, tarball, tool);
    await linkDependencies(tool, [root, TOOL_ROOT]);
    const base = join(work, "base");
    const manifest = join(work, "agent.json");
    await writeFile(manifest, manifestText);
    await run(
      join(tool, "bin", "create-agent.js"),
      [
        base,
        "--yes",
        "--no-install",
        "--no-git",
        "--manifest",
        manifest,
        "--package-manager",
        packageManager,
        // Only a create-agent that records features knows the flag (an older one made them all).
        ...(features ? ["--features", features.join(",") || "none"] : []),
      ],
      work,
    );
    const files = new Map<string, Buffer>();
    for (const path of await listFiles(base, "."))
      if (!SKIPPED.has(path.split("/")[0]!)) files.set(path, await readFile(join(base, path)));
    return files;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
    await rm(work, { recursive: true, force: true });
  }
}

/** The signals that stop upgrade (HUP: the terminal closed); cli/upgrade.ts holds the same while it writes. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The vendored create-agent (`tarball`, at `tarballFile`) unpacked into `tool`; one that is none is refused. */
async function unpackTool(tarballFile: string, tarball: string, tool: string): Promise<void> {
  let entries;
  try {
    entries = readTarGz(await readFile(tarballFile), MAX_TOOL_BYTES);
  } catch (error) {
    throw new Error(`${tarball} is not a valid create-agent tarball: ${(error as Error).message}`);
  }
  const paths = new Set(entries.map((entry) => entry.path));
  const missing = TOOL_FILES.filter((path) => !paths.has(`package/${path}`));
  if (missing.length > 0)
    throw new Error(
      `${tarball} is not a valid create-agent tarball: it has no ${missing.map((p) => `package/${p}`).join(" or ")}`,
    );
  for (const entry of entries) {
    const path = entry.path.replace(/^package\//, "");
    await mkdir(dirname(join(tool, path)), { recursive: true });
    await writeFile(join(tool, path), entry.contents);
  }
}

/**
 * node_modules/<dependency> links for the unpacked tool: each dependency its package.json lists, found in
 * the first of `from` whose node_modules (or a parent folder's) holds it.
 */
async function linkDependencies(tool: string, from: string[]): Promise<void> {
  const pkg = JSON.parse(await readFile(join(tool, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const missing: string[] = [];
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    const found = from.map((start) => findPackage(start, name)).find((dir) => dir !== undefined);
    if (!found) {
      missing.push(name);
      continue;
    }
    const link = join(tool, "node_modules", name);
    await mkdir(dirname(link), { recursive: true });
    await symlink(found, link, "junction");
  }
  if (missing.length > 0)
    throw new Error(
      `the create-agent that made this project needs ${missing.join(", ")}, found neither in the project's node_modules nor next to this create-agent: run npm install in the project first`,
    );
}

/** The folder of package `name` as Node would find it from `start` (node_modules of it or a parent). */
function findPackage(start: string, name: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

function run(script: string, args: string[], cwd: string): Promise<void> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [script, ...args],
      {
        cwd,
        timeout: SCAFFOLD_TIMEOUT_MS,
        env: vendoredToolEnvironment(),
      },
      (error, _stdout, stderr) => {
        if (!error) return done();
        const why = stderr.trim().split("\n").slice(-5).join("\n") || error.message;
        fail(
          new Error(
            `the create-agent that made this project could not regenerate its original files:\n${why}`,
          ),
        );
      },
    );
  });
}
