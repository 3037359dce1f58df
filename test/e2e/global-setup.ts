// Scaffolds one project with the real CLI and installs its dependencies once per run; every end-to-end test
// shares it (read-only, or on copies). Installing is the slow part, so it happens exactly once.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    projectDir: string;
    /** What `create-agent` printed while it scaffolded and installed the project. */
    scaffoldOutput: string;
    workDir: string;
  }
}

export const CLI = join(import.meta.dirname, "../../bin/create-agent.js");
export const E2E_MANIFEST = join(import.meta.dirname, "../../fixtures/e2e/agent.json");

export default async function setup(project: TestProject) {
  const workDir = await mkdtemp(join(tmpdir(), "create-agent-e2e-"));
  const projectDir = join(workDir, "shop-agent");
  // Every optional feature: the e2e tests pay on Solana, share a Redis ledger, read metrics, sign CDP requests.
  const args = [projectDir, "--yes", "--no-git", "--features", "all", "--manifest", E2E_MANIFEST];
  const scaffolded = await execa("node", [CLI, ...args], {
    env: { npm_config_audit: "false", npm_config_fund: "false", npm_config_prefer_offline: "true" },
    all: true,
  }).catch((error: { all?: string }) => {
    throw new Error(`scaffolding the e2e project failed:\n${error.all ?? String(error)}`);
  });
  // The x402 client is no project's dependency: `npm run call` (and dev:paid's facilitator) install it on
  // first use. Done here once, through the project's own create-agent, so no two tests install it at once.
  const loader = join(projectDir, "node_modules/create-agent/dist/caller/payment.js");
  await execa(
    "node",
    ["--input-type=module", "-e", `await (await import(${JSON.stringify(loader)})).loadX402();`],
    { cwd: projectDir, all: true },
  ).catch((error: { all?: string }) => {
    throw new Error(
      `installing the x402 client on first use failed:\n${error.all ?? String(error)}`,
    );
  });
  project.provide("projectDir", projectDir);
  project.provide("scaffoldOutput", scaffolded.all ?? "");
  project.provide("workDir", workDir);
  return async () => {
    await rm(workDir, { recursive: true, force: true });
  };
}
