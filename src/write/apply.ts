import { existsSync, readlinkSync, realpathSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { GeneratedFile } from "../generate/file-set.js";
import { GENERATED_HEADER } from "../generate/header.js";
import { OutsideProjectError } from "./outside.js";
import { writeAllOrNothing } from "./staged.js";

export interface ApplyOptions {
  /** Report what would change, write nothing. */
  check?: boolean;
  /** A folder (relative to root) whose generated files (with the header) not in the set are leftovers, to be removed. */
  prune?: string;
}

export interface ApplyReport {
  /** Written (or, in check mode, would be written): new or changed. */
  written: string[];
  /** Generated files already up to date: not touched, so their mtimes stay. */
  unchanged: string[];
  /** User-owned files that exist: never overwritten. */
  kept: string[];
  /** Generated leftovers removed (or, in check mode, that would be). */
  removed: string[];
  /** Files under `prune` without the generated header: not create-agent's, so kept (the caller warns). */
  foreign: string[];
}

/**
 * The one place that decides what touches disk. Generated files are rewritten only when their contents differ;
 * user-owned files are written only when missing; leftovers under `prune` are removed. Everything is read and
 * decided first, then written all or nothing (staged.ts): a file that cannot be written (a folder not
 * writable, a folder where a file goes) leaves the project as it was, never generated code that imports a
 * handler file that is not there.
 */
export async function applyFiles(
  root: string,
  files: GeneratedFile[],
  options: ApplyOptions = {},
): Promise<ApplyReport> {
  const report: ApplyReport = { written: [], unchanged: [], kept: [], removed: [], foreign: [] };
  const toWrite: GeneratedFile[] = [];
  for (const file of files) {
    const current = await readIfExists(pathInside(root, file.path));
    if (current !== undefined && file.owner === "user") report.kept.push(file.path);
    else if (current?.equals(bytes(file.contents))) report.unchanged.push(file.path);
    else {
      toWrite.push(file);
      report.written.push(file.path);
    }
  }
  if (!options.check && toWrite.length > 0) await writeAllOrNothing(root, toWrite);
  if (options.prune) {
    const wanted = new Set(files.map((f) => f.path));
    for (const path of await listFiles(root, options.prune)) {
      if (wanted.has(path)) continue;
      // Only what create-agent wrote goes: a file you put there (no header) is your work.
      if (!(await isGenerated(pathInside(root, path)))) {
        report.foreign.push(path);
        continue;
      }
      if (!options.check) await rm(pathInside(root, path));
      report.removed.push(path);
    }
  }
  return report;
}

/** Whether a file starts with the header create-agent puts on every file it generates (any line ending). */
export async function isGenerated(path: string): Promise<boolean> {
  const head = (await readIfExists(path))?.subarray(0, 200).toString("utf8") ?? "";
  return head.replace(/\r\n/g, "\n").startsWith(GENERATED_HEADER.split("\n")[0]!);
}

/**
 * Whether a project file exists, as applyFiles sees it: a user-owned file that exists is kept, never
 * rewritten, so a generator need not build it (generateCode's `existing` option).
 */
export function projectFileExists(root: string): (path: string) => boolean {
  return (path) => existsSync(pathInside(root, path));
}

/**
 * The absolute path of a project-relative path, refusing anything that would land outside the project:
 * by its name (`../x`), or through a symbolic link on its way (a folder of the project linked elsewhere,
 * whose files a prune would delete there).
 */
export function pathInside(root: string, path: string): string {
  const target = resolve(root, path);
  if (!within(resolve(root), target))
    throw new Error(`refusing to write outside the project: ${path}`);
  const folder = realExisting(dirname(target));
  if (!within(realExisting(root), join(folder, basename(target))))
    throw new OutsideProjectError(
      `refusing to write outside the project: ${path} (a folder on its way is a symbolic link to ${folder})`,
    );
  return target;
}

/** Whether `target` is strictly inside `folder` (both absolute). */
function within(folder: string, target: string): boolean {
  const rel = relative(folder, target);
  return !(rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel));
}

/**
 * The real path (links resolved) of `path`'s nearest existing ancestor, with the rest appended as is.
 * A link to nothing on the way is refused: nothing could be written through it.
 */
function realExisting(path: string): string {
  const parent = dirname(path);
  try {
    return realpathSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || parent === path) throw error;
    const link = linkTarget(path);
    if (link !== undefined)
      throw new OutsideProjectError(
        `cannot write through ${path}: it is a symbolic link to ${resolve(parent, link)}, which does not exist (remove the link, or create what it points to)`,
      );
    return join(realExisting(parent), relative(parent, path));
  }
}

/** What a symbolic link points to, or undefined when `path` is no link. */
function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** A file's contents as bytes (text as UTF-8). */
export const bytes = (contents: string | Uint8Array): Uint8Array =>
  typeof contents === "string" ? Buffer.from(contents) : contents;

/** A file's contents as text (bytes read as UTF-8). */
export const textOf = (contents: string | Uint8Array): string =>
  typeof contents === "string" ? contents : Buffer.from(contents).toString("utf8");

/** A file's bytes, or undefined when it does not exist; a folder where the file goes is an error saying so. */
export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EISDIR") throw new Error(`${path} is a folder, where a file goes`);
    throw error;
  }
}

/**
 * Project-relative POSIX paths of every file below root/dir (none if it does not exist); with
 * `"other"`, of everything else that is not a folder (symbolic links, sockets...).
 */
export async function listFiles(
  root: string,
  dir: string,
  which: "files" | "other" = "files",
): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(root, dir), { withFileTypes: true, recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return entries
    .filter((e) => (which === "files") === e.isFile() && (which === "files" || !e.isDirectory()))
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join("/"))
    .sort();
}
