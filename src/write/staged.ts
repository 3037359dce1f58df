/**
 * Writing several project files as nearly all-or-nothing as a file system allows: every new content is
 * first written to a temp file beside its target; only when all are written are they renamed into place
 * (`last` at the end, so an interrupted run can be run again). A failure while staging removes the temp
 * files (and undoes `before`), leaving the project as it was.
 */
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { pathInside } from "./apply.js";
import { keepMode } from "./atomic.js";

export interface StagedOptions {
  /** The path renamed into place last (e.g. package.json, which records what was done). */
  last?: string;
  /** Runs once everything is staged, before the renames (e.g. moving a folder aside). */
  before?: () => Promise<void>;
  /** Undoes `before` when a rename fails (files already renamed stay renamed). */
  undoBefore?: () => Promise<void>;
}

export async function writeAllOrNothing(
  root: string,
  files: Array<{ path: string; contents: string | Uint8Array }>,
  options: StagedOptions = {},
): Promise<void> {
  const ordered = [
    ...files.filter((f) => f.path !== options.last),
    ...files.filter((f) => f.path === options.last),
  ];
  const staged: Array<{ temp: string; target: string }> = [];
  const madeFolders: string[] = [];
  const cleanUp = async () => {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    // Folders made for the new files (then holding only temp files) go too: no trace is left.
    for (const folder of madeFolders.reverse()) await rm(folder, { recursive: true, force: true });
  };
  try {
    for (const file of ordered) {
      const target = pathInside(root, file.path);
      const existing = await stat(target).catch(() => undefined);
      if (existing?.isDirectory()) throw new Error(`${file.path} is a folder, where a file goes`);
      const made = await mkdir(dirname(target), { recursive: true });
      if (made !== undefined) madeFolders.push(made);
      const temp = `${target}.${process.pid}.staged.tmp`;
      staged.push({ temp, target });
      await writeFile(temp, file.contents);
      await keepMode(temp, existing);
    }
    await options.before?.();
  } catch (error) {
    await cleanUp();
    throw error;
  }
  try {
    for (const { temp, target } of staged) await rename(temp, target);
  } catch (error) {
    // Renames within one folder tree fail only on a race; what is not yet renamed stays as it was.
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    await options.undoBefore?.();
    throw error;
  }
}
