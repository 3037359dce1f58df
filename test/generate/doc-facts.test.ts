// The numbers the documents state about the runtime (which jobs Solana can pay for, MCP's default deadline,
// the defaults of the settings) come from one table, src/generate/doc-facts.ts, that the project templates
// render from. This holds that table to what the runtime and the payer really do, and every document
// (the generated README and .env.example, a Solana service's /llms.txt, the tool's README) to the table:
// a number written by hand in one of them drifts (`.env.example` once said 45 s where the server allows 30).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SOLANA_MAX_DEADLINE_SECONDS } from "../../src/caller/guard-svm.js";
import { FEATURES } from "../../src/features.js";
import { DOC_FACTS } from "../../src/generate/doc-facts.js";
import { generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/index.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { Reader, TRANSIENT_EXIT_CODE } from "../../templates/runtime/ops/settings.js";
import { readComputeBudgetCaps } from "../../templates/runtime/payments/svm/compute-config.js";
import { solanaDeadlineProblem } from "../../templates/runtime/payments/svm/life.js";
import { familyNotes } from "../../templates/runtime/payments/families.js";

const ROOT = join(import.meta.dirname, "../..");
const manifest = readFileSync(join(ROOT, "fixtures/manifests/valid/multi.json"), "utf8");
const files = generateProjectFiles(
  parseManifest(manifest, "agent.json"),
  "npm",
  FEATURES.map((f) => f.name),
);
const file = (path: string) => files.find((f) => f.path === path)!.contents;
const readme = file("README.md");
const envExample = file(".env.example");
const toolReadme = readFileSync(join(ROOT, "README.md"), "utf8");

/** Every number N in `text` written as `<before>N<after>` (the patterns hold the words around it). */
function numbersIn(text: string, pattern: RegExp): number[] {
  return [...text.replace(/\n#? */g, " ").matchAll(pattern)].map((m) =>
    Number(m[1]!.replace(/,/g, "")),
  );
}

describe("the facts table holds what the runtime does", () => {
  it("Solana pays for a job due within solanaDueWithinSeconds, not one second later (server and payer)", () => {
    const now = 1_000_000_000_000;
    const due = DOC_FACTS.solanaDueWithinSeconds;
    expect(solanaDeadlineProblem(now / 1000 + due, now)).toBeUndefined();
    expect(solanaDeadlineProblem(now / 1000 + due + 1, now)).toContain(`within ${due} s`);
    expect(SOLANA_MAX_DEADLINE_SECONDS).toBe(due);
    expect(DOC_FACTS.solanaPaymentLifeSeconds - DOC_FACTS.settlementMarginSeconds).toBe(due);
  });

  it("the settings' defaults are the runtime's", () => {
    const config = resolveConfig({ devMode: true, env: {} });
    expect(config.mcp.deadlineSeconds).toBe(DOC_FACTS.mcpDeadlineSeconds);
    expect(config.mcp.progressSeconds).toBe(DOC_FACTS.mcpProgressSeconds);
    expect(config.maxDeadlineSeconds).toBe(DOC_FACTS.maxDeadlineSeconds);
    expect(DOC_FACTS.maxDeadlineDays * 86_400).toBe(DOC_FACTS.maxDeadlineSeconds);
    const caps = readComputeBudgetCaps(new Reader({}));
    expect(caps.maxComputeUnits).toBe(DOC_FACTS.solanaMaxComputeUnits);
    expect(caps.maxPriorityFeeMicroLamports).toBe(DOC_FACTS.solanaMaxPriorityFee);
    expect(config.port).toBe(DOC_FACTS.port);
    expect(config.shutdownTimeoutSeconds).toBe(DOC_FACTS.shutdownTimeoutSeconds);
  });

  it("a process manager waits longer than the drain, and the exit codes are the server's", () => {
    // Room beyond the drain: a job already settling when the drain ends is settled and answered.
    expect(DOC_FACTS.stopTimeoutSeconds).toBeGreaterThan(DOC_FACTS.shutdownTimeoutSeconds);
    expect(DOC_FACTS.transientExitCode).toBe(TRANSIENT_EXIT_CODE);
    expect(DOC_FACTS.configErrorExitCode).not.toBe(TRANSIENT_EXIT_CODE);
  });
});

describe("every document states the table's numbers", () => {
  const due = DOC_FACTS.solanaDueWithinSeconds;
  const dueWithin = /due within (\d+) s(?:econds)?\b/g;

  it("which jobs Solana pays for: the README, .env.example, /llms.txt and the tool's README say the same", () => {
    const llms = familyNotes(["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"]).join("\n");
    for (const [name, text] of Object.entries({ readme, envExample, llms, toolReadme })) {
      const said = numbersIn(text, dueWithin);
      expect(said.length, `${name} says nothing about which jobs Solana pays for`).toBeGreaterThan(
        0,
      );
      expect(said, name).toEqual(said.map(() => due));
    }
    expect(numbersIn(readme, /must fit in (\d+) seconds/g)).toEqual([
      DOC_FACTS.solanaPaymentLifeSeconds,
    ]);
  });

  it("each setting's default, in .env.example and in the README's table", () => {
    const defaults: Record<string, number> = {
      MCP_DEADLINE_SECONDS: DOC_FACTS.mcpDeadlineSeconds,
      MCP_PROGRESS_SECONDS: DOC_FACTS.mcpProgressSeconds,
      MAX_DEADLINE_SECONDS: DOC_FACTS.maxDeadlineSeconds,
      SOLANA_MAX_COMPUTE_UNITS: DOC_FACTS.solanaMaxComputeUnits,
      SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS: DOC_FACTS.solanaMaxPriorityFee,
      SHUTDOWN_TIMEOUT_SECONDS: DOC_FACTS.shutdownTimeoutSeconds,
    };
    for (const [name, value] of Object.entries(defaults)) {
      expect(envExample, name).toContain(`# ${name}=${value}\n`);
      expect(readme, name).toContain(`| \`${name}\` | \`${value}\` |`);
      // In prose too: "`NAME` (default 40,000)", "`NAME` (45: ...", "(default 45:" in .env.example.
      for (const said of numbersIn(
        readme,
        new RegExp(`\`${name}\` \\((?:default )?([\\d,]+)\\b(?! days)`, "g"),
      ))
        expect(said, `README: ${name}`).toBe(value);
      for (const said of numbersIn(envExample, new RegExp(`${name} \\(default ([\\d,]+)\\b`, "g")))
        expect(said, `.env.example: ${name}`).toBe(value);
    }
    expect(numbersIn(readme, /(\d+) days/g)).toEqual(
      numbersIn(readme, /(\d+) days/g).map(() => DOC_FACTS.maxDeadlineDays),
    );
  });

  it("the tool's README states no size for the packed tool (it changes with every file added)", () => {
    expect(toolReadme).not.toMatch(/create-agent-[^\s]*\.tgz[^.]*\babout \d+ ?KB/);
    expect(toolReadme).not.toMatch(/deterministic, about \d+ ?KB/);
  });
});
