/**
 * `create-agent add <feature>` and `create-agent remove <feature>` (in a project: `npm run add -- <feature>`):
 * plan the change (feature-plan.ts), write it all or nothing, then install with the project's package
 * manager (unless --no-install).
 */
import { existsSync } from "node:fs";
import { readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type Feature, FEATURES } from "../features.js";
import { withLock } from "../lock.js";
import { generateProjectFiles } from "../generate/project.js";
import { projectCommands } from "../generate/package-manager.js";
import { parseManifest } from "../manifest/index.js";
import { describeFailure, installDependencies } from "../scaffold/install.js";
import { projectPackageManager } from "../upgrade/lockfile.js";
import { renderedAsMade } from "../upgrade/made-with.js";
import { parsePackageJson } from "../upgrade/project-version.js";
import { pathInside } from "../write/apply.js";
import { writeAllOrNothing } from "../write/staged.js";
import { CliError } from "./errors.js";
import {
  checkSameTool,
  type FeaturePlan,
  type FeatureVerb,
  mergedFile,
  namedFeature,
  planFeature,
  type ProjectState,
} from "./feature-plan.js";
import { projectRoot } from "./project-root.js";

export interface FeatureOptions {
  cwd?: string;
  install: boolean;
  /** remove: delete the folder even when it holds your edits or your code imports from it. */
  force?: boolean;
}

/** Runs `add` or `remove`; resolves to the exit code. */
export async function changeFeature(
  verb: FeatureVerb,
  name: string,
  options: FeatureOptions,
  toolVersion: string,
): Promise<number> {
  const feature = namedFeature(name);
  const root = projectRoot(options.cwd);
  // One add or remove at a time per project: each plans from the files the one before it wrote.
  const lock = {
    path: join(root, "node_modules", ".cache", "create-agent-features.lock"),
    staleMs: 60_000,
  };
  const busy = () =>
    new CliError(
      `another add or remove kept this project busy (${lock.path}); nothing was changed`,
    );
  const pm = await withLock(lock, busy, () =>
    planAndApply(root, feature, verb, options, toolVersion),
  );
  if (pm === undefined) return 0;
  if (!options.install) {
    process.stdout.write(`\nNot installed (--no-install): run ${projectCommands(pm).install}.\n`);
    return 0;
  }
  process.stdout.write(`\nInstalling with ${pm}...\n`);
  const outcome = await installDependencies(root, pm);
  if (outcome.ok) return 0;
  process.stderr.write(
    `\n\`${pm} install\` ${describeFailure(outcome)}. The project's files already have the change: fix the problem shown above, then run \`${pm} install\`.\n`,
  );
  return 1;
}

/** Plans the change on the project as it is now and writes it; the package manager, or undefined when nothing was to do. */
async function planAndApply(
  root: string,
  feature: Feature,
  verb: FeatureVerb,
  options: FeatureOptions,
  toolVersion: string,
): Promise<ReturnType<typeof projectPackageManager> | undefined> {
  const state = await readProject(root);
  checkSameTool(state, toolVersion, `${verb} -- ${feature.name}`);
  const plan = await planFeature(state, feature, verb, options).catch((error: unknown) => {
    if (error instanceof CliError) throw error;
    throw new CliError(
      `cannot ${verb} ${feature.name} (nothing was changed): ${(error as Error).message}`,
    );
  });
  if (!plan) {
    const missing = verb === "add" ? uninstalled(root, feature, state.pkg) : [];
    process.stdout.write(
      `This project ${verb === "add" ? "already has" : "does not include"} ${feature.name}: nothing to do.\n` +
        (missing.length > 0
          ? `Its packages are not all installed (${missing.join(", ")}: an install stopped early?): run ${projectCommands(state.packageManager).install}.\n`
          : ""),
    );
    return undefined;
  }
  const pm = state.packageManager;
  await planProjectFiles(root, plan, pm);
  await apply(root, plan);
  report(plan, pm, options.install);
  return pm;
}

async function readProject(root: string): Promise<ProjectState> {
  const pkgText = await readFile(pathInside(root, "package.json"), "utf8").catch(() => {
    throw new CliError(`package.json is missing in ${root}`);
  });
  let pkg: unknown;
  try {
    pkg = parsePackageJson(pkgText);
  } catch (error) {
    throw new CliError(`${(error as Error).message} (nothing was changed)`);
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg))
    throw new CliError("package.json is not a JSON object");
  const record = pkg as Record<string, unknown>;
  return { root, pkgText, pkg: record, packageManager: projectPackageManager(root, record) };
}

/**
 * The project files rendered from the feature set (README.md's feature table, compose.yaml's worker and
 * Redis, fly.toml, deploy/agent.service), re-rendered for the new set and merged with your edits; a file
 * that clashes is left as it is and named. Files you deleted stay deleted.
 */
async function planProjectFiles(
  root: string,
  plan: FeaturePlan,
  pm: ReturnType<typeof projectPackageManager>,
): Promise<void> {
  let model;
  try {
    model = parseManifest(await readFile(pathInside(root, "agent.json"), "utf8"), "agent.json");
  } catch {
    plan.left.push(
      "the files rendered from the feature set: README.md, compose.yaml, fly.toml, deploy/agent.service (agent.json is not valid, so they cannot be re-rendered)",
    );
    return;
  }
  // The files as made (with the package manager the project was made with), against today's.
  const { rendering: before } = await renderedAsMade(
    root,
    plan.pkg,
    pm,
    async (made) => generateProjectFiles(model, made, plan.before),
    (files, path) => files.find((f) => f.path === path)?.contents,
  );
  const after = new Map(
    generateProjectFiles(model, pm, plan.after).map((f) => [f.path, f.contents]),
  );
  const clashed = new Set<string>();
  for (const { path, contents } of before) {
    const next = after.get(path);
    if (next === undefined || next === contents) continue;
    const text = await mergedFile(root, path, contents, next, plan);
    if (text === undefined) {
      clashed.add(path);
      plan.left.push(`${path} (your edits clash with its lines about features)`);
    } else if (text !== null) plan.writes.set(path, text);
  }
  keepPairs(plan, clashed);
}

/** Files that name each other's services (nginx's upstream lists compose's instances): changed together or not at all. */
const PAIRS = [["compose.yaml", "deploy/proxy/nginx.conf"]];

/** A file left as it is (its merge clashed) keeps its pair as it is too: nginx would not start naming an instance compose lacks. */
function keepPairs(plan: FeaturePlan, clashed: ReadonlySet<string>): void {
  for (const pair of PAIRS) {
    const left = pair.find((p) => clashed.has(p));
    if (left === undefined) continue;
    for (const path of pair)
      if (plan.writes.delete(path)) plan.left.push(`${path} (it goes with ${left}, left as it is)`);
  }
}

/** Writes the plan: every file staged first; the folder to delete moved aside, then removed. */
async function apply(root: string, plan: FeaturePlan): Promise<void> {
  // Moved aside, then deleted: to a dot-folder beside it, which tsc's include skips, so a remove that is
  // interrupted between the two leaves no code the build compiles.
  const folder = plan.removeFolder;
  const aside = folder
    ? pathInside(root, `${dirname(folder)}/.${basename(folder)}.${process.pid}.removed`)
    : undefined;
  try {
    await writeAllOrNothing(
      root,
      [...plan.writes].map(([path, contents]) => ({ path, contents })),
      {
        last: "package.json",
        before: aside
          ? () => rename(pathInside(root, plan.removeFolder!), aside).catch(missingIsFine)
          : undefined,
        undoBefore: aside
          ? () => rename(aside, pathInside(root, plan.removeFolder!)).catch(missingIsFine)
          : undefined,
      },
    );
  } catch (error) {
    throw new CliError(
      `cannot ${plan.verb} ${plan.feature.name} (nothing was changed): ${(error as Error).message}`,
    );
  }
  if (aside) await rm(aside, { recursive: true, force: true });
  if (folder) await forgetBuilds(root, folder);
}

/**
 * A removed folder's compiled output: `tsc -b` keeps the declarations of deleted files, and sees the
 * project as up to date, so its typecheck would pass code still importing them; dist/ keeps the .js.
 * The typecheck cache goes whole (the next typecheck is a full one); dist/ loses the folder. Both are
 * where the project's tsconfig files put them (templates/project; test/cli/features.test.ts reads them).
 */
async function forgetBuilds(root: string, folder: string): Promise<void> {
  const gone = (path: string) => rm(join(root, path), { recursive: true, force: true });
  await gone("node_modules/.cache/create-agent").catch(() => undefined); // only a cache
  await gone(folder.replace(/^src\//, "dist/"));
}

/**
 * A present feature's packages missing from node_modules, once the project's other dependencies are
 * installed (an install that stopped early; never installed at all: nothing to say).
 */
function uninstalled(root: string, feature: Feature, pkg: Record<string, unknown>): string[] {
  const has = (name: string) => existsSync(join(root, "node_modules", name, "package.json"));
  const deps = pkg.dependencies;
  const others = Object.keys(typeof deps === "object" && deps !== null ? deps : {}).filter(
    (name) => !(name in feature.dependencies),
  );
  if (!others.some(has)) return [];
  return Object.keys(feature.dependencies).filter((name) => !has(name));
}

function missingIsFine(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}

function report(
  plan: FeaturePlan,
  pm: ReturnType<typeof projectPackageManager>,
  installs: boolean,
): void {
  const { feature, verb } = plan;
  if (plan.restored) {
    const files = [...plan.writes.keys()];
    process.stdout.write(
      `This project has ${feature.name}, but ${files.length} of its files ${files.length === 1 ? "was" : "were"} missing: copied back ${files.join(", ")}.\nThen: ${projectCommands(pm).typecheck}.\n`,
    );
    return;
  }
  const lines = [
    verb === "add"
      ? `Added ${feature.name}: ${feature.summary}.`
      : `Removed ${feature.name} (${plan.removeFolder}/ deleted${plan.forced.length ? `, with your edits in ${plan.forced.join(", ")}: --force` : ""}).`,
  ];
  const folder = `src/runtime/${feature.folder}/`;
  const copied = [...plan.writes.keys()].filter((p) => p.startsWith(folder));
  const files = [...plan.writes.keys()].filter((p) => p !== "package.json" && !copied.includes(p));
  if (copied.length > 0) lines.push(`  copied ${copied.length} files into ${folder}`);
  if (files.length > 0) lines.push(`  updated ${files.join(", ")}`);
  for (const spec of plan.brokenImports)
    lines.push(`  your ${spec}: it no longer typechecks (--force)`);
  for (const path of plan.kept) lines.push(`  kept your ${path} (it differs from create-agent's)`);
  if (plan.packages.length > 0)
    lines.push(
      `  package.json: ${verb === "add" ? "added" : "removed"} ${plan.packages.join(", ")}`,
    );
  for (const spec of plan.keptPackages) lines.push(`  package.json: kept your ${spec}`);
  lines.push(`  features: ${plan.after.join(", ") || "none (the core only)"}`);
  for (const path of plan.left) lines.push(`  left as it is: ${path}`);
  if (verb === "add" && feature.settings.length > 0)
    lines.push(`Its settings: ${feature.settings.join(", ")} (see README.md).`);
  const commands = projectCommands(pm);
  for (const note of pairNotes(plan, commands.addFeature)) lines.push(note);
  lines.push(`Then: ${installs ? "" : `${commands.install}, then `}${commands.typecheck}.`);
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** What a feature does without the one it pairs with, once the change leaves it so (features.ts). */
function pairNotes(plan: FeaturePlan, addCommand: (name: string) => string): string[] {
  const has = new Set(plan.after);
  return FEATURES.filter((f) => f.pairsWith && has.has(f.name) && !has.has(f.pairsWith.feature))
    .filter((f) => f.name === plan.feature.name || f.pairsWith!.feature === plan.feature.name)
    .map(
      (f) =>
        `Note: without ${f.pairsWith!.feature}, ${f.name}: ${f.pairsWith!.without}. ${addCommand(f.pairsWith!.feature)} adds it.`,
    );
}
