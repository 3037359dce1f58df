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
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isFile()) await chmod(temp, existing.mode & 0o7777);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
