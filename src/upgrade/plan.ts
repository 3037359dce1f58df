import { existsSync } from "node:fs";
import { join } from "node:path";
import { projectFeatures } from "../features.js";
import { GENERATED_DIR, generateProject } from "../generate/index.js";
import type { PackageManager } from "../generate/package-manager.js";
import { parseManifest } from "../manifest/index.js";
import { bytes, isGenerated, listFiles, pathInside, readIfExists, textOf } from "../write/apply.js";
import { merge3, type MergeLabels, ownLineEndings, unresolvedConflicts } from "./merge3.js";
import { newHomes } from "./new-home.js";
import { type DependencyChange, mergePackageJson } from "./package-json.js";
import { baseProject } from "./made-with.js";
import {
  compareVersions,
  parsePackageJson,
  toolVersionOf,
  vendoredToolPath,
} from "./project-version.js";
import { lockfileChange, projectPackageManager } from "./lockfile.js";

/**
 * What `upgrade` does to one file:
 * - update: you never edited it; it becomes the new version;
 * - merge: you edited it, create-agent changed it elsewhere; both kept;
 * - conflict: both changed the same lines; written with conflict markers;
 * - add: new in this create-agent; remove: dropped by it, and you never edited it;
 * - regenerate: src/generated/ (always create-agent's); vendor: the vendored create-agent itself;
 * - modify-delete: dropped by this create-agent, but you edited it (git's modify/delete conflict):
 *   your copy is kept, and upgrade exits 1, since its code elsewhere has moved on (see movedTo);
 * - keep-deleted: you deleted it; not brought back.
 */
export type FileAction =
  | "update"
  | "merge"
  | "conflict"
  | "add"
  | "remove"
  | "regenerate"
  | "vendor"
  | "modify-delete"
  | "keep-deleted";

export interface FileChange {
  path: string;
  action: FileAction;
  /** The project's file now (undefined: missing). */
  before?: Buffer;
  /** What upgrade writes (undefined: removes it, or leaves it as it is for keep-*). */
  after?: string | Uint8Array;
  /** Conflict blocks in `after`. */
  conflicts?: number;
  /** modify-delete: the new version's files that now hold the dropped file's code (new-home.ts). */
  movedTo?: string[];
}

export interface UpgradePlan {
  root: string;
  /** The create-agent that made the project, and this one. */
  from: string;
  to: string;
  /** Every file upgrade writes or removes (or deliberately leaves), in path order. */
  changes: FileChange[];
  dependencyChanges: DependencyChange[];
  /** Pinned dependencies you had changed, moved to this create-agent's pins. */
  overridden: string[];
  /** The project's package manager (its lockfile), for the commands upgrade suggests. */
  packageManager: PackageManager;
  /** Files upgrade merges that still hold an earlier upgrade's conflict markers (a merge now would nest them). */
  unresolved: string[];
}

/** Files upgrade never touches: your handlers and manifest; package.json and vendor/ are handled apart. */
const isUserOnly = (path: string): boolean =>
  path === "agent.json" || path.startsWith("src/capabilities/");

/**
 * Works out the whole upgrade in memory, writing nothing: for every file create-agent writes once (the
 * runtime, server.ts, tsconfig, tests, README...), a three-way merge of the version the project was made
 * with (recovered with pristineProject), the project's file and this create-agent's version; package.json
 * merged key by key; src/generated/ regenerated; the vendored create-agent replaced. Throws (with what is
 * wrong) when the project cannot be upgraded: then nothing is written.
 */
export async function planUpgrade(root: string, toolVersion: string): Promise<UpgradePlan> {
  const { packageText, pkg, from, tarball } = await readMadeBy(root, toolVersion);
  const read = (path: string) => readIfExists(pathInside(root, path));
  const packageManager = projectPackageManager(root, pkg);
  const manifestText = await readText(root, "agent.json");
  const model = parseManifest(manifestText, "agent.json"); // ManifestError when broken
  // Only the folders of the project's features are merged; a project without the record (made before
  // features existed) has every folder, and keeps them all.
  // A feature split out of the core since is kept where the project still carries its core files.
  const features = projectFeatures(pkg, (path) => existsSync(join(root, path)));
  const [base, next] = await Promise.all([
    // The base with the package manager the project was made with; the new version with today's.
    baseProject(root, tarball, manifestText, pkg, packageManager),
    generateProject(model, manifestText, { packageManager, features }),
  ]);
  const labels: MergeLabels = {
    ours: "yours",
    base: `create-agent ${from}`,
    theirs: `create-agent ${toolVersion}`,
  };

  const { changes, nextOwned } = await rewrittenFiles(root, next.files, tarball, read);
  const baseOwned = new Map([...base].filter(([path]) => isWrittenOnce(path)));
  changes.push(...(await mergeOwned(baseOwned, nextOwned, read, labels)));
  locateDropped(changes, baseOwned, nextOwned);
  const lock = lockfileChange((await read("package-lock.json"))?.toString("utf8"), changes);
  if (lock) changes.push(lock);

  // package.json, key by key.
  const basePackage = base.get("package.json")?.toString("utf8");
  const nextPackage = next.files.find((f) => f.path === "package.json")?.contents;
  if (basePackage === undefined || typeof nextPackage !== "string")
    throw new Error("internal: no package.json among the generated files");
  const pj = mergePackageJson(basePackage, packageText, nextPackage, labels);
  if (pj.text !== packageText)
    changes.push({
      path: "package.json",
      action: pj.conflicts > 0 ? "conflict" : "merge",
      before: Buffer.from(packageText),
      after: pj.text,
      ...(pj.conflicts > 0 && { conflicts: pj.conflicts }),
    });

  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const merged = new Set(["package.json", ...baseOwned.keys(), ...nextOwned.keys()]);
  return {
    unresolved: await unresolvedConflicts([...merged].sort(), read),
    root,
    from,
    to: toolVersion,
    changes,
    dependencyChanges: pj.dependencyChanges,
    overridden: pj.overridden,
    packageManager,
  };
}

type ReadFile = (path: string) => Promise<Buffer | undefined>;

/** Files create-agent writes once and then three-way merges (not yours alone, not package.json, vendor/ or src/generated/). */
const isWrittenOnce = (path: string): boolean =>
  !isUserOnly(path) &&
  path !== "package.json" &&
  !path.startsWith("vendor/") &&
  !path.startsWith(`${GENERATED_DIR}/`);

/** package.json and what it says made the project (its version and vendored tarball); throws when it cannot tell, or is newer. */
async function readMadeBy(root: string, toolVersion: string) {
  const packageText = await readText(root, "package.json");
  const pkg = parsePackageJson(packageText);
  const from = toolVersionOf(pkg);
  const tarball = vendoredToolPath(pkg);
  if (!from || !tarball)
    throw new Error(
      'cannot tell which create-agent made this project: package.json has no "createAgent": { "version" } and no "create-agent": "file:vendor/create-agent-<version>.tgz" devDependency',
    );
  if (compareVersions(from, toolVersion) > 0)
    throw new Error(
      `this project was made by create-agent ${from}, newer than this one (${toolVersion}): upgrade with ${from} or later`,
    );
  return { packageText, pkg, from, tarball };
}

/**
 * src/generated/ and the vendored CLI are create-agent's alone: written as they now are, and removed when
 * no longer written (the old tarball goes when the new one has another name). Also returns the next
 * version's files that are written once, for mergeOwned.
 */
async function rewrittenFiles(
  root: string,
  files: ReadonlyArray<{ path: string; contents: string | Uint8Array }>,
  tarball: string,
  read: ReadFile,
): Promise<{ changes: FileChange[]; nextOwned: Map<string, string | Uint8Array> }> {
  const changes: FileChange[] = [];
  const nextOwned = new Map<string, string | Uint8Array>();
  for (const file of files) {
    const rewritten = file.path.startsWith(`${GENERATED_DIR}/`)
      ? "regenerate"
      : file.path.startsWith("vendor/")
        ? "vendor"
        : undefined;
    if (rewritten) {
      const before = await read(file.path);
      if (!before?.equals(bytes(file.contents)))
        changes.push({ path: file.path, action: rewritten, before, after: file.contents });
    } else if (!isUserOnly(file.path) && file.path !== "package.json") {
      nextOwned.set(file.path, file.contents);
    }
  }
  // Generated files this create-agent no longer writes (with its header: a file of yours there stays).
  const generated = new Set(files.map((f) => f.path));
  for (const path of await listFiles(root, GENERATED_DIR))
    if (!generated.has(path) && (await isGenerated(pathInside(root, path))))
      changes.push({ path, action: "regenerate", before: await read(path) });
  if (!files.some((f) => f.path === tarball) && existsSync(pathInside(root, tarball)))
    changes.push({ path: tarball, action: "vendor", before: await read(tarball) });
  return { changes, nextOwned };
}

/** The files written once: a three-way merge each of the old create-agent's, the project's and the next. */
async function mergeOwned(
  baseOwned: ReadonlyMap<string, Buffer>,
  nextOwned: ReadonlyMap<string, string | Uint8Array>,
  read: ReadFile,
  labels: MergeLabels,
): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const path of new Set([...baseOwned.keys(), ...nextOwned.keys()])) {
    const change = mergeFile(
      path,
      baseOwned.get(path)?.toString("utf8"),
      await read(path),
      nextOwned.get(path),
      labels,
    );
    if (change) changes.push(change);
  }
  return changes;
}

/** Where the code of a dropped file you edited went: matched against the new version's files (sets movedTo). */
function locateDropped(
  changes: FileChange[],
  baseOwned: ReadonlyMap<string, Buffer>,
  nextOwned: ReadonlyMap<string, string | Uint8Array>,
): void {
  const dropped = changes.filter((c) => c.action === "modify-delete");
  if (dropped.length === 0) return;
  const candidates = [...nextOwned]
    .filter(([, contents]) => typeof contents === "string")
    .map(([path, contents]) => [path, contents as string] as [string, string]);
  for (const change of dropped) {
    const old = baseOwned.get(change.path)?.toString("utf8") ?? "";
    change.movedTo = newHomes(old, candidates);
  }
}

/**
 * Files whose lines are a set (.gitignore, .dockerignore...): when you and create-agent both add lines
 * at the end, both are kept, with no conflict to resolve by hand.
 */
const LINE_SET_FILE = /(^|\/)\.[a-z]*ignore$/;

/** One file written once: what the merge of base (old create-agent), ours (the project) and next does (undefined: nothing). */
export function mergeFile(
  path: string,
  base: string | undefined,
  current: Buffer | undefined,
  next: string | Uint8Array | undefined,
  labels: MergeLabels,
): FileChange | undefined {
  const raw = current?.toString("utf8");
  // Text is compared and merged with LF endings and written back in the project's own; binary as it is.
  const own =
    raw === undefined || typeof next === "object"
      ? { lf: raw, back: (text: string) => text }
      : ownLineEndings(raw);
  const ours = own.lf;
  const nextText = next === undefined ? undefined : textOf(next);
  if (nextText === undefined) {
    // Dropped by this create-agent: removed if you never edited it.
    if (ours === undefined) return undefined;
    if (ours === base) return { path, action: "remove", before: current };
    return { path, action: "modify-delete", before: current };
  }
  if (ours === undefined) {
    if (base === undefined) return { path, action: "add", after: nextText };
    return base === nextText ? undefined : { path, action: "keep-deleted" };
  }
  if (ours === nextText) return undefined;
  if (ours === base) return { path, action: "update", before: current, after: own.back(nextText) };
  // A file you created where this create-agent now has one counts as all yours against an empty base.
  const merged = merge3(base ?? "", ours, nextText, labels, { lineSet: LINE_SET_FILE.test(path) });
  if (merged.text === ours) return undefined;
  const after = own.back(merged.text);
  return merged.conflicts > 0
    ? { path, action: "conflict", before: current, after, conflicts: merged.conflicts }
    : { path, action: "merge", before: current, after };
}

/** A project file as text; missing, or a folder where it goes, is an error naming it. */
async function readText(root: string, path: string): Promise<string> {
  const data = await readIfExists(pathInside(root, path));
  if (data === undefined) throw new Error(`${path} is missing in ${root}`);
  return data.toString("utf8");
}
