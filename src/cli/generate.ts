import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { GENERATED_DIR, generateCode } from "../generate/index.js";
import { loadManifest } from "../manifest/index.js";
import { applyFiles } from "../write/apply.js";
import { CliError } from "./errors.js";

export interface GenerateOptions {
  check?: boolean;
  cwd?: string;
}

/** `create-agent generate [--check]`: bring src/generated/ in line with agent.json. */
export async function generate(options: GenerateOptions): Promise<number> {
  const root = resolve(options.cwd ?? ".");
  const manifestPath = join(root, "agent.json");
  if (!existsSync(manifestPath)) {
    throw new CliError(`no agent.json in ${root}: run this inside a project made by create-agent, or pass --cwd <project folder>`);
  }
  const model = await loadManifest(manifestPath, "agent.json");
  const { files, warnings } = await generateCode(model);
  const report = await applyFiles(root, files, { check: options.check === true, prune: GENERATED_DIR });
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  if (options.check) {
    const stale = [...report.written.map((p) => `  ${p} (out of date)`), ...report.removed.map((p) => `  ${p} (no longer generated)`)];
    if (stale.length === 0) {
      process.stdout.write("Generated code is up to date with agent.json.\n");
      return 0;
    }
    process.stderr.write(`Generated code does not match agent.json; run \`create-agent generate\`:\n${stale.join("\n")}\n`);
    return 1;
  }
  const lines = [...report.written.map((p) => `  wrote    ${p}`), ...report.removed.map((p) => `  removed  ${p}`)];
  process.stdout.write(lines.length ? `${lines.join("\n")}\n` : "Nothing to do: generated code is up to date.\n");
  return 0;
}
