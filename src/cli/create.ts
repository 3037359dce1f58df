import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { generateProject } from "../generate/index.js";
import { scriptCommand } from "../generate/package-manager.js";
import {
  amountProblem,
  type AgentModel,
  capabilityNameProblem,
  type FieldDescriptor,
  FIELD_TYPES,
  loadManifest,
  parseManifest,
} from "../manifest/index.js";
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
  starterCapability,
  starterManifest,
  STARTER_DEFAULTS,
  withSchemaRef,
} from "../scaffold/starter-manifest.js";
import { inspectTarget, type TargetState } from "../scaffold/target.js";
import { insideToolHome, TOOL_ROOT } from "../scaffold/tool-home.js";
import { DEFAULT_FEATURES } from "../features.js";
import { askFeatures, describeFeatures, featuresFromFlag } from "./create-features.js";
import { CliError } from "./errors.js";
import { parseFieldSpecs } from "./field-spec.js";
import { CancelledError, openPrompter, type Prompter } from "./prompts.js";

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

interface Project {
  model: AgentModel;
  manifestText: string;
  /** Undefined until chosen: then the defaults. */
  features?: string[];
}

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
  // Everything that can fail without a question fails before the first one, and before anything is written.
  const flagFeatures = featuresFromFlag(options.features);
  const fromFile = options.manifest ? await readManifestFile(options.manifest) : undefined;
  const given = directory ?? (interactive ? undefined : "my-agent");
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

  let target: string;
  let project: Project;
  if (interactive) {
    const prompter = openPrompter();
    try {
      target = given !== undefined ? resolve(given) : await askFolder(prompter, options);
      project = fromFile ?? (await askStarter(prompter, target));
      project = { ...project, features: flagFeatures ?? (await askFeatures(prompter)) };
      prompter.say(await summary(target, project, pm, options));
      if (!(await prompter.confirm("Create it?"))) throw new CancelledError();
    } finally {
      prompter.close();
    }
  } else {
    target = resolve(given!);
    project =
      fromFile ??
      starterProject({ name: packageNameFromDir(basename(target)), ...STARTER_DEFAULTS });
    if (flagFeatures) project = { ...project, features: flagFeatures };
  }

  const { model, manifestText, features } = project;
  const { files, warnings } = await generateProject(model, manifestText, {
    packageManager: pm,
    ...(features && { features }),
  });
  await writeProject(target, files, options.force === true);
  const where = shownPath(target) === "." ? "the current folder" : shownPath(target);
  process.stdout.write(`\nCreated agent "${model.name}" in ${where} (${files.length} files).\n`);
  for (const warning of warnings) process.stdout.write(`warning: ${warning}\n`);

  let installed = false;
  if (options.install) {
    process.stdout.write(`\nInstalling dependencies with ${pm}...\n`);
    const outcome = await installDependencies(target, pm);
    installed = outcome.ok;
    if (!outcome.ok) {
      const retry = [cdCommand(target), `${pm} install`].filter(Boolean).join(" && ");
      process.stderr.write(
        `\n\`${pm} install\` ${describeFailure(outcome)}. The project itself is complete in ${where}: fix the problem shown above, then retry with \`${retry}\`.\n`,
      );
    } else {
      // src/runtime's declarations, built once now, so the first typecheck checks only your code against them.
      const { prepareRuntimeTypes, runtimeTypesWarning } = await import("../scaffold/runtime-types.js");
      process.stdout.write("\nBuilding src/runtime's type declarations (tsc -b src/runtime)...\n");
      const types = await prepareRuntimeTypes(target);
      if (!types.ok) process.stdout.write(runtimeTypesWarning(types, scriptCommand(pm, "typecheck")));
    }
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

async function readManifestFile(file: string): Promise<Project> {
  const path = resolve(file);
  const model = await loadManifest(path, displayPath(path));
  const text = await readFile(path, "utf8");
  return { model, manifestText: withSchemaRef(text, model.manifest.$schema !== undefined) };
}

function starterProject(...args: Parameters<typeof starterManifest>): Project {
  const manifestText = starterManifest(...args);
  return { model: parseManifest(manifestText, "agent.json"), manifestText };
}

/**
 * Why the project cannot go into `target` ("./x is not empty (a, b)"), or undefined when it can.
 * `tool`: the folder is inside create-agent's own, where the project would get no git repository
 * of its own and would pick up the tool's configuration (its vitest config, its tsconfig).
 */
function targetProblem(
  target: string,
  state: TargetState,
  options: Pick<CreateOptions, "force" | "insideToolRepo">,
): { kind: "folder" | "tool"; text: string } | undefined {
  if (!options.insideToolRepo && insideToolHome(target))
    return {
      kind: "tool",
      text:
        `${displayPath(target)} is inside create-agent's own folder (${TOOL_ROOT.replace(/[\\/]$/, "")}): ` +
        "the project would have no git repository of its own and would pick up this tool's configuration. " +
        "Create it elsewhere, e.g. ../my-agent, or pass --inside-tool-repo if you mean it",
    };
  if (state.kind === "file")
    return { kind: "folder", text: `${displayPath(target)} exists and is a file, not a folder` };
  if (state.kind === "non-empty" && !options.force)
    return { kind: "folder", text: `${displayPath(target)} is not empty (${listEntries(state)})` };
  return undefined;
}

function listEntries(state: TargetState & { kind: "non-empty" }): string {
  return state.entries.slice(0, 5).join(", ") + (state.entries.length > 5 ? ", ..." : "");
}

async function askFolder(
  prompter: Prompter,
  options: Pick<CreateOptions, "force" | "insideToolRepo">,
): Promise<string> {
  const answer = await prompter.ask({
    message: "Project folder",
    default: "my-agent",
    validate: async (folder) => {
      let state: TargetState;
      try {
        state = await inspectTarget(resolve(folder));
      } catch (error) {
        return `${displayPath(resolve(folder))} cannot be used (${(error as Error).message}): choose another folder`;
      }
      const problem = targetProblem(resolve(folder), state, options);
      if (!problem) return undefined;
      if (problem.kind === "tool") return problem.text;
      return state.kind === "file"
        ? `${problem.text}: choose another name`
        : `${problem.text}: choose a new or empty folder (or rerun with --force to write into this one)`;
    },
  });
  return resolve(answer);
}

const FIELDS_HELP = [
  "Fields are <name>:<type>, separated by commas, e.g. text:string!, tags:string[]",
  `  types: ${FIELD_TYPES.join(", ")} (a type followed by [] is a list of it)`,
  "  inputs are optional unless marked !, outputs are required unless marked ?",
  "",
].join("\n");

/** The starter project from the user's answers: agent description, first capability, its price and fields. */
async function askStarter(prompter: Prompter, target: string): Promise<Project> {
  const name = packageNameFromDir(basename(target));
  const description = await prompter.ask({
    message: "What does the agent do",
    default: STARTER_DEFAULTS.description,
  });
  const capability = await prompter.ask({
    message: "First capability",
    default: STARTER_DEFAULTS.capability,
    validate: capabilityNameProblem,
  });
  const starter = starterCapability(capability);
  const capabilityDescription = await prompter.ask({
    message: `What does ${capability} do`,
    default: starter.description,
  });
  const price = await prompter.ask({
    message: "Price per job in USDC",
    default: STARTER_DEFAULTS.price,
    validate: amountProblem,
  });
  prompter.say(FIELDS_HELP);
  const inputs = await prompter.ask({
    message: "Input fields, or none",
    default: starter.inputs.join(", "),
    validate: (answer) => fieldListProblem(answer, "input"),
  });
  const outputs = await prompter.ask({
    message: "Output fields",
    default: starter.outputs.join(", "),
    validate: (answer) => fieldListProblem(answer, "output"),
  });
  return starterProject({
    name,
    description,
    capability,
    price,
    capabilityDescription,
    inputs: parseFieldList(inputs, "input"),
    outputs: parseFieldList(outputs, "output"),
  });
}

/**
 * A comma-separated answer in the `--input`/`--output` syntax ("text:string!, max_words:integer") as field
 * descriptors; "none" for no inputs. Throws CliError with field-spec.ts's explanation, without the flag name.
 */
export function parseFieldList(
  answer: string,
  kind: "input" | "output",
): Record<string, FieldDescriptor> {
  if (answer.trim().toLowerCase() === "none") {
    if (kind === "input") return {};
    throw new CliError(`a capability needs at least one output field, e.g. result:string`);
  }
  const specs = answer
    .split(",")
    .map((spec) => spec.trim())
    .filter((spec) => spec !== "");
  if (specs.length === 0) {
    throw new CliError(
      kind === "input"
        ? `no input fields given: write them as name:type (e.g. text:string!), or none`
        : `a capability needs at least one output field, e.g. result:string`,
    );
  }
  try {
    return parseFieldSpecs(specs, kind === "input" ? "--input" : "--output");
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    throw new CliError(error.message.replace(/^--(input|output) /, ""));
  }
}

function fieldListProblem(answer: string, kind: "input" | "output"): string | undefined {
  try {
    parseFieldList(answer, kind);
    return undefined;
  } catch (error) {
    if (error instanceof CliError) return error.message;
    throw error;
  }
}

/** What is about to be created, for the user to confirm. */
async function summary(
  target: string,
  { model, features }: Project,
  pm: PackageManager,
  options: CreateOptions,
): Promise<string> {
  const row = (label: string, value: string) => `  ${`${label}:`.padEnd(18)}${value}`;
  const state = await inspectTarget(target);
  const folderNote =
    state.kind === "missing"
      ? "new folder"
      : state.kind === "non-empty"
        ? "not empty: files the project needs are replaced"
        : "empty folder";
  const lines = [
    "",
    "About to create:",
    row("Folder", `${shownPath(target)} (${folderNote})`),
    row("Agent", model.description ? `${model.name}: ${model.description}` : model.name),
  ];
  for (const capability of model.capabilities) {
    const { description, pricing, input_schema, output_schema } = capability.declaration;
    lines.push(
      row(
        "Capability",
        `${capability.name}, ${pricing.amount} USDC per job${description ? `: ${description}` : ""}`,
      ),
      row("  inputs", describeFields(input_schema, "input")),
      row("  outputs", describeFields(output_schema, "output")),
    );
  }
  lines.push(
    row("Features", describeFeatures(features ?? DEFAULT_FEATURES)),
    row(
      "Package manager",
      options.install
        ? `${pm} (installs dependencies now)`
        : `${pm} (--no-install: dependencies not installed)`,
    ),
    row("Git", options.git ? "yes (new repository with a first commit)" : "no (--no-git)"),
    "",
    "",
  );
  return lines.join("\n");
}

function describeType(field: FieldDescriptor): string {
  return field.type === "array" && field.items ? `${describeType(field.items)}[]` : field.type;
}

/** "text (string, required), max_words (integer, optional)"; outputs are required unless said otherwise. */
function describeFields(fields: Record<string, FieldDescriptor>, kind: "input" | "output"): string {
  const described = Object.entries(fields).map(([name, field]) => {
    if (kind === "input")
      return `${name} (${describeType(field)}, ${field.required === true ? "required" : "optional"})`;
    return `${name} (${describeType(field)}${field.required === false ? ", optional" : ""})`;
  });
  return described.join(", ") || "none";
}

/** A word as a POSIX shell reads it: unchanged when safe, else single-quoted ('It'\''s' for It's). */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `cd <project>` as the user would type it from here; empty when the project is the current folder. */
function cdCommand(target: string): string {
  if (shownPath(target) === ".") return "";
  const path = displayPath(target);
  return `cd ${shellQuote(path.startsWith("-") ? `./${path}` : path)}`;
}

function printNextSteps(target: string, pm: PackageManager, installed: boolean): void {
  const steps = [cdCommand(target)].filter(Boolean);
  if (!installed) steps.push(`${pm} install`);
  steps.push(`${scriptCommand(pm, "dev")}        # dev mode: no payment needed`);
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
