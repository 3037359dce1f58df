// `create-agent client` and a project's features: a client generated from the agent.json of a project
// without solana needs (and names) no Solana package, and compiles with only the packages it names.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientPackages } from "../../src/caller/client-gen.js";
import { buildCli, makeTemp, runCli, tsProject } from "./client-project.js";
import { scaffold } from "./helpers.js";

const SOLANA_PACKAGES = ["@x402/svm", "@solana/kit", "@solana-program/token"];
const temps: Array<{ remove(): Promise<void> }> = [];
beforeAll(buildCli, 120_000);
afterAll(() => Promise.all(temps.map((t) => t.remove())));

describe("a client for a project's agent.json", () => {
  it("without solana: no Solana package in the file or the install line; it compiles without them", async () => {
    const project = await scaffold("mcp");
    const temp = await makeTemp("client-no-solana");
    temps.push(temp);
    const packages = Object.keys(clientPackages(false));
    expect(packages.some((name) => SOLANA_PACKAGES.includes(name))).toBe(false);
    const ts = await tsProject(temp.dir, "bare", packages);
    const out = join(temp.dir, "src/agent-client.ts");
    const r = await runCli(["client", join(project, "agent.json"), "-o", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = await readFile(out, "utf8");
    for (const name of SOLANA_PACKAGES) {
      expect(text, name).not.toContain(`"${name}`);
      expect(r.stdout, name).not.toContain(`${name}@`);
    }
    expect(text).toContain("generated without Solana payments");
    const compiled = await ts.compile();
    expect(compiled.ok, compiled.output).toBe(true);
  }, 120_000);

  it("with solana: the Solana payer and its packages", async () => {
    const project = await scaffold("solana");
    const temp = await makeTemp("client-solana");
    temps.push(temp);
    const out = join(temp.dir, "agent-client.ts");
    const r = await runCli(["client", join(project, "agent.json"), "-o", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = await readFile(out, "utf8");
    expect(text).toContain('await import("@x402/svm/exact/client")');
    for (const name of SOLANA_PACKAGES) expect(r.stdout, name).toContain(`${name}@`);
  }, 120_000);
});
