/**
 * The package manager a project's files were rendered for (README's commands, deploy/agent.service), which
 * may not be the one it uses now: made with npm, then a yarn.lock appeared. The base that upgrade and
 * add/remove merge from must be rendered with the first, or every line naming it reads as your edit.
 */
import { PACKAGE_MANAGERS, type PackageManager } from "../generate/package-manager.js";
import { isObject } from "../json-object.js";
import { pathInside, readIfExists } from "../write/apply.js";
import { hasFeatureRecord, recordedFeatures } from "../features.js";
import { ownLineEndings } from "./merge3.js";
import { pristineProject } from "./pristine.js";

/** The project files whose rendering depends on the package manager. */
const PM_RENDERED = ["README.md", "deploy/agent.service"];

/** package.json's `createAgent.packageManager` (recorded since create-agent 0.2.0), if it names one. */
export function recordedPackageManager(pkg: unknown): PackageManager | undefined {
  const value =
    isObject(pkg) && isObject(pkg.createAgent) ? pkg.createAgent.packageManager : undefined;
  return PACKAGE_MANAGERS.find((pm) => pm === value);
}

/**
 * `render(pm)` for the package manager the project was made with: the recorded one; else (a project made
 * before the record) the one whose rendering is most like the project's files, trying `today`'s (its
 * lockfile's) first and stopping at one that matches them exactly. A candidate that cannot be rendered is
 * skipped, but `today`'s error is thrown.
 */
export async function renderedAsMade<T>(
  root: string,
  pkg: unknown,
  today: PackageManager,
  render: (pm: PackageManager) => Promise<T>,
  fileOf: (rendering: T, path: string) => string | undefined,
): Promise<{ rendering: T; packageManager: PackageManager }> {
  const recorded = recordedPackageManager(pkg);
  if (recorded) return { rendering: await render(recorded), packageManager: recorded };
  const ours = await Promise.all(
    PM_RENDERED.map(async (path) => {
      const data = await readIfExists(pathInside(root, path));
      return data && ownLineEndings(data.toString("utf8")).lf;
    }),
  );
  let best: { rendering: T; packageManager: PackageManager; score: number } | undefined;
  for (const pm of [today, ...PACKAGE_MANAGERS.filter((p) => p !== today)]) {
    let rendering: T;
    try {
      rendering = await render(pm);
    } catch (error) {
      if (pm === today) throw error;
      continue; // an older create-agent that does not know this one
    }
    const theirs = PM_RENDERED.map((path) => fileOf(rendering, path));
    if (ours.every((text, i) => text === undefined || text === theirs[i]))
      return { rendering, packageManager: pm };
    const score = ours.reduce((sum, text, i) => sum + sharedLines(text, theirs[i]), 0);
    if (!best || score > best.score) best = { rendering, packageManager: pm, score };
  }
  return best!;
}

/** What the create-agent that made the project wrote for it, with the package manager it was made with. */
export async function baseProject(
  root: string,
  tarball: string,
  manifestText: string,
  pkg: unknown,
  today: PackageManager,
): Promise<Map<string, Buffer>> {
  const features = hasFeatureRecord(pkg) ? recordedFeatures(pkg) : undefined;
  const made = await renderedAsMade(
    root,
    pkg,
    today,
    (pm) => pristineProject(root, tarball, manifestText, pm, features),
    (files, path) => files.get(path)?.toString("utf8"),
  );
  return made.rendering;
}

/** How many lines of `ours` `theirs` has too (each of its lines counted once). */
function sharedLines(ours: string | undefined, theirs: string | undefined): number {
  if (ours === undefined || theirs === undefined) return 0;
  const left = new Map<string, number>();
  for (const line of theirs.split("\n")) left.set(line, (left.get(line) ?? 0) + 1);
  let shared = 0;
  for (const line of ours.split("\n")) {
    const n = left.get(line) ?? 0;
    if (n > 0) {
      left.set(line, n - 1);
      shared++;
    }
  }
  return shared;
}
