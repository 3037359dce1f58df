import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { generateProject } from "../generate/index.js";
import {
  amountProblem,
  capabilityNameProblem,
  loadManifest,
  parseManifest,
} from "../manifest/index.js";
import { initGit } from "../scaffold/git.js";
import {
  detectPackageManager,
  installDependencies,
  runScript,
  type PackageManager,
} from "../scaffold/install.js";
import { displayPath, writeProject } from "../scaffold/stage.js";
import {
  packageNameFromDir,
  type StarterAnswers,
  starterManifest,
  STARTER_DEFAULTS,
  withSchemaRef,
} from "../scaffold/starter-manifest.js";
import { inspectTarget } from "../scaffold/target.js";
import { CliError } from "./errors.js";
import { ask } from "./prompts.js";

export interface CreateOptions {
  yes?: boolean;
  manifest?: string;
  force?: boolean;
  install: boolean;
  git: boolean;
  packageManager?: PackageManager;
}

/** `create-agent [directory]`: questions (unless --yes or not a terminal), generate, stage, move, install, git. */
export async function create(
  directory: string | undefined,
  options: CreateOptions,
): Promise<number> {
  const interactive = !options.yes && process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (!directory) {
    if (!interactive && !options.yes)
      throw new CliError(
        "missing <directory>: say where to create the project, e.g. `create-agent my-agent`, or pass --yes for ./my-agent",
      );
    directory = interactive
      ? (await ask([{ message: "Project folder", default: "my-agent" }]))[0]!
      : "my-agent";
  }
  const target = resolve(directory);
  const state = await inspectTarget(target);
  if (state.kind === "file")
    throw new CliError(`${displayPath(target)} exists and is a file, not a folder`);
  if (state.kind === "non-empty" && !options.force) {
    const shown = state.entries.slice(0, 5).join(", ") + (state.entries.length > 5 ? ", ..." : "");
    throw new CliError(
      `${displayPath(target)} is not empty (${shown}). Choose a new folder, or pass --force to write into it (files the project needs are replaced).`,
    );
  }

  const { model, manifestText } = await readOrAskManifest(target, options, interactive);
  const { files, warnings } = await generateProject(model, manifestText);
  await writeProject(target, files, options.force === true);
  process.stdout.write(
    `\nCreated ${model.name} in ${displayPath(target)} (${files.length} files).\n`,
  );
  for (const warning of warnings) process.stdout.write(`warning: ${warning}\n`);

  const pm = options.packageManager ?? detectPackageManager();
  let installed = false;
  if (options.install) {
    process.stdout.write(`\nInstalling dependencies with ${pm}...\n`);
    installed = await installDependencies(target, pm);
    if (!installed)
      process.stderr.write(
        `\nInstalling dependencies failed. The project is complete: run \`${pm} install\` in it to retry.\n`,
      );
  }
  if (options.git) {
    const git = await initGit(target);
    if (git !== "committed")
      process.stdout.write(
        `git: ${git === "initialized" ? "repository created, files staged (no git identity to commit with)" : git}\n`,
      );
  }
  printNextSteps(target, pm, options.install && installed);
  return options.install && !installed ? 1 : 0;
}

async function readOrAskManifest(target: string, options: CreateOptions, interactive: boolean) {
  if (options.manifest) {
    const path = resolve(options.manifest);
    const model = await loadManifest(path, displayPath(path));
    const text = await readFile(path, "utf8");
    return { model, manifestText: withSchemaRef(text, model.manifest.$schema !== undefined) };
  }
  const name = packageNameFromDir(basename(target));
  let answers: StarterAnswers = { name, ...STARTER_DEFAULTS };
  if (interactive) {
    const [description, capability, price] = await ask([
      { message: "What does the agent do", default: STARTER_DEFAULTS.description },
      {
        message: "First capability",
        default: STARTER_DEFAULTS.capability,
        validate: capabilityNameProblem,
      },
      {
        message: "Price per job in USDC",
        default: STARTER_DEFAULTS.price,
        validate: amountProblem,
      },
    ]);
    answers = { name, description: description!, capability: capability!, price: price! };
  }
  const manifestText = starterManifest(answers);
  return { model: parseManifest(manifestText, "agent.json"), manifestText };
}

function printNextSteps(target: string, pm: PackageManager, installed: boolean): void {
  const steps = [`cd ${displayPath(target)}`];
  if (!installed) steps.push(`${pm} install`);
  steps.push(`${runScript(pm, "dev")}        # dev mode: no payment needed`);
  process.stdout.write(
    [
      "",
      "Next steps:",
      ...steps.map((s) => `  ${s}`),
      "",
      "Then try it:",
      "  curl localhost:3000/about",
      "Write your logic in src/capabilities/, and read the project's README for payments and going live.",
      "",
    ].join("\n"),
  );
}
