// Needs dist/ (packSelf packs the built CLI): run `npx tsc -p tsconfig.build.json` first; `npm test` does.
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { packSelf, resetPackSelfCache } from "../../src/scaffold/vendor.js";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/create-agent.js");

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "create-agent-vendor-"));
  made.push(dir);
  return dir;
}

async function repoPackage() {
  return JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
  };
}

/** Extracts the packed tarball into a temp folder; returns the folder and its file list. */
async function extractSelf(): Promise<{ dir: string; files: string[] }> {
  const { contents } = await packSelf();
  const dir = await tempDir();
  await writeFile(join(dir, "self.tgz"), contents);
  await execa("tar", ["-xzf", "self.tgz"], { cwd: dir });
  const files = (await readdir(join(dir, "package"), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
  return { dir, files };
}

describe("packSelf", () => {
  it("names the tarball after the package version", async () => {
    const { version } = await repoPackage();
    const self = await packSelf();
    expect(self.version).toBe(version);
    expect(self.path).toBe(`vendor/create-agent-${version}.tgz`);
  });

  it("packs an installable package.json without scripts or devDependencies", async () => {
    const { dir } = await extractSelf();
    const pkg = JSON.parse(await readFile(join(dir, "package/package.json"), "utf8"));
    const repo = await repoPackage();
    expect(pkg.name).toBe("create-agent");
    expect(pkg.version).toBe(repo.version);
    expect(pkg.type).toBe("module");
    expect(pkg.bin).toEqual({ "create-agent": "bin/create-agent.js" });
    // What the CLI needs to run; typescript and @types/node only build dist/, which the tarball ships built.
    const { typescript: _tsc, "@types/node": _types, ...runtime } = repo.dependencies;
    expect(pkg.dependencies).toEqual(runtime);
    expect(Object.keys(pkg.dependencies)).not.toContain("typescript");
    expect(pkg).not.toHaveProperty("scripts");
    expect(pkg).not.toHaveProperty("devDependencies");
  });

  it("packs the bin, the built CLI, templates and schema, and no source maps", async () => {
    const { dir, files } = await extractSelf();
    expect(files).toContain("package/bin/create-agent.js");
    expect(files).toContain("package/dist/cli/main.js");
    expect(files).toContain("package/schema/agent.schema.json");
    expect(files.some((f) => f.startsWith("package/templates/project/"))).toBe(true);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(
      files.filter((f) => f.startsWith("package/src/") || f.startsWith("package/test/")),
    ).toEqual([]);
    expect((await stat(join(dir, "package/bin/create-agent.js"))).mode & 0o111).not.toBe(0);
    expect(await readFile(join(dir, "package/schema/agent.schema.json"))).toEqual(
      await readFile(join(ROOT, "schema/agent.schema.json")),
    );
  });

  it("is cached per process and deterministic across packings", async () => {
    const first = await packSelf();
    expect(await packSelf()).toBe(first);
    resetPackSelfCache();
    const second = await packSelf();
    expect(second).not.toBe(first);
    expect(second.contents.equals(first.contents)).toBe(true);
  });

  // The real proof: npm installs the vendored tarball as a file: dependency, and the installed
  // CLI runs on its own (its dependencies come from the registry/cache, not from this repo).
  it(
    "installs with npm and the installed CLI checks a scaffolded project",
    { timeout: 120_000 },
    async () => {
      const self = await packSelf();
      const tmp = await tempDir();
      const probe = join(tmp, "probe");
      await mkdir(dirname(join(probe, self.path)), { recursive: true });
      await writeFile(join(probe, self.path), self.contents);
      await writeFile(
        join(probe, "package.json"),
        JSON.stringify({
          name: "probe",
          private: true,
          devDependencies: { "create-agent": `file:${self.path}` },
        }),
      );
      const env = { npm_config_user_agent: "" };
      await execa("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], {
        cwd: probe,
        env,
      });

      const installed = join(probe, "node_modules/.bin/create-agent");
      const help = await execa(installed, ["--help"], {
        cwd: probe,
        env,
        reject: false,
        all: true,
      });
      expect(help.exitCode, help.all).toBe(0);
      expect(help.stdout).toContain("generate");

      const project = join(tmp, "p");
      const created = await execa("node", [CLI, project, "--yes", "--no-install", "--no-git"], {
        env,
        stdin: "ignore",
        reject: false,
        all: true,
      });
      expect(created.exitCode, created.all).toBe(0);

      const check = await execa(installed, ["generate", "--check", "--cwd", project], {
        cwd: probe,
        env,
        stdin: "ignore",
        reject: false,
        all: true,
      });
      expect(check.exitCode, check.all).toBe(0);
    },
  );
});
