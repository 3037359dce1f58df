// upgrade and optional features: only the folders of the features a project has are merged; a project
// without the record (made before features existed) counts as having them all and keeps every folder.
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { FEATURE_NAMES } from "../../src/features.js";
import { readTarGz } from "../../src/scaffold/tarball.js";
import { planUpgrade } from "../../src/upgrade/plan.js";
import { cli, FIXTURES, scaffold, tempDir } from "../cli/helpers.js";

const REPO = join(import.meta.dirname, "../..");
const VERSION = (
  JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { version: string }
).version;

/** A project made by create-agent 0.1.0 (the release kept in fixtures/upgrade), from the e2e manifest. */
async function madeBy010(): Promise<string> {
  const work = await tempDir();
  const tool = join(work, "tool");
  for (const entry of readTarGz(await readFile(join(FIXTURES, "upgrade/create-agent-0.1.0.tgz")))) {
    const path = join(tool, entry.path.replace(/^package\//, ""));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, entry.contents);
  }
  await symlink(join(REPO, "node_modules"), join(tool, "node_modules"), "dir");
  const dir = join(work, "old");
  const args = [
    "--yes",
    "--no-install",
    "--no-git",
    "--manifest",
    join(FIXTURES, "e2e/agent.json"),
  ];
  await execa("node", [join(tool, "bin/create-agent.js"), dir, ...args], {
    env: { npm_config_user_agent: "" },
  });
  return dir;
}

describe("upgrade with optional features", () => {
  it("a project without createAgent.features gets every feature's folder and packages of its time (not queue or a2a), and drops none; switched to yarn since, no false conflicts", async () => {
    const dir = await madeBy010();
    // Made with npm, then switched to yarn: the base is still npm's (the README untouched, not a clash
    // of every command in it), the new version yarn's; the record names yarn from then on.
    await writeFile(join(dir, "yarn.lock"), "");
    const plan = await planUpgrade(dir, VERSION);
    expect(plan.changes.filter((c) => c.action === "conflict").map((c) => c.path)).toEqual([]);
    const readme = plan.changes.find((c) => c.path === "README.md");
    expect(readme?.action).toBe("update");
    expect(String(readme?.after)).toContain("yarn install");
    const runtime = plan.changes.filter((c) => c.path.startsWith("src/runtime/"));
    // Files this runtime moved (e.g. payments/verify.ts to payments/evm/verify.ts) leave their old
    // path, unedited; nothing the new runtime still ships at a path is removed.
    expect(runtime.filter((c) => c.action === "modify-delete")).toEqual([]);
    const added = runtime.filter((c) => c.action === "add").map((c) => c.path);
    const removed = runtime.filter((c) => c.action === "remove").map((c) => c.path);
    for (const path of removed) expect(added, path).not.toContain(path);
    expect(added).toContain("src/runtime/payments/evm/verify.ts");
    for (const folder of ["payments/svm", "mcp", "console"])
      expect(
        added.some((p) => p.startsWith(`src/runtime/${folder}/`)),
        folder,
      ).toBe(true);
    const pkg = JSON.parse(String(plan.changes.find((c) => c.path === "package.json")?.after));
    // Every feature 0.1.0 carried, none added since (queue: async jobs and BullMQ, asked for by `add
    // queue`; a2a: POST /a2a and @a2a-js/sdk, by `add a2a`).
    expect(pkg.createAgent.packageManager).toBe("yarn");
    expect(pkg.createAgent.features).toEqual(
      FEATURE_NAMES.filter((name) => name !== "queue" && name !== "a2a"),
    );
    for (const name of ["@x402/svm", "ioredis", "prom-client", "jose", "@modelcontextprotocol/sdk"])
      expect(pkg.dependencies, name).toHaveProperty(name);
    expect(pkg.dependencies).not.toHaveProperty("bullmq");
    expect(pkg.dependencies).not.toHaveProperty("@a2a-js/sdk");
    expect(added.some((p) => p.startsWith("src/runtime/queue/"))).toBe(false);
    expect(added.some((p) => p.startsWith("src/runtime/a2a/"))).toBe(false);
  }, 60_000);

  it("a project with a recorded set is up to date with its own create-agent: absent folders stay absent, your file in src/generated/ stays", async () => {
    const dir = await scaffold("solana");
    // A file of yours in src/generated/ (no generated header) is not a leftover to remove.
    await writeFile(join(dir, "src/generated/mine.ts"), "export const mine = 1;\n");
    const plan = await planUpgrade(dir, VERSION);
    expect(plan.changes.map((c) => `${c.action} ${c.path}`)).toEqual([]);
    const check = await cli(["upgrade", "--check"], dir);
    expect(check.exitCode, check.all).toBe(0);
  }, 60_000);
});
