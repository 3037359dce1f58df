import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { PackageManager } from "../generate/package-manager.js";
import { TOOL_ROOT } from "../scaffold/tool-home.js";
import { readTarGz } from "../scaffold/tarball.js";
import { listFiles } from "../write/apply.js";

/** Folders of a scaffolded project that are never part of the merge base. */
const SKIPPED = new Set([".git", "node_modules"]);

/** How long the older create-agent may take to scaffold the base (it packs itself, writes ~70 files). */
const SCAFFOLD_TIMEOUT_MS = 120_000;

/**
 * What the create-agent that made a project generated for it: the merge base of `upgrade`. The project
 * holds that very tool in vendor/ (the tarball its `create-agent` devDependency points at), so it is
 * unpacked into a temporary folder and asked to scaffold the project's agent.json (`manifestText`) again
 * (same package manager, no install, no git) into another one. Its dependencies are the project's installed ones when
 * present, else this create-agent's own (the same libraries). Returns every file it wrote, by
 * project-relative POSIX path. Temporary folders are removed; nothing in the project is touched.
 */
export async function pristineProject(
  root: string,
  tarball: string,
  manifestText: string,
  packageManager: PackageManager,
): Promise<Map<string, Buffer>> {
  const tarballFile = resolve(root, tarball);
  if (!existsSync(tarballFile))
    throw new Error(
      `${tarball} is missing: upgrade needs the create-agent that made this project (its vendored tarball) to know what it generated. Restore it (e.g. \`git checkout -- ${tarball}\`)`,
    );
  const work = await mkdtemp(join(tmpdir(), "create-agent-upgrade-"));
  try {
    const tool = join(work, "tool");
    for (const entry of readTarGz(await readFile(tarballFile))) {
      const path = entry.path.replace(/^package\//, "");
      await mkdir(dirname(join(tool, path)), { recursive: true });
      await writeFile(join(tool, path), entry.contents);
    }
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
      ],
      work,
    );
    const files = new Map<string, Buffer>();
    for (const path of await listFiles(base, "."))
      if (!SKIPPED.has(path.split("/")[0]!)) files.set(path, await readFile(join(base, path)));
    return files;
  } finally {
    await rm(work, { recursive: true, force: true });
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
      // No npm_config_user_agent: --package-manager says which one; CI=1: never a prompt.
      {
        cwd,
        timeout: SCAFFOLD_TIMEOUT_MS,
        env: { ...process.env, npm_config_user_agent: "", CI: "1" },
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
