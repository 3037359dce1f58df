/**
 * `create-agent [directory]`: checks what can fail before any question, asks (create-target.ts,
 * create-questions.ts, create-features.ts) or takes the defaults, then generates, writes, installs and
 * commits the project and prints the next steps.
 */
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { generateProject } from "../generate/index.js";
import { scriptCommand } from "../generate/package-manager.js";
import { loadManifest } from "../manifest/index.js";
import { initGit } from "../scaffold/git.js";
import {
  describeFailure,
  detectPackageManager,
  installDependencies,
  isPackageManagerAvailable,
  missingPackageManagerMessage,
  type PackageManager,
} from "../scaffold/install.js";
import { displayPath, shownPath, writeProject } from "../scaffold/stage.js";
import {
  packageNameFromDir,
  STARTER_DEFAULTS,
  withSchemaRef,
} from "../scaffold/starter-manifest.js";
import { inspectTarget } from "../scaffold/target.js";
import { askFeatures, featuresFromFlag } from "./create-features.js";
import { askStarter, type Project, starterProject, summary } from "./create-questions.js";
import { askFolder, targetProblem } from "./create-target.js";
import { CliError } from "./errors.js";
import { CancelledError, openPrompter } from "./prompts.js";
import { watchStopSignals } from "../stop-signals.js";
import {
  cdCommand,
  printNextSteps,
  stoppedBeforeDone,
  stoppedBeforeWriting,
} from "./create-next-steps.js";

export interface CreateOptions {
  yes?: boolean;
  manifest?: string;
  force?: boolean;
  install: boolean;
  git: boolean;
  packageManager?: PackageManager;
  /** Allow a project inside create-agent's own folder (refused otherwise). */
  insideToolRepo?: boolean;
  /** --features: comma-separated optional features, `all` or `none` (default: asked, or DEFAULT_FEATURES). */
  features?: string;
}

/** The exit code of a run the user stopped (as a shell reports Ctrl-C: 128 + SIGINT). */
export const CANCELLED_EXIT_CODE = 130;

/**
 * `create-agent [directory]`: questions (unless --yes or not a terminal), a summary to confirm, then generate,
 * stage, move, install, git. Stopping at a question (Ctrl-C, Ctrl-D, "n") writes nothing and exits 130.
 */
export async function create(
  directory: string | undefined,
  options: CreateOptions,
): Promise<number> {
  try {
    return await createProject(directory, options);
  } catch (error) {
    if (!(error instanceof CancelledError)) throw error;
    process.stderr.write("cancelled\n");
    return CANCELLED_EXIT_CODE;
  }
}

async function createProject(
  directory: string | undefined,
  options: CreateOptions,
): Promise<number> {
  const interactive = !options.yes && process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (!directory && !interactive && !options.yes)
    throw new CliError(
      "missing <directory>: say where to create the project (a folder, e.g. ../my-agent), or pass --yes for ./my-agent",
    );
  const given = directory ?? (interactive ? undefined : "my-agent");
  const start = await checkBeforeAsking(given, options);
  const { target, project } = interactive
    ? await askProject(given, start, options)
    : defaultProject(given!, start);

  // From here a Ctrl-C (or SIGTERM) is handled, not fatal: before the files are moved into place it
  // writes nothing (the staging folder goes too); after, it skips the install and git (finishProject).
  const stop = watchStopSignals();
  try {
    const { model, manifestText, features } = project;
    const { files, warnings } = await generateProject(model, manifestText, {
      packageManager: start.pm,
      ...(features && { features }),
    });
    const replaced = stop.signal.aborted
      ? undefined
      : await writeProject(target, files, options.force === true, stop.signal).catch(
          (error: unknown) => {
            throw writeRefused(target, error);
          },
        );
    if (replaced === undefined) return stoppedBeforeWriting(target, stop.signal.reason);
    const where = shownPath(target) === "." ? "the current folder" : shownPath(target);
    process.stdout.write(`\nCreated agent "${model.name}" in ${where} (${files.length} files).\n`);
    if (replaced.length > 0) process.stdout.write(`Replaced (--force): ${replaced.join(", ")}.\n`);
    for (const warning of warnings) process.stdout.write(`warning: ${warning}\n`);
    return await finishProject(target, start.pm, where, options, stop.signal);
  } finally {
    stop.off();
  }
}

/**
 * Install and git, once the files are written. Ctrl-C (or SIGTERM) meanwhile stops the install and skips
 * what is left, saying what was done and what to run to finish it (exit 130): never a silent half project.
 */
async function finishProject(
  target: string,
  pm: PackageManager,
  where: string,
  options: CreateOptions,
  stop: AbortSignal,
): Promise<number> {
  const installed =
    options.install && !stop.aborted ? await install(target, pm, where, stop) : false;
  if (!stop.aborted && options.git) {
    const git = await initGit(target);
    if (git !== "committed")
      process.stdout.write(
        `git: ${git === "initialized" ? "repository created, files staged (no git identity to commit with)" : git}\n`,
      );
  }
  if (stop.aborted)
    return stoppedBeforeDone(target, pm, where, stop.reason, { ...options, installed });
  printNextSteps(target, pm, options.install && installed);
  return options.install && !installed ? 1 : 0;
}

/**
 * A folder the file system will not create there (ENOENT from mkdtemp under /proc, say): said with the
 * path and its reason, not a stack trace. Permissions and full disks are main.ts's to say.
 */
function writeRefused(target: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !["ENOENT", "ENOTDIR", "EINVAL", "ELOOP", "ENAMETOOLONG", "EEXIST"].includes(code))
    return error;
  return new CliError(
    `cannot create the project in ${displayPath(target)}: the file system refused (${(error as Error).message}). Choose another folder`,
  );
}

/** What the flags settle before any question: the features, a manifest file, the package manager. */
interface Start {
  flagFeatures: string[] | undefined;
  fromFile: Project | undefined;
  pm: PackageManager;
}

/** Everything that can fail without a question fails before the first one, and before anything is written. */
async function checkBeforeAsking(
  given: string | undefined,
  options: CreateOptions,
): Promise<Start> {
  const flagFeatures = featuresFromFlag(options.features);
  const fromFile = options.manifest ? await readManifestFile(options.manifest) : undefined;
  if (given !== undefined) {
    const state = await inspectTarget(resolve(given));
    const problem = targetProblem(resolve(given), state, options);
    if (problem)
      throw new CliError(
        state.kind === "non-empty" && problem.kind === "folder"
          ? `${problem.text}. Choose a new folder, or pass --force to write into it (files the project needs are replaced).`
          : problem.text,
      );
  }
  const pm = options.packageManager ?? detectPackageManager();
  if (options.install && !(await isPackageManagerAvailable(pm)))
    throw new CliError(missingPackageManagerMessage(pm));
  return { flagFeatures, fromFile, pm };
}

/** In a terminal: the folder (unless given), the starter (unless --manifest), the features (unless --features), then a confirmation. */
async function askProject(
  given: string | undefined,
  { flagFeatures, fromFile, pm }: Start,
  options: CreateOptions,
): Promise<{ target: string; project: Project }> {
  const prompter = openPrompter();
  try {
    const target = given !== undefined ? resolve(given) : await askFolder(prompter, options);
    let project = fromFile ?? (await askStarter(prompter, target));
    project = { ...project, features: flagFeatures ?? (await askFeatures(prompter)) };
    prompter.say(await summary(target, project, pm, options));
    if (!(await prompter.confirm("Create it?"))) throw new CancelledError();
    return { target, project };
  } finally {
    prompter.close();
  }
}

/** Without questions: the --manifest file or the starter named after the folder, and --features if given. */
function defaultProject(given: string, { flagFeatures, fromFile }: Start) {
  const target = resolve(given);
  let project =
    fromFile ?? starterProject({ name: packageNameFromDir(basename(target)), ...STARTER_DEFAULTS });
  if (flagFeatures) project = { ...project, features: flagFeatures };
  return { target, project };
}

/** Installs the dependencies, then builds src/runtime's declarations; false (said how to retry) when the install failed. */
async function install(
  target: string,
  pm: PackageManager,
  where: string,
  stop: AbortSignal,
): Promise<boolean> {
  process.stdout.write(`\nInstalling dependencies with ${pm}...\n`);
  const outcome = await installDependencies(target, pm, stop);
  if (stop.aborted) return outcome.ok; // the caller says what was done
  if (!outcome.ok) {
    const retry = [cdCommand(target), `${pm} install`].filter(Boolean).join(" && ");
    process.stderr.write(
      `\n\`${pm} install\` ${describeFailure(outcome)}. The project itself is complete in ${where}: fix the problem shown above, then retry with \`${retry}\`.\n`,
    );
    return false;
  }
  // src/runtime's declarations, built once now, so the first typecheck checks only your code against them.
  const { prepareRuntimeTypes, runtimeTypesWarning } = await import("../scaffold/runtime-types.js");
  process.stdout.write("\nBuilding src/runtime's type declarations (tsc -b src/runtime)...\n");
  const types = await prepareRuntimeTypes(target);
  if (!types.ok && !stop.aborted)
    process.stdout.write(runtimeTypesWarning(types, scriptCommand(pm, "typecheck")));
  return true;
}

async function readManifestFile(file: string): Promise<Project> {
  const path = resolve(file);
  const model = await loadManifest(path, displayPath(path));
  const text = await readFile(path, "utf8");
  return { model, manifestText: withSchemaRef(text, model.manifest.$schema !== undefined) };
}
