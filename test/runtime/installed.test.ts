// ops/installed.ts: the start's check that package.json's dependencies are installed, looked up as Node
// looks (the project's node_modules or one above it), and the install command of the project's manager.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../temp.js";
import { missingPackages, notInstalled } from "../../templates/runtime/ops/installed.js";
import { projectCommands } from "../../src/generate/package-manager.js";
import { projectPackageManager } from "../../src/upgrade/lockfile.js";

async function project(dependencies: Record<string, string>): Promise<string> {
  const parent = await tempDir("installed-");
  const root = join(parent, "project");
  await mkdir(root);
  await writeFile(join(root, "package.json"), JSON.stringify({ dependencies }));
  return root;
}

async function install(folder: string, name: string): Promise<void> {
  await mkdir(join(folder, "node_modules", name), { recursive: true });
  await writeFile(join(folder, "node_modules", name, "package.json"), "{}");
}

describe("missingPackages", () => {
  it("lists the dependencies found in no node_modules of the project or above it", async () => {
    const root = await project({ express: "5.3.0", "@scope/kit": "1.0.0", hoisted: "1.0.0" });
    await install(root, "express");
    await install(join(root, ".."), "hoisted"); // a workspace's hoisted package
    expect(missingPackages(root)).toEqual(["@scope/kit"]);
    await install(root, "@scope/kit");
    expect(missingPackages(root)).toEqual([]);
  });

  it("checks nothing without package.json, or under Yarn Plug'n'Play (no node_modules to look in)", async () => {
    const root = await project({ absent: "1.0.0" });
    await writeFile(join(root, ".pnp.cjs"), "");
    expect(missingPackages(root)).toEqual([]);
    expect(missingPackages(join(root, "nowhere"))).toEqual([]);
  });

  it("says the project's install command, by its lockfile", async () => {
    const root = await project({});
    expect(notInstalled(["a"], root)).toMatch(
      /dependencies a is not installed .*: run npm install/,
    );
    await writeFile(join(root, "pnpm-lock.yaml"), "");
    expect(notInstalled(["a", "b"], root)).toMatch(/a, b are not installed .*: run pnpm install/);
  });

  // The runtime cannot import the tool: its lockfile table is its own, kept equal to the tool's here.
  it.each(["pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb", "package-lock.json", undefined])(
    "names the command the tool names for the project's manager (lockfile %s)",
    async (lockfile) => {
      const root = await project({});
      if (lockfile) await writeFile(join(root, lockfile), "");
      const tool = projectCommands(projectPackageManager(root, {})).install;
      expect(notInstalled(["a"], root)).toMatch(new RegExp(`: run ${tool} \\(`));
    },
  );

  it("without a lockfile, names the manager package.json declares, as the tool does", async () => {
    const root = await project({});
    const pkg = { dependencies: {}, packageManager: "pnpm@9.15.0" };
    await writeFile(join(root, "package.json"), JSON.stringify(pkg));
    expect(projectCommands(projectPackageManager(root, pkg)).install).toBe("pnpm install");
    expect(notInstalled(["a"], root)).toMatch(/: run pnpm install \(/);
  });
});
