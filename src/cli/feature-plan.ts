/**
 * What `create-agent add <feature>` and `remove <feature>` change in a project, worked out in memory
 * (nothing written): the feature's folder (copied from this create-agent's runtime, or deleted), its
 * packages and the record in package.json, src/runtime/features.ts and README.md re-pruned for the new set
 * (three-way merged with your edits, as upgrade does). Throws CliError, with nothing changed, when it
 * cannot be done safely: another create-agent's runtime, edits in a folder to delete, a clash in features.ts.
 */
import {
  featureNamed,
  FeatureNameError,
  type Feature,
  hasFeatureRecord,
  inTableOrder,
  recordedFeatures,
} from "../features.js";
import {
  featuresFileFor,
  FEATURES_FILE,
  RUNTIME_DIR,
  runtimeTemplates,
} from "../generate/runtime.js";
import { listFiles, pathInside, readIfExists } from "../write/apply.js";
import { merge3, ownLineEndings } from "../upgrade/merge3.js";
import { toolVersionOf } from "../upgrade/project-version.js";
import { isObject } from "../json-object.js";
import type { PackageManager } from "../generate/package-manager.js";
import { CliError } from "./errors.js";
import { checkFolderImporters, importersOf } from "./feature-imports.js";
import { packageJsonFor } from "./feature-package.js";
import { thisCli } from "./project-root.js";

export type FeatureVerb = "add" | "remove";

export interface FeaturePlan {
  feature: Feature;
  verb: FeatureVerb;
  /** The project's features before and after. */
  before: string[];
  after: string[];
  /** Files to write (project-relative path -> text); package.json among them. */
  writes: Map<string, string>;
  /** The folder to delete (remove), project-relative. */
  removeFolder?: string;
  /** Files of the folder you already had (add): kept as they are. */
  kept: string[];
  /** Files you had edited that --force deletes (remove). */
  forced: string[];
  /** Your files' imports from the deleted folder, that --force breaks (remove): `file imports "spec"`. */
  brokenImports: string[];
  /** Packages added or removed; packages of the feature you had pinned otherwise (kept). */
  packages: string[];
  keptPackages: string[];
  /** Files rendered from the feature set (README.md, compose.yaml...) that clashed with your edits: left as they are. */
  left: string[];
  /** add of a feature already recorded: only its missing files are written back. */
  restored?: true;
  /** The project's parsed package.json. */
  pkg: Record<string, unknown>;
}

export interface ProjectState {
  root: string;
  pkgText: string;
  pkg: Record<string, unknown>;
  /** The package manager it uses now (its lockfile): the files add/remove re-render are for it. */
  packageManager: PackageManager;
}

/** The feature named on the command line; CliError listing the valid ones. */
export function namedFeature(name: string): Feature {
  if (name.includes(","))
    throw new CliError(
      `add and remove take one feature at a time ("${name}"): run the command once for each`,
    );
  try {
    return featureNamed(name);
  } catch (error) {
    if (error instanceof FeatureNameError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * Refuses a project whose runtime is another create-agent's (its folders would not fit that runtime), or
 * one made before features were recorded.
 */
export function checkSameTool(state: ProjectState, toolVersion: string, command: string): void {
  const made = toolVersionOf(state.pkg);
  if (made === undefined)
    throw new CliError(
      'cannot tell which create-agent made this project (package.json has no "createAgent": { "version" }); nothing was changed',
    );
  const upgrade = thisCli(`upgrade --cwd ${JSON.stringify(state.root)}`);
  const scripts = isObject(state.pkg.scripts) ? state.pkg.scripts : {};
  if (made !== toolVersion)
    throw new CliError(
      `this project's runtime is create-agent ${made}'s and this is create-agent ${toolVersion}: a feature folder of one does not fit the runtime of the other (nothing was changed). ` +
        (typeof scripts[command.split(" ")[0]!] === "string"
          ? `Use the project's own create-agent (npm run ${command}), or bring the project to ${toolVersion} first: ${upgrade}`
          : `Bring the project to ${toolVersion} first (its create-agent ${made} has no features to add or remove): ${upgrade}`),
    );
  if (!hasFeatureRecord(state.pkg))
    throw new CliError(
      `this project predates optional features (package.json has no "createAgent": { "features" }): it has them all. Run upgrade first (nothing was changed): ${upgrade}`,
    );
}

/** The plan for `verb feature` on the project; undefined when there is nothing to do (already so). */
export async function planFeature(
  state: ProjectState,
  feature: Feature,
  verb: FeatureVerb,
  options: { force?: boolean },
): Promise<FeaturePlan | undefined> {
  const before = recordedFeatures(state.pkg);
  if (before.includes(feature.name) === (verb === "add"))
    return verb === "add" ? restoration(state, feature, before) : undefined;
  const after = inTableOrder(
    verb === "add" ? [...before, feature.name] : before.filter((n) => n !== feature.name),
  );
  const plan = emptyPlan(state, feature, verb, before, after);
  if (verb === "add") await planFolderCopy(state.root, plan);
  else await planFolderRemoval(state.root, plan, options.force === true);
  const featuresText = await featuresFileAfter(state.root, plan);
  if (featuresText === undefined)
    throw new CliError(
      `${FEATURES_FILE}: your edits clash with the lines ${verb} ${feature.name} changes (nothing was changed). ` +
        `Make the change yourself: ${verb === "add" ? "add" : "delete"} the lines ending in \`// feature: ${feature.name}\` ` +
        `(see ${RUNTIME_DIR}/features.ts in a new project made with --features ${after.join(",") || "none"}), then run this again ` +
        `(or undo your edit next to where they go, and run this again)`,
    );
  if (featuresText !== null) plan.writes.set(FEATURES_FILE, featuresText);
  if (verb === "remove")
    plan.brokenImports = await checkFolderImporters(state.root, plan, options.force === true);
  const yours =
    verb === "remove"
      ? await importersOf(state.root, Object.keys(feature.dependencies), plan.removeFolder!)
      : new Map<string, string>();
  plan.writes.set("package.json", packageJsonFor(state, plan, yours));
  return plan;
}

/** A plan that changes nothing yet. */
function emptyPlan(
  state: ProjectState,
  feature: Feature,
  verb: FeatureVerb,
  before: string[],
  after: string[],
): FeaturePlan {
  const lists = {
    kept: [],
    forced: [],
    brokenImports: [],
    packages: [],
    keptPackages: [],
    left: [],
  };
  return { feature, verb, before, after, writes: new Map(), ...lists, pkg: state.pkg };
}

/**
 * features.ts for the new set, merged with your edits (undefined: a clash). Already as the new set has it
 * (you added or deleted the feature's lines yourself): nothing to write.
 */
async function featuresFileAfter(
  root: string,
  plan: FeaturePlan,
): Promise<string | null | undefined> {
  const next = featuresFileFor(plan.after);
  const merged = await mergedFile(root, FEATURES_FILE, featuresFileFor(plan.before), next, plan);
  if (merged !== undefined) return merged;
  const ours = (await readIfExists(pathInside(root, FEATURES_FILE)))?.toString("utf8") ?? "";
  const mine = new Set(
    ownLineEndings(ours)
      .lf.split("\n")
      .map((line) => line.trim()),
  );
  const marker = `// feature: ${plan.feature.name}`;
  const lines = next.split("\n").filter((line) => line.trimEnd().endsWith(marker));
  const done =
    plan.verb === "add"
      ? lines.every((l) => mine.has(l.trim()))
      : ![...mine].some((l) => l.endsWith(marker));
  return done ? null : undefined;
}

/**
 * add of a feature the project records: the files of its folder that are missing (deleted by hand, an
 * interrupted add), copied back; undefined when none is.
 */
async function restoration(
  state: ProjectState,
  feature: Feature,
  features: string[],
): Promise<FeaturePlan | undefined> {
  const plan = { ...emptyPlan(state, feature, "add", features, features), restored: true as const };
  await planFolderCopy(state.root, plan);
  plan.kept = [];
  return plan.writes.size > 0 ? plan : undefined;
}

/** add: every file of the folder this create-agent ships; one you already have is never overwritten. */
async function planFolderCopy(root: string, plan: FeaturePlan): Promise<void> {
  for (const [path, text] of folderTemplates(plan.feature)) {
    const current = await readIfExists(pathInside(root, path));
    if (current === undefined) plan.writes.set(path, text);
    else if (ownLineEndings(current.toString("utf8")).lf !== text) plan.kept.push(path);
  }
}

/** remove: the folder goes, unless it holds your work (a file edited or added) and there is no --force. */
async function planFolderRemoval(root: string, plan: FeaturePlan, force: boolean): Promise<void> {
  const folder = `${RUNTIME_DIR}/${plan.feature.folder}`;
  const templates = folderTemplates(plan.feature);
  const edited: string[] = [];
  const added: string[] = [];
  for (const path of await listFiles(root, folder)) {
    const current = await readIfExists(pathInside(root, path));
    const text = current && ownLineEndings(current.toString("utf8")).lf;
    if (!templates.has(path)) added.push(path);
    else if (templates.get(path) !== text) edited.push(path);
  }
  added.push(...(await listFiles(root, folder, "other"))); // a link you made is yours too
  const yours = [
    ...(edited.length ? [`${edited.join(", ")} (edited)`] : []),
    ...(added.length ? [`${added.join(", ")} (yours: create-agent writes no such file)`] : []),
  ];
  if (yours.length > 0 && !force)
    throw new CliError(
      `${folder}/ holds your work: ${yours.join("; ")} (nothing was changed). ` +
        `Move what you want to keep elsewhere, or pass --force to delete the folder anyway`,
    );
  edited.push(...added);
  plan.forced = edited;
  plan.removeFolder = folder;
}

function folderTemplates(feature: Feature): Map<string, string> {
  const prefix = `${RUNTIME_DIR}/${feature.folder}/`;
  return new Map([...runtimeTemplates()].filter(([path]) => path.startsWith(prefix)));
}

/**
 * A file create-agent renders from the feature set, for the new set: as rendered when untouched, else your
 * edits merged in. null: nothing to write; undefined: a clash (the plan decides what that means).
 */
export async function mergedFile(
  root: string,
  path: string,
  base: string,
  next: string,
  plan: Pick<FeaturePlan, "verb" | "feature">,
): Promise<string | null | undefined> {
  const raw = (await readIfExists(pathInside(root, path)))?.toString("utf8");
  if (raw === undefined) return path === FEATURES_FILE ? next : null; // the runtime needs its features.ts
  const { lf: ours, back } = ownLineEndings(raw);
  const merged = merge3(base, ours, next, {
    ours: "yours",
    base: "as create-agent wrote it",
    theirs: `${plan.verb} ${plan.feature.name}`,
  });
  if (merged.conflicts > 0) return undefined;
  return merged.text === ours ? null : back(merged.text);
}
