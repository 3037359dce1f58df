/** package.json after `add` or `remove` of a feature (feature-plan.ts). */
import { FEATURES } from "../features.js";
import type { FeaturePlan, ProjectState } from "./feature-plan.js";

/** package.json with the feature's packages added (or dropped) and the record updated; your layout kept. */
export function packageJsonFor(
  state: ProjectState,
  plan: FeaturePlan,
  importedByYou: ReadonlyMap<string, string>,
): string {
  const pkg = structuredClone(state.pkg);
  const deps = { ...((pkg.dependencies as Record<string, string> | undefined) ?? {}) };
  const names = Object.keys(deps);
  const sorted = names.every((n, i) => i === 0 || names[i - 1]! <= n);
  const stillNeeded = new Set(
    FEATURES.filter((f) => plan.after.includes(f.name)).flatMap((f) => Object.keys(f.dependencies)),
  );
  for (const [name, version] of Object.entries(plan.feature.dependencies)) {
    if (plan.verb === "add") {
      if (deps[name] === undefined) {
        deps[name] = version;
        plan.packages.push(`${name}@${version}`);
      } else if (deps[name] !== version) plan.keptPackages.push(`${name}@${deps[name]}`);
    } else if (!stillNeeded.has(name) && deps[name] !== undefined) {
      // Only the pin create-agent wrote goes: a version you chose is yours, as is one your code imports.
      const importer = importedByYou.get(name);
      if (importer) plan.keptPackages.push(`${name}@${deps[name]} (${importer} imports it)`);
      else if (deps[name] === version) {
        delete deps[name];
        plan.packages.push(`${name}@${version}`);
      } else plan.keptPackages.push(`${name}@${deps[name]}`);
    }
  }
  pkg.dependencies = sorted
    ? Object.fromEntries(Object.entries(deps).sort(([a], [b]) => (a < b ? -1 : 1)))
    : deps;
  // The package manager the files add/remove re-rendered are now for (upgrade's base, the next add's).
  const packageManager = state.packageManager;
  pkg.createAgent = { ...(pkg.createAgent as object), features: plan.after, packageManager };
  const indent = /^\{\r?\n([ \t]+)"/.exec(state.pkgText)?.[1] ?? "  ";
  const text = JSON.stringify(pkg, null, indent) + (state.pkgText.endsWith("\n") ? "\n" : "");
  // Its line endings as they were (a CRLF checkout stays CRLF, as every other file add/remove writes).
  return state.pkgText.includes("\r\n") ? text.replaceAll("\n", "\r\n") : text;
}
