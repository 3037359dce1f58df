/**
 * Fixture-driven tests. valid/*.json must load; invalid/<case>.json must fail with exactly <case>.expected.txt.
 * UPDATE_FIXTURES=1 rewrites the .expected.txt files from the actual output, so wording changes show up as
 * reviewable diffs instead of hand-edited expectations.
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadManifest, ManifestError } from "../../src/manifest/index.js";

const root = fileURLToPath(new URL("../../fixtures/manifests/", import.meta.url));
const validDir = join(root, "valid");
const invalidDir = join(root, "invalid");
const update = process.env.UPDATE_FIXTURES === "1";

const jsonFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

describe("valid manifests", () => {
  it.each(jsonFiles(validDir))("%s loads and builds a model", async (file) => {
    const model = await loadManifest(join(validDir, file), file);
    expect(model.capabilities.length).toBeGreaterThan(0);
    expect(model.capabilities.map((c) => c.name)).toEqual(Object.keys(model.manifest.capabilities));
    for (const capability of model.capabilities) {
      expect(capability.priceAtomic).toMatch(/^[1-9]\d*$/);
      expect(capability.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(capability.outputSchema).toMatchObject({ type: "object", additionalProperties: false });
    }
  });
});

describe("invalid manifests", () => {
  it("has at least 30 cases", () => {
    expect(jsonFiles(invalidDir).length).toBeGreaterThanOrEqual(30);
  });

  it("every .expected.txt has a matching .json", () => {
    const cases = new Set(jsonFiles(invalidDir).map((f) => f.replace(/\.json$/, "")));
    const orphans = readdirSync(invalidDir)
      .filter((f) => f.endsWith(".expected.txt"))
      .filter((f) => !cases.has(f.replace(/\.expected\.txt$/, "")));
    expect(orphans).toEqual([]);
  });

  it.each(jsonFiles(invalidDir))("%s fails with the expected message", async (file) => {
    const expectedPath = join(invalidDir, file.replace(/\.json$/, ".expected.txt"));
    const error = await loadManifest(join(invalidDir, file), file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ManifestError);
    const actual = `${(error as ManifestError).message}\n`;
    if (update) writeFileSync(expectedPath, actual);
    expect(existsSync(expectedPath), `missing ${expectedPath}; run UPDATE_FIXTURES=1 and review it`).toBe(true);
    expect(actual).toBe(readFileSync(expectedPath, "utf8"));
  });
});
