import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { callerDependencies, dependencies, devDependencies } from "../src/versions.js";

const repo = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const repoVersions: Record<string, string> = { ...repo.dependencies, ...repo.devDependencies };
const projectVersions: Record<string, string> = {
  ...dependencies,
  ...devDependencies,
  ...callerDependencies,
};

describe("the version table", () => {
  it("pins exact versions, for this repo and for generated projects", () => {
    for (const [name, version] of Object.entries({ ...repoVersions, ...projectVersions })) {
      // Exact: major.minor.patch, with a pre-release tag only where that is the package's only release.
      expect(version, name).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    }
  });

  it("gives projects the same versions the runtime is tested with here", () => {
    const shared = Object.keys(projectVersions).filter((name) => name in repoVersions);
    expect(shared).toEqual(
      expect.arrayContaining([
        "ajv",
        "ajv-formats",
        "express",
        "viem",
        "typescript",
        "vitest",
        "@types/express",
        "@types/node",
      ]),
    );
    for (const name of shared) expect(repoVersions[name], name).toBe(projectVersions[name]);
  });

  it("pins vitest's vite to the version this repo's lockfile runs the tests with", () => {
    const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8"));
    expect(devDependencies.vite).toBe(lock.packages["node_modules/vite"].version);
  });
});
