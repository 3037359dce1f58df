import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** This create-agent's own folder (its package root: two levels above src/scaffold and dist/scaffold). */
export const TOOL_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `path` with symlinks resolved, as far up as it exists (the target folder itself may not exist yet). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : resolve(realPath(parent), relative(parent, path));
  }
}

/**
 * True when `target` is inside this tool's own folder (its git clone, or wherever it is installed).
 * A project there would have no git repository of its own and would pick up the tool's configuration
 * (its vitest config, its tsconfig), so create refuses unless asked explicitly.
 */
export function insideToolHome(target: string, toolRoot = TOOL_ROOT): boolean {
  const home = realPath(toolRoot);
  const rel = relative(home, realPath(resolve(target)));
  const outside = rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel); // another drive on Windows
  return !outside;
}
