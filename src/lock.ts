/**
 * A lock folder shared by processes of one machine: mkdir either creates it or fails, so one holder at a
 * time; a holder that died leaves it behind, and it is taken over once it is old.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";

/** By default, a lock older than this was left by a process that died: it is taken over. */
const STALE_LOCK_MS = 10 * 60_000;

/** Creates the lock folder, waiting while another process holds it (one older than `staleMs` is taken over). */
export function takeLock(lock: string, staleMs = STALE_LOCK_MS): boolean {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const start = Date.now(); Date.now() - start < staleMs + 60_000;) {
    try {
      mkdirSync(lock);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > staleMs) rmSync(lock, { recursive: true, force: true });
    else Atomics.wait(pause, 0, 0, 200); // a synchronous pause (first-use installs are synchronous)
  }
  return false;
}

/**
 * Runs `work` holding the lock folder `lock` (made with its parent folders), then releases it; throws
 * `busy()` when another process held it for too long.
 */
export async function withLock<T>(
  lock: { path: string; staleMs: number },
  busy: () => Error,
  work: () => Promise<T>,
): Promise<T> {
  mkdirSync(dirname(lock.path), { recursive: true });
  if (!takeLock(lock.path, lock.staleMs)) throw busy();
  try {
    return await work();
  } finally {
    rmSync(lock.path, { recursive: true, force: true });
  }
}
