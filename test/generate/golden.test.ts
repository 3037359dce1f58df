// Golden files pin what is generated, byte for byte. After an intended change, regenerate them with
// `UPDATE_GOLDEN=1 npx vitest run test/generate/golden.test.ts` and review the diff like code.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { generateCode } from "../../src/generate/index.js";
import { DEFAULT_FEATURES } from "../../src/features.js";
import { generatePackageJson, generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/index.js";

const GOLDEN = join(import.meta.dirname, "../../fixtures/golden");
const update = process.env.UPDATE_GOLDEN === "1";

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe.each(await readdir(GOLDEN))("golden output: %s", (name) => {
  it("matches the files in fixtures/golden/<case>/expected", async () => {
    const text = await readFile(join(GOLDEN, name, "agent.json"), "utf8");
    const model = parseManifest(text, "agent.json");
    const { files } = await generateCode(model);
    const actual = new Map(files.map((f) => [f.path, f.contents]));
    actual.set(
      "package.json",
      generatePackageJson(model, {
        path: "vendor/create-agent-0.0.0.tgz",
        version: "0.0.0",
      }, DEFAULT_FEATURES),
    );
    // The one project file rendered from the manifest (the others are static templates).
    actual.set(
      "README.md",
      generateProjectFiles(model).find((f) => f.path === "README.md")!.contents,
    );
    const expectedDir = join(GOLDEN, name, "expected");
    if (update) {
      await rm(expectedDir, { recursive: true, force: true });
      for (const [path, contents] of actual) {
        await mkdir(dirname(join(expectedDir, path)), { recursive: true });
        await writeFile(join(expectedDir, path), contents);
      }
    }
    expect([...actual.keys()].sort()).toEqual(await listFiles(expectedDir));
    for (const [path, contents] of actual) {
      expect(contents, path).toBe(await readFile(join(expectedDir, path), "utf8"));
    }
  });

  it("is deterministic: generating twice gives the same bytes", async () => {
    const text = await readFile(join(GOLDEN, name, "agent.json"), "utf8");
    const first = await generateCode(parseManifest(text, "agent.json"));
    const second = await generateCode(parseManifest(text, "agent.json"));
    expect(second.files).toEqual(first.files);
  });
});
