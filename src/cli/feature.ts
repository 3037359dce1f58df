/**
 * `create-agent add <feature>` and `create-agent remove <feature>` (in a project: `npm run add -- <feature>`):
 * plan the change (feature-plan.ts), write it all or nothing, then install with the project's package
 * manager (unless --no-install).
 */
import { readFile, rename, rm } from "node:fs/promises";
import { generateProjectFiles } from "../generate/project.js";
import { projectCommands } from "../generate/package-manager.js";
import { parseManifest } from "../manifest/index.js";
import { describeFailure, installDependencies } from "../scaffold/install.js";
import { projectPackageManager } from "../upgrade/plan.js";
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
  /** remove: delete the folder even when it holds your edits. */
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
  const state = await readProject(root);
  checkSameTool(state, toolVersion, `${verb} -- ${feature.name}`);
  const plan = await planFeature(state, feature, verb, options).catch((error: unknown) => {
    if (error instanceof CliError) throw error;
    throw new CliError(
      `cannot ${verb} ${feature.name} (nothing was changed): ${(error as Error).message}`,
    );
  });
  if (!plan) {
    process.stdout.write(
      `This project ${verb === "add" ? "already has" : "does not include"} ${feature.name}: nothing to do.\n`,
    );
    return 0;
  }
  const pm = projectPackageManager(root, state.pkg);
  await planReadme(root, plan, pm);
  await apply(root, plan);
  report(plan, pm);
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

async function readProject(root: string): Promise<ProjectState> {
  const pkgText = await readFile(pathInside(root, "package.json"), "utf8").catch(() => {
    throw new CliError(`package.json is missing in ${root}`);
  });
  let pkg: unknown;
  try {
    pkg = JSON.parse(pkgText);
  } catch (error) {
    throw new CliError(`package.json is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg))
    throw new CliError("package.json is not a JSON object");
  return { root, pkgText, pkg: pkg as Record<string, unknown> };
}

/** README.md's feature table, re-rendered and merged with your edits; left as it is on a clash. */
async function planReadme(
  root: string,
  plan: FeaturePlan,
  pm: ReturnType<typeof projectPackageManager>,
): Promise<void> {
  let model;
  try {
    model = parseManifest(await readFile(pathInside(root, "agent.json"), "utf8"), "agent.json");
  } catch {
    plan.readmeLeft = true; // a broken agent.json: the README is only documentation
    return;
  }
  const readme = (features: string[]) =>
    generateProjectFiles(model, pm, features).find((f) => f.path === "README.md")!.contents;
  const text = await mergedFile(root, "README.md", readme(plan.before), readme(plan.after), plan);
  if (text === undefined) plan.readmeLeft = true;
  else if (text !== null) plan.writes.set("README.md", text);
}

/** Writes the plan: every file staged first; the folder to delete moved aside, then removed. */
async function apply(root: string, plan: FeaturePlan): Promise<void> {
  const aside = plan.removeFolder
    ? `${pathInside(root, plan.removeFolder)}.${process.pid}.removed`
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
}

function missingIsFine(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}

function report(plan: FeaturePlan, pm: ReturnType<typeof projectPackageManager>): void {
  const { feature, verb } = plan;
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
  for (const path of plan.kept) lines.push(`  kept your ${path} (it differs from create-agent's)`);
  if (plan.packages.length > 0)
    lines.push(
      `  package.json: ${verb === "add" ? "added" : "removed"} ${plan.packages.join(", ")}`,
    );
  for (const spec of plan.keptPackages) lines.push(`  package.json: kept your ${spec}`);
  lines.push(`  features: ${plan.after.join(", ") || "none (the core only)"}`);
  if (plan.readmeLeft)
    lines.push("  README.md left as it is (your edits clash with its feature table)");
  if (verb === "add" && feature.settings.length > 0)
    lines.push(`Its settings: ${feature.settings.join(", ")} (see README.md).`);
  lines.push(`Then: ${projectCommands(pm).typecheck}.`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
