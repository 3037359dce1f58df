import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, readdir, rename, rm, rmdir } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import type { GeneratedFile } from "../generate/file-set.js";
import { pathInside } from "../write/apply.js";

/**
 * Writes a new project without ever leaving half of one behind: every file goes into a staging folder beside
 * the target (same file system, so moves are renames), and only a complete project is moved into place.
 * With `overwrite`, files the project writes replace existing ones (returned, for the report); other
 * existing files are left alone.
 * A new project folder gets the permissions of any folder the user creates (mkdtemp makes it owner-only).
 * `stop` aborted (Ctrl-C) before the move: nothing is moved, the staging folder and the folders made for
 * it go, and the result is undefined. Once moving starts it finishes (renames: quick), so a project is
 * never left half moved into a folder of the user's.
 */
export async function writeProject(
  target: string,
  files: GeneratedFile[],
  overwrite: boolean,
  stop?: AbortSignal,
): Promise<string[] | undefined> {
  const made = await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), `.${basename(target)}.staging-`));
  try {
    writeFresh(staging, files);
    const targetExists = await readdir(target).then(
      () => true,
      () => false,
    );
    if (stop?.aborted) return undefined;
    if (!targetExists) {
      await rename(staging, target);
      await chmod(target, 0o777 & ~process.umask());
      return [];
    }
    const replaced: string[] = [];
    for (const file of files) {
      const to = join(target, file.path);
      await mkdir(dirname(to), { recursive: true });
      if (
        overwrite &&
        (await lstat(to).then(
          () => true,
          () => false,
        ))
      ) {
        replaced.push(file.path);
        await rm(to, { force: true, recursive: true });
      }
      await rename(join(staging, file.path), to);
    }
    return replaced;
  } finally {
    await rm(staging, { recursive: true, force: true });
    if (made !== undefined && !existsSync(target)) await removeEmptyUpTo(dirname(target), made);
  }
}

/** Removes `dir` and its parents up to `last` while they are empty (made for a project that did not come). */
async function removeEmptyUpTo(dir: string, last: string): Promise<void> {
  for (let folder = dir; ; folder = dirname(folder)) {
    if (
      !(await rmdir(folder).then(
        () => true,
        () => false,
      )) ||
      folder === last
    )
      return;
  }
}

/**
 * Writes every file into `dir`, a folder this process just created and nothing else writes to: no temp
 * file and rename per file (the staging folder as a whole is what is moved into place), no check for an
 * existing file, each folder made once, and synchronous calls (for ~70 small files, measured: half the
 * time and CPU of fs/promises, whose every write is an open, a write and a close through the thread pool).
 */
function writeFresh(dir: string, files: GeneratedFile[]): void {
  const contents = new Map<string, string | Uint8Array>();
  for (const file of files) {
    const path = pathInside(dir, file.path);
    // As applyFiles would: a path listed twice keeps its first user-owned file, its last generated one.
    if (contents.has(path) && file.owner === "user") continue;
    contents.set(path, file.contents);
  }
  const folders = new Set([...contents.keys()].map((path) => dirname(path)));
  for (const folder of folders) mkdirSync(folder, { recursive: true });
  for (const [path, bytes] of contents) writeFileSync(path, bytes);
}

/** For messages: a path relative to the current folder when that is shorter. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && rel.length < path.length ? rel : path;
}

/**
 * For messages about a project folder: "./my-agent" below the current folder, "." for the current folder
 * itself, else the absolute path.
 */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  if (rel === "") return ".";
  return rel.split(sep)[0] === ".." || isAbsolute(rel) ? path : `./${rel}`;
}
