import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { GENERATED_DIR, generateCode } from "../generate/index.js";
import { handlerPath } from "../generate/handlers.js";
import { loadManifest } from "../manifest/index.js";
import { type ApplyReport, applyFiles, projectFileExists } from "../write/apply.js";
import { projectScript } from "./hint.js";
import { projectRoot, requireUpgraded } from "./project-root.js";

export { projectRoot } from "./project-root.js";

export interface GenerateOptions {
  check?: boolean;
  cwd?: string;
}

/**
 * Brings the project in line with agent.json: src/generated/ rewritten where it differs, leftovers there
 * removed, missing handler stubs created. Everything is generated in memory first, so a bad manifest or a
 * generator error changes no file. Throws ManifestError for a bad manifest.
 */
export async function regenerate(
  root: string,
  check = false,
): Promise<{ report: ApplyReport; warnings: string[] }> {
  const model = await loadManifest(join(root, "agent.json"), "agent.json");
  // Handler stubs are written only when missing: existing ones are not even built.
  const { files, warnings } = await generateCode(model, { existing: projectFileExists(root) });
  const report = await applyFiles(root, files, { check, prune: GENERATED_DIR });
  const handlers = new Set(model.capabilities.map((c) => handlerPath(c.name)));
  return { report, warnings: [...warnings, ...(await orphanedHandlers(root, handlers))] };
}

/**
 * Handler files (a module under src/capabilities/ with a default export) of no capability in agent.json:
 * a capability renamed there leaves its code behind, never run, while a new stub answers its jobs.
 */
async function orphanedHandlers(root: string, handlers: ReadonlySet<string>): Promise<string[]> {
  const dir = "src/capabilities";
  const names = await readdir(join(root, dir)).catch(() => [] as string[]);
  const orphans: string[] = [];
  for (const name of names.sort()) {
    const path = `${dir}/${name}`;
    if (!/\.[cm]?ts$/.test(name) || /\.(test|spec|d)\.[cm]?ts$/.test(name) || handlers.has(path))
      continue;
    const text = await readFile(join(root, path), "utf8").catch(() => "");
    if (/^export default /m.test(text))
      orphans.push(
        `${path} is the handler of no capability in agent.json (renamed?): its code is never run. Move it into the new capability's handler, or delete it`,
      );
  }
  return orphans;
}

/** One line per file written or removed. */
export function describeReport(report: ApplyReport): string[] {
  return [
    ...report.written.map((p) => `  wrote    ${p}`),
    ...report.removed.map((p) => `  removed  ${p}`),
  ];
}

/** `create-agent generate [--check]`; --watch is watch.ts. */
export async function generate(options: GenerateOptions): Promise<number> {
  const root = projectRoot(options.cwd);
  requireUpgraded(root);
  const { report, warnings } = await regenerate(root, options.check === true);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  if (options.check) {
    const stale = [
      ...report.written.map((p) => `  ${p} (out of date)`),
      ...report.removed.map((p) => `  ${p} (no longer generated)`),
    ];
    if (stale.length === 0) {
      process.stdout.write("Generated code is up to date with agent.json.\n");
      return 0;
    }
    process.stderr.write(
      `Generated code does not match agent.json; run \`${projectScript("generate")}\`:\n${stale.join("\n")}\n`,
    );
    return 1;
  }
  const lines = describeReport(report);
  process.stdout.write(
    lines.length ? `${lines.join("\n")}\n` : "Nothing to do: generated code is up to date.\n",
  );
  return 0;
}
