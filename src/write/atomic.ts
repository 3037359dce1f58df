import type { Stats } from "node:fs";
import { chmod, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Writes through a temp file in the same folder and a rename, so a crash never leaves a half-written
 * file; a file that was there keeps its permissions.
 */
export async function writeFileAtomic(path: string, contents: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // Unique enough to never meet another writer's (Math.random: no need to load node:crypto for this).
  const temp = `${path}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`;
  try {
    await writeFile(temp, contents);
    await keepMode(temp, await stat(path).catch(() => undefined));
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Gives `file` the permissions of the file it replaces (`was`, its stat), if there was one. */
export async function keepMode(file: string, was: Stats | undefined): Promise<void> {
  if (was?.isFile()) await chmod(file, was.mode & 0o7777);
}
