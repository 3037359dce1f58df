import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_FEATURES, inTableOrder } from "../features.js";
import type { AgentModel } from "../manifest/model.js";
import { GENERATED_DIR, type GeneratedFile } from "./file-set.js";
import { generateDiscovery } from "./discovery.js";
import { generateHandlerStub, handlerPath, handlerStubProblems } from "./handlers.js";
import { capabilitySamples } from "./openapi.js";
import type { PackageManager } from "./package-manager.js";
import { Unsupported } from "./print/doc.js";
import { generateRegistry } from "./registry.js";
import { generateSamples } from "./samples.js";
import type { SourceFile } from "./source-file.js";
import { generateTypes } from "./types.js";
import { generateValidators } from "./validators.js";

export type { GeneratedFile } from "./file-set.js";
export { GENERATED_DIR } from "./file-set.js";

export interface Generation {
  files: GeneratedFile[];
  /** Things the user should know but that do not stop generation (e.g. a sample the generator could not make). */
  warnings: string[];
}

export interface GenerateOptions {
  /**
   * Whether a project file already exists (path relative to the project root, e.g.
   * "src/capabilities/summarize.ts"). Handler stubs are user-owned and only ever written when missing, so a
   * stub whose file exists is neither built nor returned (its warnings still are). Without it every stub is
   * built and returned.
   */
  existing?: (path: string) => boolean;
}

const MANIFEST_SCHEMA = fileURLToPath(new URL("../../schema/agent.schema.json", import.meta.url));

/**
 * What `create-agent generate` owns: everything under src/generated/ (always rewritten), plus a handler stub
 * for every capability (written only when its file is missing). Pure: the same model gives the same bytes.
 *
 * Every file comes out already formatted as prettier (printWidth 100, trailing commas) formats it, without
 * running prettier: print/ builds prettier's own layout (tests compare the two). Only text whose width
 * the printer does not know exactly (wide characters such as CJK or emoji) falls back to prettier.
 */
export async function generateCode(
  model: AgentModel,
  options: GenerateOptions = {},
): Promise<Generation> {
  const computed = capabilitySamples(model);
  // Input problems first, then output ones (samples.ts, then discovery.ts).
  const warnings = [...computed.inputProblems, ...computed.outputProblems];
  const discovery = generateDiscovery(model, computed);
  const generated: Array<[string, SourceFile | string]> = [
    [`${GENERATED_DIR}/types.ts`, generateTypes(model)],
    [`${GENERATED_DIR}/validators.ts`, generateValidators(model)],
    [`${GENERATED_DIR}/registry.ts`, generateRegistry(model)],
    [`${GENERATED_DIR}/samples.ts`, generateSamples(model, computed.samples)],
    [`${GENERATED_DIR}/discovery.ts`, discovery.discoveryTs],
    [`${GENERATED_DIR}/openapi.json`, discovery.openapiJson],
    [`${GENERATED_DIR}/agent.schema.json`, readFileSync(MANIFEST_SCHEMA, "utf8")],
  ];
  const files: GeneratedFile[] = [];
  for (const [path, file] of generated) {
    const contents = typeof file === "string" ? file : await printFile(path, file);
    files.push({ path, contents, owner: "generated" });
  }
  for (const capability of model.capabilities) {
    const path = handlerPath(capability.name);
    if (options.existing?.(path)) {
      warnings.push(...handlerStubProblems(capability).map((p) => `${capability.name}: ${p}`));
      continue;
    }
    const stub = generateHandlerStub(capability);
    warnings.push(...stub.problems.map((p) => `${capability.name}: ${p}`));
    files.push({ path, contents: await printFile(path, stub), owner: "user" });
  }
  return { files, warnings };
}

/**
 * A file's formatted text: printed directly, or, for text the printer cannot lay out exactly, its source
 * formatted by prettier (loaded only then).
 */
export async function printFile(path: string, file: SourceFile): Promise<string> {
  try {
    return file.print();
  } catch (error) {
    if (!(error instanceof Unsupported)) throw error;
    const { formatFile } = await import("./format.js");
    return formatFile(path, file.source());
  }
}

/**
 * A whole new project: the code above, the embedded runtime (the core of templates/runtime and the folders
 * of `features`, default DEFAULT_FEATURES: see generate/runtime.ts), the
 * project files (package.json, README, entry points, tests, config), the manifest itself, and this CLI packed
 * into vendor/ so the project regenerates with the very version that created it.
 */
export async function generateProject(
  model: AgentModel,
  manifestText: string,
  options: { packageManager?: PackageManager; features?: readonly string[] } = {},
): Promise<Generation> {
  const [code, { packSelf }, { generatePackageJson, generateProjectFiles }, { runtimeFilesFor }] =
    await Promise.all([
      generateCode(model),
      import("../scaffold/vendor.js"),
      import("./project.js"),
      import("./runtime.js"),
    ]);
  const features = inTableOrder(options.features ?? DEFAULT_FEATURES);
  const generator = await packSelf();
  const files: GeneratedFile[] = [{ path: "agent.json", contents: manifestText, owner: "user" }];
  files.push({
    path: "package.json",
    contents: generatePackageJson(model, generator, features, options.packageManager),
    owner: "user",
  });
  files.push({ path: generator.path, contents: generator.contents, owner: "user" });
  // Template files are kept formatted in this repo, so they are not run through prettier again (it would
  // cost most of the scaffolding time, for the same bytes).
  for (const file of generateProjectFiles(model, options.packageManager, features))
    files.push({ ...file, owner: "user" });
  files.push(...runtimeFilesFor(features));
  files.push(...code.files);
  return { files, warnings: code.warnings };
}
