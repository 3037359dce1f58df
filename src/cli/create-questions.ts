/**
 * `create`'s questions about the project itself (the agent, its first capability, its fields) and the
 * summary shown before anything is written; the starter project built from the answers or the defaults.
 */
import { basename } from "node:path";
import { DEFAULT_FEATURES } from "../features.js";
import {
  amountProblem,
  type AgentModel,
  capabilityNameProblem,
  type FieldDescriptor,
  FIELD_TYPES,
  parseManifest,
} from "../manifest/index.js";
import type { PackageManager } from "../scaffold/install.js";
import { shownPath } from "../scaffold/stage.js";
import {
  packageNameFromDir,
  starterCapability,
  starterManifest,
  STARTER_DEFAULTS,
} from "../scaffold/starter-manifest.js";
import { inspectTarget } from "../scaffold/target.js";
import type { CreateOptions } from "./create.js";
import { describeFeatures } from "./create-features.js";
import { CliError } from "./errors.js";
import { parseFieldSpecs } from "./field-spec.js";
import type { Prompter } from "./prompts.js";

/** What `create` writes: the manifest (parsed and as text) and the optional features. */
export interface Project {
  model: AgentModel;
  manifestText: string;
  /** Undefined until chosen: then the defaults. */
  features?: string[];
}

export function starterProject(...args: Parameters<typeof starterManifest>): Project {
  const manifestText = starterManifest(...args);
  return { model: parseManifest(manifestText, "agent.json"), manifestText };
}

const FIELDS_HELP = [
  "Fields are <name>:<type>, separated by commas, e.g. text:string!, tags:string[]",
  `  types: ${FIELD_TYPES.join(", ")} (a type followed by [] is a list of it)`,
  "  inputs are optional unless marked !, outputs are required unless marked ?",
  "",
].join("\n");

/** The starter project from the user's answers: agent description, first capability, its price and fields. */
export async function askStarter(prompter: Prompter, target: string): Promise<Project> {
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
export async function summary(
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
