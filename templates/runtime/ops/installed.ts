/**
 * The packages package.json lists under `dependencies`, checked installed before the service starts.
 * A feature added (npm run add -- <feature> --no-install), or a pull that brought new dependencies,
 * without an install would otherwise start, offer that feature (a network in the 402, /mcp in the
 * card), and answer everything that needs it with a 500. Only looked up, not loaded: a heavy package
 * still loads when first used. Part of your project: edit freely.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's folder: this file is src/runtime/ops/installed.ts, or dist/runtime/ops/installed.js. */
const PROJECT = fileURLToPath(new URL("../../../", import.meta.url));

/** The dependencies not installed (empty with no package.json, or under Yarn PnP: nothing to look in). */
export function missingPackages(root: string = PROJECT): string[] {
  const pkg = readPackage(root);
  if (!pkg || existsSync(join(root, ".pnp.cjs"))) return [];
  return Object.keys(pkg.dependencies ?? {}).filter((name) => !installed(root, name));
}

/** Whether node_modules/<name> is there, in the project's folder or one above it (as Node looks). */
function installed(from: string, name: string): boolean {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** The install command of the project's package manager: by its lockfile, else package.json's packageManager. */
function installCommand(root: string): string {
  const found = [
    ["pnpm-lock.yaml", "pnpm"],
    ["yarn.lock", "yarn"],
    ["bun.lock", "bun"],
    ["bun.lockb", "bun"],
    ["package-lock.json", "npm"],
  ].find(([lockfile]) => existsSync(join(root, lockfile!)));
  const declared = found ? found[1] : readPackage(root)?.packageManager?.split("@")[0];
  return `${declared === "pnpm" || declared === "yarn" || declared === "bun" ? declared : "npm"} install`;
}

function readPackage(root: string): { dependencies?: object; packageManager?: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** The start's refusal when some are missing: what to run. */
export const notInstalled = (missing: string[], root: string = PROJECT): string =>
  `package.json's dependencies ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not installed (a feature added, or changes pulled, without an install): run ${installCommand(root)} (in a container, rebuild the image)`;
