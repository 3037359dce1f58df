import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { AgentModel } from "../manifest/model.js";
import { GENERATED_DIR, type GeneratedFile } from "./file-set.js";
import { generateDiscovery } from "./discovery.js";
import { formatFile } from "./format.js";
import { generateHandlerStub, handlerPath } from "./handlers.js";
import type { PackageManager } from "./package-manager.js";
import { generatePackageJson, generateProjectFiles } from "./project.js";
import { generateRegistry } from "./registry.js";
import { generateSamples } from "./samples.js";
import { packSelf } from "../scaffold/vendor.js";
import { templateFolder } from "./templates.js";
import { generateTypes } from "./types.js";
import { generateValidators } from "./validators.js";

export type { GeneratedFile } from "./file-set.js";
export { GENERATED_DIR } from "./file-set.js";

export interface Generation {
  files: GeneratedFile[];
  /** Things the user should know but that do not stop generation (e.g. a sample the generator could not make). */
  warnings: string[];
}

const MANIFEST_SCHEMA = fileURLToPath(new URL("../../schema/agent.schema.json", import.meta.url));

/**
 * What `create-agent generate` owns: everything under src/generated/ (always rewritten), plus a handler stub
 * for every capability (written only when its file is missing). Pure: the same model gives the same bytes.
 */
export async function generateCode(model: AgentModel): Promise<Generation> {
  const warnings: string[] = [];
  const samples = generateSamples(model);
  warnings.push(...samples.problems);
  const discovery = generateDiscovery(model);
  // Its input samples are samples.ts's own, so their problems are already listed.
  for (const problem of discovery.problems) if (!warnings.includes(problem)) warnings.push(problem);
  const generated: Array<[string, string]> = [
    [`${GENERATED_DIR}/types.ts`, await generateTypes(model)],
    [`${GENERATED_DIR}/validators.ts`, generateValidators(model)],
    [`${GENERATED_DIR}/registry.ts`, generateRegistry(model)],
    [`${GENERATED_DIR}/samples.ts`, samples.contents],
    [`${GENERATED_DIR}/discovery.ts`, discovery.discoveryTs],
    [`${GENERATED_DIR}/openapi.json`, discovery.openapiJson],
    [`${GENERATED_DIR}/agent.schema.json`, readFileSync(MANIFEST_SCHEMA, "utf8")],
  ];
  const files: GeneratedFile[] = [];
  for (const [path, contents] of generated) {
    const formatted = path.endsWith(".ts") ? await formatFile(path, contents) : contents;
    files.push({ path, contents: formatted, owner: "generated" });
  }
  for (const capability of model.capabilities) {
    const stub = generateHandlerStub(capability);
    warnings.push(...stub.problems.map((p) => `${capability.name}: ${p}`));
    const path = handlerPath(capability.name);
    files.push({ path, contents: await formatFile(path, stub.contents), owner: "user" });
  }
  return { files, warnings };
}

/**
 * A whole new project: the code above, the embedded runtime (copied verbatim from templates/runtime), the
 * project files (package.json, README, entry points, tests, config), the manifest itself, and this CLI packed
 * into vendor/ so the project regenerates with the very version that created it.
 */
export async function generateProject(
  model: AgentModel,
  manifestText: string,
  options: { packageManager?: PackageManager } = {},
): Promise<Generation> {
  const code = await generateCode(model);
  const generator = await packSelf();
  const files: GeneratedFile[] = [{ path: "agent.json", contents: manifestText, owner: "user" }];
  files.push({
    path: "package.json",
    contents: generatePackageJson(model, generator),
    owner: "user",
  });
  files.push({ path: generator.path, contents: generator.contents, owner: "user" });
  // Template files are kept formatted in this repo, so they are not run through prettier again (it would
  // cost most of the scaffolding time, for the same bytes).
  for (const file of generateProjectFiles(model, options.packageManager))
    files.push({ ...file, owner: "user" });
  for (const file of runtimeFiles()) files.push(file);
  files.push(...code.files);
  return { files, warnings: code.warnings };
}

/** Every .ts file under templates/runtime (subfolders too), copied verbatim into src/runtime/ (they are tested in this repo). */
function runtimeFiles(): GeneratedFile[] {
  return templateFolder("runtime")
    .filter((t) => t.path.endsWith(".ts") && !t.path.endsWith(".test.ts"))
    .map((t) => ({ path: `src/runtime/${t.path}`, contents: t.render({}), owner: "user" as const }));
}
