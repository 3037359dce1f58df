import { chmod, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import type { GeneratedFile } from "../generate/file-set.js";
import { applyFiles } from "../write/apply.js";

/**
 * Writes a new project without ever leaving half of one behind: every file goes into a staging folder beside
 * the target (same file system, so moves are renames), and only a complete project is moved into place.
 * With `overwrite`, files the project writes replace existing ones; other existing files are left alone.
 * A new project folder gets the permissions of any folder the user creates (mkdtemp makes it owner-only).
 */
export async function writeProject(target: string, files: GeneratedFile[], overwrite: boolean): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), `.${basename(target)}.staging-`));
  try {
    await applyFiles(staging, files);
    const targetExists = await readdir(target).then(
      () => true,
      () => false,
    );
    if (!targetExists) {
      await rename(staging, target);
      await chmod(target, 0o777 & ~process.umask());
      return;
    }
    for (const file of files) {
      const to = join(target, file.path);
      await mkdir(dirname(to), { recursive: true });
      if (overwrite) await rm(to, { force: true, recursive: true });
      await rename(join(staging, file.path), to);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
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
