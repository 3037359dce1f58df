// The OpenAPI document as a server serves it (the generated document, with its server URL, in production and
// in dev mode) passes Redocly's recommended ruleset with no error: security declared on every operation (the
// x402 payment headers as apiKey schemes on /execute, none on the free ones), and the rest of the ruleset.
// Redocly's CLI (@redocly/cli, a devDependency) is the linter; it is found in the repo's node_modules.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApi as generateOpenApi } from "../../src/generate/openapi.js";
import { parseManifest } from "../../src/manifest/index.js";
import type { DiscoveryData } from "../../templates/runtime/discovery/data.js";
import { buildOpenApi as serveOpenApi } from "../../templates/runtime/discovery/openapi.js";

const FIXTURES = join(import.meta.dirname, "../../fixtures");

/** The redocly CLI script of the installed @redocly/cli. */
function redoclyCli(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve("@redocly/cli/package.json");
  } catch {
    throw new Error(
      "@redocly/cli is not installed: it is a devDependency of this repo (npm ci installs it)",
    );
  }
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), bin.redocly!);
}

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location?: Array<{ pointer?: string }>;
}

/** Redocly's problems with the document at `file` (recommended ruleset). */
async function lint(file: string): Promise<Problem[]> {
  const run = await execa(
    process.execPath,
    [redoclyCli(), "lint", file, "--extends=recommended", "--format=json"],
    {
      reject: false,
      env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    },
  );
  const start = run.stdout.indexOf("{");
  if (start < 0) throw new Error(`redocly printed no JSON report:\n${run.stdout}\n${run.stderr}`);
  return (JSON.parse(run.stdout.slice(start)) as { problems: Problem[] }).problems;
}

const describeProblems = (problems: Problem[]) =>
  problems
    .map((p) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer ?? "?"}: ${p.message}`)
    .join("\n");

let work = "";
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "create-agent-openapi-lint-"));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const manifests = (await readdir(join(FIXTURES, "golden"))).sort();

describe.each(manifests)("the served OpenAPI document of golden/%s", (name) => {
  it.each([
    ["production", false],
    ["dev mode", true],
  ])(
    "%s: no error under Redocly's recommended rules",
    async (mode, free) => {
      const model = parseManifest(
        await readFile(join(FIXTURES, "golden", name, "agent.json"), "utf8"),
        "agent.json",
      );
      const data = {
        openapi: generateOpenApi(model),
        capabilities: {},
      } as unknown as DiscoveryData;
      const doc = serveOpenApi(data, "https://agent.example.com", { free });
      const file = join(work, `${name}-${mode.replace(" ", "-")}.json`);
      await writeFile(file, JSON.stringify(doc));
      const problems = await lint(file);
      const errors = problems.filter((p) => p.severity === "error");
      expect(errors, describeProblems(errors)).toEqual([]);
      // The check can fail: the same document without the security requirements has errors.
      if (!free) {
        const bare = structuredClone(doc) as Record<string, any>;
        for (const item of Object.values(bare.paths as Record<string, any>))
          for (const operation of Object.values(item as Record<string, any>))
            delete operation.security;
        await writeFile(file, JSON.stringify(bare));
        const found = (await lint(file)).filter((p) => p.severity === "error");
        expect(new Set(found.map((p) => p.ruleId))).toEqual(new Set(["security-defined"]));
      }
    },
    60_000,
  );
});
