/**
 * The runtime a project carries: the core of templates/runtime plus the folders of its features (the
 * table in src/features.ts), copied verbatim into src/runtime/, with features.ts pruned to those features.
 */
import { featureOfRuntimePath, pruneFeatureLines } from "../features.js";
import type { GeneratedFile } from "./file-set.js";
import { templateFolder } from "./templates.js";

/** Where the runtime goes in a project. */
export const RUNTIME_DIR = "src/runtime";
/** The runtime's registry of features, rewritten by `add` and `remove`. */
export const FEATURES_FILE = `${RUNTIME_DIR}/features.ts`;

/** Every runtime template file (all features), by its path in a project (src/runtime/...). */
export function runtimeTemplates(): Map<string, string> {
  return new Map(
    templateFolder("runtime")
      .filter((t) => t.path.endsWith(".ts") && !t.path.endsWith(".test.ts"))
      .map((t) => [`${RUNTIME_DIR}/${t.path}`, t.render({})]),
  );
}

/** The feature a project file belongs to (a file of its folder under src/runtime/), else undefined. */
export function featureOfProjectPath(path: string): string | undefined {
  return path.startsWith(`${RUNTIME_DIR}/`)
    ? featureOfRuntimePath(path.slice(RUNTIME_DIR.length + 1))
    : undefined;
}

/** features.ts as a project with `features` has it. */
export function featuresFileFor(features: readonly string[]): string {
  const template = runtimeTemplates().get(FEATURES_FILE);
  if (template === undefined) throw new Error(`internal: templates/runtime has no features.ts`);
  return pruneFeatureLines(template, features);
}

/** The runtime files of a project with `features`: the core, those features' folders, features.ts pruned. */
export function runtimeFilesFor(features: readonly string[]): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  for (const [path, contents] of runtimeTemplates()) {
    const feature = featureOfProjectPath(path);
    if (feature !== undefined && !features.includes(feature)) continue;
    const text = path === FEATURES_FILE ? pruneFeatureLines(contents, features) : contents;
    files.push({ path, contents: text, owner: "user" });
  }
  return files;
}
