// The runtime as a project lacking some optional features has it: templates/runtime copied with
// those features' folders deleted and their lines of features.ts dropped (the rule features.ts states:
// a line ending in `// feature: <name>` is kept only while the project has <name>), beside the
// project's own tsconfig.json and src/runtime/tsconfig.json, so it is checked with their options.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const root = new URL("../..", import.meta.url).pathname;
const run = promisify(execFile);

/** Each optional feature's folder in src/runtime (fixed by issue 27; features.ts names the features). */
export const FEATURE_FOLDERS = {
  solana: "payments/svm",
  mcp: "mcp",
  a2a: "a2a",
  console: "console",
  redis: "ledger/redis",
  queue: "queue",
  metrics: "metrics",
  "facilitator-auth": "payments/facilitator-auth",
  onchain: "payments/evm/onchain",
} as const;
export type Feature = keyof typeof FEATURE_FOLDERS;

export interface RuntimeCopy {
  /** The project directory (src/runtime inside, node_modules linked to the repo's). */
  dir: string;
  /** tsc over src/runtime with the project's compiler options, emitting nothing: its output. */
  typecheck(): Promise<{ ok: boolean; output: string }>;
  /** Imports a module of the copy (a path in src/runtime, e.g. "config.ts"), transformed as tests are. */
  load(path: string): Promise<Record<string, unknown>>;
  remove(): void;
}

/** A project's src/runtime without `features`. */
export function runtimeWithout(features: readonly Feature[]): RuntimeCopy {
  const dir = mkdtempSync(join(tmpdir(), "runtime-without-"));
  const runtime = join(dir, "src/runtime");
  cpSync(join(root, "templates/runtime"), runtime, { recursive: true });
  cpSync(join(root, "templates/project/tsconfig.json"), join(dir, "tsconfig.json"));
  cpSync(join(root, "templates/project/src/runtime/tsconfig.json"), join(runtime, "tsconfig.json"));
  for (const feature of features)
    rmSync(join(runtime, FEATURE_FOLDERS[feature]), { recursive: true, force: true });
  const featuresFile = join(runtime, "features.ts");
  const lines = readFileSync(featuresFile, "utf8").split("\n");
  for (const feature of features)
    if (!lines.some((line) => line.trimEnd().endsWith(`// feature: ${feature}`)))
      throw new Error(`features.ts has no line marked // feature: ${feature} to drop`);
  const dropped = new RegExp(`// feature: (${features.join("|")})$`);
  writeFileSync(
    featuresFile,
    lines.filter((line) => features.length === 0 || !dropped.test(line.trimEnd())).join("\n"),
  );
  // The project's runtime config writes declarations into node_modules/.cache: check without emitting.
  writeFileSync(
    join(runtime, "tsconfig.check.json"),
    JSON.stringify({
      extends: "./tsconfig.json",
      compilerOptions: {
        composite: false,
        incremental: false,
        noEmit: true,
        emitDeclarationOnly: false,
        tsBuildInfoFile: null,
      },
    }),
  );
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return {
    dir,
    async typecheck() {
      const tsc = join(root, "node_modules/typescript/bin/tsc");
      try {
        const { stdout } = await run(process.execPath, [
          tsc,
          "-p",
          join(runtime, "tsconfig.check.json"),
        ]);
        return { ok: true, output: stdout };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
      }
    },
    load: (path) => import(join(runtime, path)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
