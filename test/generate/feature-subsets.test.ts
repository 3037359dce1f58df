// A project without one optional feature: its src/runtime (the core and the other features' folders, with
// features.ts pruned, only its packages installed) type-checks with the repo's typescript. One case per
// optional feature, plus the core alone.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { FEATURE_NAMES, projectDependencies } from "../../src/features.js";
import { devDependencies } from "../../src/versions.js";
import { runtimeFilesFor } from "../../src/generate/runtime.js";
import { TEMPLATES_DIR } from "../../src/generate/templates.js";

const REPO = join(import.meta.dirname, "../..");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");

/** Every optional feature: the core reaches a feature folder only through features.ts. */
const COMPILING_WITHOUT: readonly string[] = FEATURE_NAMES;

const work = await mkdtemp(join(tmpdir(), "create-agent-subsets-"));
afterAll(() => rm(work, { recursive: true, force: true }));

/** src/runtime of a project with `features`, beside the project's tsconfig.json; tsc's diagnostics. */
async function typecheckRuntime(
  name: string,
  features: string[],
): Promise<{ ok: boolean; output: string }> {
  const dir = join(work, name);
  const files = [
    ...runtimeFilesFor(features),
    { path: "package.json", contents: '{ "type": "module" }\n' },
    {
      path: "tsconfig.json",
      contents: await readFile(join(TEMPLATES_DIR, "project/tsconfig.json"), "utf8"),
    },
    // As src/runtime/tsconfig.json, but writing nothing (no declarations, no build info).
    {
      path: "src/runtime/tsconfig.check.json",
      contents: JSON.stringify({
        extends: "../../tsconfig.json",
        compilerOptions: { noEmit: true, incremental: false },
        include: ["."],
        exclude: [],
      }),
    },
  ];
  for (const file of files) {
    await mkdir(dirname(join(dir, file.path)), { recursive: true });
    await writeFile(join(dir, file.path), file.contents);
  }
  // Only the packages such a project installs (each linked to the repo's copy, whose own imports resolve
  // from there): a core that imports an absent feature's package fails here as it would in the project.
  for (const pkg of Object.keys({ ...projectDependencies(features), ...devDependencies })) {
    const link = join(dir, "node_modules", pkg);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(REPO, "node_modules", pkg), link, "dir");
  }
  const result = await execa("node", [TSC, "-p", "src/runtime/tsconfig.check.json"], {
    cwd: dir,
    reject: false,
    all: true,
  });
  return { ok: result.exitCode === 0, output: result.all ?? "" };
}

describe("a project without one optional feature type-checks its runtime", () => {
  it.each(COMPILING_WITHOUT.map((f) => [f]))(
    "without %s",
    async (feature) => {
      const { ok, output } = await typecheckRuntime(
        `without-${feature}`,
        FEATURE_NAMES.filter((f) => f !== feature),
      );
      expect(ok, output).toBe(true);
    },
    120_000,
  );

  it("with every feature (the check itself works)", async () => {
    const { ok, output } = await typecheckRuntime("all", [...FEATURE_NAMES]);
    expect(ok, output).toBe(true);
  }, 120_000);

  it("with no optional feature (the core alone)", async () => {
    const { ok, output } = await typecheckRuntime("core", []);
    expect(ok, output).toBe(true);
  }, 120_000);
});
