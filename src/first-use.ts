/**
 * Packages create-agent needs only for one command, installed the first time that command needs them
 * rather than with every project: the x402 client `call` and `smoke --pay` pay with, the facilitator and
 * the local chain `dev --paid` runs. Each is imported from where create-agent runs when it is there (the
 * repo's install, a project that installed it), else installed once into a cache folder
 * (node_modules/.cache/<name> of the project create-agent is vendored in, or of create-agent itself),
 * saying so on stderr, and imported from there. No package.json changes. A set that brings dependencies
 * of its own (the x402 client: viem, ox, zod, @noble/*) is installed from a lockfile shipped in locks/, so
 * every package in it, not only the ones named, is the version and the bytes create-agent was tested with.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { takeLock } from "./lock.js";
import { fileURLToPath, pathToFileURL } from "node:url";

export type Importer = (specifier: string) => Promise<unknown>;

/** create-agent's own folder (the repo, or node_modules/create-agent in a project). */
export function toolRoot(): string {
  return fileURLToPath(new URL("../", import.meta.url)).replace(/[\\/]$/, "");
}

/** node_modules/.cache/<name>: of the project create-agent is vendored in, else of create-agent's own folder. */
export function cacheFolder(name: string, root = toolRoot()): string {
  const parent = dirname(root);
  const nodeModules = basename(parent) === "node_modules" ? parent : join(root, "node_modules");
  return join(nodeModules, ".cache", name);
}

/** Whether an import failed because the package is not installed (rather than broken). */
export function notInstalled(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
}

/**
 * An importer resolving as an import written in a file of `folder` does (ESM conditions), so packages
 * installed there are found, and, walking up, those of the project around it.
 */
export async function importerIn(folder: string): Promise<Importer> {
  const file = join(folder, "import.mjs");
  if (!existsSync(file)) {
    mkdirSync(folder, { recursive: true });
    writeFileSync(file, "export default (specifier) => import(specifier);\n");
  }
  const loaded = (await import(pathToFileURL(file).href)) as { default: Importer };
  return loaded.default;
}

/** A package-lock.json (lockfileVersion 3) shipped with create-agent for one first-use set. */
interface Lockfile {
  name: string;
  packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
}

/**
 * The lockfile at `path`, checked to pin exactly `specs` (name@version) as its root's dependencies;
 * throws naming the script that rewrites it when it does not (a version table changed without it).
 */
export function readLock(path: string, specs: readonly string[]): Lockfile {
  const lock = JSON.parse(readFileSync(path, "utf8")) as Lockfile;
  const root = lock.packages[""]?.dependencies ?? {};
  const pinned = Object.entries(root).map(([name, version]) => `${name}@${version}`);
  const same = pinned.length === specs.length && specs.every((spec) => pinned.includes(spec));
  if (!same)
    throw new Error(
      `${path} pins ${pinned.join(", ") || "nothing"}, not ${specs.join(", ")}: run node scripts/first-use-lock.mjs`,
    );
  return lock;
}

/**
 * Installs `specs` (name@version) into `folder`, npm's output on stderr (stdout may be a command's
 * result): with `lockfile` (one from locks/), `npm ci` of exactly that tree, each package checked
 * against the lock's integrity; else `npm install` of the specs. True when npm succeeded, or when another
 * process installed them meanwhile: one install at a time per folder (a lock folder beside it), so
 * parallel first uses never mix two npm runs.
 */
export function installInto(
  folder: string,
  specs: readonly string[],
  what: string,
  lockfile?: string,
): boolean {
  mkdirSync(folder, { recursive: true });
  const lock = `${folder}.installing`;
  if (!takeLock(lock)) return false;
  try {
    if (specs.every((spec) => installedIn(folder, spec))) return true; // another process did it
    process.stderr.write(
      `First use: installing ${what} (${specs.join(", ")}) into ${folder} (once; your package.json is not changed)\n`,
    );
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const quiet = ["--no-audit", "--no-fund"];
    if (lockfile) writeLockedTree(folder, lockfile, specs);
    const argv = lockfile
      ? ["ci", ...quiet]
      : ["install", "--no-save", "--no-package-lock", ...quiet, ...specs];
    const result = spawnSync(npm, ["--prefix", folder, ...argv], {
      cwd: folder,
      stdio: ["ignore", process.stderr, process.stderr],
      shell: process.platform === "win32",
    });
    return result.status === 0;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Writes the lockfile `lock` and the package.json it was made from into `folder`, for `npm ci`. */
function writeLockedTree(folder: string, lock: string, specs: readonly string[]): void {
  const tree = readLock(lock, specs);
  const pkg = { name: tree.name, private: true, dependencies: tree.packages[""]?.dependencies };
  writeFileSync(join(folder, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(folder, "package-lock.json"), `${JSON.stringify(tree, null, 2)}\n`);
}

/** Whether `name@version` is installed in `folder` (false for any other kind of spec). */
function installedIn(folder: string, spec: string): boolean {
  const match = /^(@?[^@]+)@(\d[^@]*)$/.exec(spec);
  if (!match) return false;
  try {
    const pkg = join(folder, "node_modules", match[1]!, "package.json");
    return (JSON.parse(readFileSync(pkg, "utf8")) as { version?: string }).version === match[2];
  } catch {
    return false;
  }
}

/**
 * The modules `specifiers` name: with `own` (create-agent's resolution) when installed there, else from
 * the cache folder `cache`, installing `specs` into it first when they are not there yet. Throws the
 * first import's error when they cannot be had (a broken package, or an install that failed).
 */
export async function importOnFirstUse(
  specifiers: readonly string[],
  install: { cache: string; specs: readonly string[]; what: string; lockfile?: string },
  own: Importer = (specifier) => import(specifier),
): Promise<unknown[]> {
  try {
    return await Promise.all(specifiers.map((s) => own(s)));
  } catch (error) {
    if (!notInstalled(error)) throw error;
    const cached = await importerIn(install.cache);
    try {
      return await Promise.all(specifiers.map((s) => cached(s)));
    } catch (cacheError) {
      if (!notInstalled(cacheError)) throw cacheError;
      if (!installInto(install.cache, install.specs, install.what, install.lockfile)) throw error;
      return Promise.all(specifiers.map((s) => cached(s)));
    }
  }
}
