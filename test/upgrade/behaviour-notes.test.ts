// upgrade's behaviour notes (src/upgrade/behaviour-notes.ts): a file whose new version moves a setting
// is listed with what to do. Checked against the compose.yaml this create-agent generates.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/load.js";
import { behaviourNotes } from "../../src/upgrade/behaviour-notes.js";
import type { FileChange } from "../../src/upgrade/plan.js";

const manifest = join(import.meta.dirname, "../../fixtures/golden/minimal/agent.json");
const model = parseManifest(readFileSync(manifest, "utf8"), "agent.json");
const compose = generateProjectFiles(model).find((f) => f.path === "compose.yaml")!.contents;
// What compose.yaml said before PUBLIC_URL moved to .env.production.
const older = compose.replace(
  "    TRUST_PROXY:",
  "    PUBLIC_URL: ${PUBLIC_URL:-http://localhost:8080}\n    TRUST_PROXY:",
);

const change = (before: string, after: string, path = "compose.yaml"): FileChange => ({
  path,
  action: "update",
  before: Buffer.from(before),
  after,
});

describe("behaviour notes", () => {
  it("compose.yaml losing its PUBLIC_URL entry: says to move PUBLIC_URL to .env.production", () => {
    expect(older).not.toBe(compose);
    expect(behaviourNotes(change(older, compose))).toEqual([
      expect.stringMatching(/^PUBLIC_URL now comes from \.env\.production/),
    ]);
  });

  it("nothing to say: the file had no such entry, kept it (your edit), another file, or is removed", () => {
    expect(behaviourNotes(change(compose, compose))).toEqual([]);
    expect(behaviourNotes(change(older, older))).toEqual([]);
    expect(behaviourNotes(change(older, compose, "deploy/agent.service"))).toEqual([]);
    expect(
      behaviourNotes({ path: "compose.yaml", action: "remove", before: Buffer.from(older) }),
    ).toEqual([]);
  });
});
