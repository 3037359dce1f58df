import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { generateCode, GENERATED_DIR } from "../generate/index.js";
import { handlerPath } from "../generate/handlers.js";
import {
  addCapabilityToText,
  amountProblem,
  capabilityNameProblem,
  type CapabilityManifest,
  ManifestError,
  parseManifest,
  removeCapabilityFromText,
} from "../manifest/index.js";
import { applyFiles } from "../write/apply.js";
import { writeFileAtomic } from "../write/atomic.js";
import { CliError } from "./errors.js";
import { projectScript } from "./hint.js";
import { parseFieldSpecs } from "./field-spec.js";
import { describeReport, foreignWarnings } from "./generate.js";
import { projectRoot, requireUpgraded } from "./project-root.js";

export interface AddCapabilityOptions {
  cwd?: string;
  price: string;
  description?: string;
  input: string[];
  output: string[];
}

/** Fields a new capability gets when none are given: one required text in, one text out. */
const DEFAULT_INPUT = ["text:string!"];
const DEFAULT_OUTPUT = ["result:string"];

/** `create-agent add-capability <name>`: manifest entry, handler stub, regenerated code, or nothing at all. */
export async function addCapability(name: string, options: AddCapabilityOptions): Promise<number> {
  const root = projectRoot(options.cwd);
  requireUpgraded(root);
  const { text, capabilities } = await readValidManifest(root);
  if (Object.hasOwn(capabilities, name)) {
    throw new CliError(
      `capability "${name}" already exists in agent.json; choose another name, or edit it there and run \`${projectScript("generate")}\``,
    );
  }
  const nameProblem = capabilityNameProblem(name);
  if (nameProblem) throw new CliError(nameProblem);
  const priceProblem = amountProblem(options.price);
  if (priceProblem) throw new CliError(`--price: ${priceProblem}`);
  const entry: CapabilityManifest = {
    ...(options.description ? { description: options.description } : {}),
    pricing: { model: "per_job", amount: options.price, currency: "USDC" },
    input_schema: parseFieldSpecs(options.input.length ? options.input : DEFAULT_INPUT, "--input"),
    output_schema: parseFieldSpecs(
      options.output.length ? options.output : DEFAULT_OUTPUT,
      "--output",
    ),
  };
  const next = addCapabilityToText(text, name, entry);
  const stub = handlerPath(name);
  // Looked at before agent.json changes: a running `generate --watch` (`npm run dev`) may write the new stub
  // between our write of agent.json and our own look, and that file is not the user's.
  const hadStub = existsSync(join(root, stub));
  const report = await commit(root, next);
  process.stdout.write(
    `Added capability "${name}" (${options.price} USDC per job) to agent.json.\n`,
  );
  for (const line of describeReport(report)) process.stdout.write(`${line}\n`);
  for (const warning of foreignWarnings(report)) process.stderr.write(`warning: ${warning}\n`);
  if (report.kept.includes(stub)) process.stdout.write(keptStubLine(stub, hadStub));
  process.stdout.write(`Write its logic in ${stub}.\n`);
  return 0;
}

/** What add-capability says of a stub it found in place: the user's own file, or one a watcher just wrote. */
function keptStubLine(stub: string, hadStub: boolean): string {
  if (hadStub)
    return `Kept your existing ${stub}: check that it still matches the new types (npm run typecheck).\n`;
  return `  wrote    ${stub} (a new stub, written a moment ago by a running \`generate --watch\`, such as \`npm run dev\`'s)\n`;
}

/** `create-agent remove-capability <name>`: out of the manifest and the generated code; the handler stays. */
export async function removeCapability(name: string, options: { cwd?: string }): Promise<number> {
  const root = projectRoot(options.cwd);
  requireUpgraded(root);
  const { text, capabilities } = await readValidManifest(root);
  if (!Object.hasOwn(capabilities, name)) {
    const available = Object.keys(capabilities)
      .map((n) => `"${n}"`)
      .join(", ");
    throw new CliError(`no capability "${name}" in agent.json; it has ${available}`);
  }
  if (Object.keys(capabilities).length === 1) {
    throw new CliError(
      `"${name}" is the only capability, and an agent needs at least one: add another first (\`${projectScript("add-capability", "<name>")}\`)`,
    );
  }
  const report = await commit(root, removeCapabilityFromText(text, name));
  const handler = handlerPath(name);
  process.stdout.write(`Removed capability "${name}" from agent.json.\n`);
  for (const line of describeReport(report)) process.stdout.write(`${line}\n`);
  for (const warning of foreignWarnings(report)) process.stderr.write(`warning: ${warning}\n`);
  process.stdout.write(
    `Left ${handler} in place: it is your code. It imports types that no longer exist, so delete it (or move what you need) before \`npm run typecheck\`.\n`,
  );
  return 0;
}

/** agent.json's text, refusing to edit a manifest that is already invalid (fix that first). */
async function readValidManifest(root: string) {
  const text = await readFile(join(root, "agent.json"), "utf8");
  try {
    return { text, capabilities: parseManifest(text, "agent.json").manifest.capabilities };
  } catch (error) {
    if (error instanceof ManifestError) {
      throw new CliError(
        `agent.json has problems; fix them before changing capabilities:\n${error.message}`,
      );
    }
    throw error;
  }
}

/**
 * Validates the edited manifest and generates everything in memory first; only then writes agent.json and the
 * generated files. A refused edit changes no file.
 */
async function commit(root: string, nextText: string) {
  let model;
  try {
    model = parseManifest(nextText, "agent.json");
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    throw new CliError(
      `that change would make agent.json invalid, so nothing was changed:\n${error.message}`,
    );
  }
  const { files } = await generateCode(model);
  // A dry run first: a path it refuses (a folder linked out of the project) leaves agent.json unedited.
  await applyFiles(root, files, { prune: GENERATED_DIR, check: true });
  await writeFileAtomic(join(root, "agent.json"), nextText);
  return applyFiles(root, files, { prune: GENERATED_DIR });
}
