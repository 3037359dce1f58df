// Needs dist/ (packSelf packs the built CLI): run `npx tsc -p tsconfig.build.json` first; `npm test` does.
import { mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { tempDir } from "../cli/helpers.js";
import { CLIENT_SHARED_FILES } from "../../src/caller/guard-file.js";
import {
  packCacheDir,
  packPackage,
  packSelf,
  resetPackSelfCache,
} from "../../src/scaffold/vendor.js";

const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/create-agent.js");

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

  it("packs the bin, the built CLI, templates, schema, the first-use lockfiles and the payer's guard source, and no source maps", async () => {
    const { dir, files } = await extractSelf();
    expect(files).toContain("package/bin/create-agent.js");
    expect(files).toContain("package/dist/cli/main.js");
    expect(files).toContain("package/schema/agent.schema.json");
    expect(files.some((f) => f.startsWith("package/templates/project/"))).toBe(true);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    // Of the sources, only the guard files that generated clients copy in (src/caller/guard-file.ts).
    expect(
      files.filter((f) => f.startsWith("package/src/") || f.startsWith("package/test/")),
    ).toEqual([
      "package/src/caller/guard-asset.ts",
      "package/src/caller/guard-evm.ts",
      "package/src/caller/guard-read.ts",
      "package/src/caller/guard-signed.ts",
      "package/src/caller/guard-svm.ts",
      "package/src/caller/guard.ts",
      "package/src/caller/payer-families.ts",
      "package/src/caller/payment-id.ts",
      "package/src/caller/solana-payer.ts",
    ]);
    for (const file of CLIENT_SHARED_FILES)
      expect(await readFile(join(dir, "package", file))).toEqual(await readFile(join(ROOT, file)));
    expect((await stat(join(dir, "package/bin/create-agent.js"))).mode & 0o111).not.toBe(0);
    expect(await readFile(join(dir, "package/schema/agent.schema.json"))).toEqual(
      await readFile(join(ROOT, "schema/agent.schema.json")),
    );
    // call installs the x402 client from it on first use, in every project.
    expect(await readFile(join(dir, "package/locks/x402-client.json"))).toEqual(
      await readFile(join(ROOT, "locks/x402-client.json")),
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

  it("gives the same bytes from its disk cache as a fresh packing", async () => {
    resetPackSelfCache();
    const cachedOrPacked = await packSelf();
    const fresh = await packPackage(ROOT, { cache: false });
    expect(cachedOrPacked.path).toBe(fresh.path);
    expect(cachedOrPacked.contents.equals(fresh.contents)).toBe(true);
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

/** A minimal package folder as packPackage expects one (dist/cli/main.js marks a built package). */
async function fakePackage(): Promise<string> {
  const root = await tempDir();
  const files: Record<string, string> = {
    "package.json": JSON.stringify({
      name: "create-agent",
      version: "1.2.3",
      scripts: { prepare: "tsc" },
      dependencies: { ajv: "8.0.0", typescript: "5.0.0" },
    }),
    "bin/create-agent.js": "#!/usr/bin/env node\n",
    "dist/cli/main.js": "export {};\n",
    "dist/cli/main.js.map": "{}",
    "templates/project/README.md.hbs": "# {{name}}\n",
    "schema/agent.schema.json": "{}\n",
    "locks/x402-client.json": "{}\n",
    "src/caller/guard.ts": "export {};\n",
    "src/caller/guard-read.ts": "export {};\n",
    "src/caller/guard-signed.ts": "export {};\n",
    "src/caller/guard-evm.ts": "export {};\n",
    "src/caller/guard-svm.ts": "export {};\n",
    "src/caller/payer-families.ts": "export {};\n",
    "src/caller/guard-asset.ts": "export {};\n",
    "src/caller/payment-id.ts": "export {};\n",
    "src/caller/solana-payer.ts": "export {};\n",
  };
  for (const [path, contents] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), contents);
  }
  return root;
}

/** The files of a tarball, path -> text. */
async function unpack(contents: Buffer): Promise<Record<string, string>> {
  const dir = await tempDir();
  await writeFile(join(dir, "p.tgz"), contents);
  await execa("tar", ["-xzf", "p.tgz"], { cwd: dir });
  const out: Record<string, string> = {};
  for (const entry of await readdir(join(dir, "package"), {
    recursive: true,
    withFileTypes: true,
  })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(join(dir, "package").length + 1)] = await readFile(path, "utf8");
  }
  return out;
}

describe("packPackage's disk cache", () => {
  it("keeps the tarball in node_modules/.cache/create-agent and reads the same bytes back", async () => {
    const root = await fakePackage();
    const first = await packPackage(root);
    const entries = await readdir(packCacheDir(root));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^self-[0-9a-f]{16}\.tgz$/);
    // The entry: the key's length, the key, then the tarball itself.
    const entry = await readFile(join(packCacheDir(root), entries[0]!));
    expect(entry.subarray(4 + entry.readUInt32BE(0))).toEqual(first.contents);
    const again = await packPackage(root);
    expect(again.contents.equals(first.contents)).toBe(true);
    expect((await packPackage(root, { cache: false })).contents.equals(first.contents)).toBe(true);
    expect(again.path).toBe("vendor/create-agent-1.2.3.tgz");
    expect(Object.keys(await unpack(again.contents)).sort()).toEqual([
      "bin/create-agent.js",
      "dist/cli/main.js",
      "locks/x402-client.json",
      "package.json",
      "schema/agent.schema.json",
      "src/caller/guard-asset.ts",
      "src/caller/guard-evm.ts",
      "src/caller/guard-read.ts",
      "src/caller/guard-signed.ts",
      "src/caller/guard-svm.ts",
      "src/caller/guard.ts",
      "src/caller/payer-families.ts",
      "src/caller/payment-id.ts",
      "src/caller/solana-payer.ts",
      "templates/project/README.md.hbs",
    ]);
  });

  it("packs again when a shipped file changes, even to the same size", async () => {
    const root = await fakePackage();
    const before = await packPackage(root);
    await writeFile(join(root, "templates/project/README.md.hbs"), "# {{nome}}\n");
    const after = await packPackage(root);
    expect(after.contents.equals(before.contents)).toBe(false);
    expect((await unpack(after.contents))["templates/project/README.md.hbs"]).toBe("# {{nome}}\n");
    expect(after.contents.equals((await packPackage(root, { cache: false })).contents)).toBe(true);
  });

  it("packs again when a file is added or the package.json changes", async () => {
    const root = await fakePackage();
    await packPackage(root);
    await writeFile(join(root, "dist/cli/extra.js"), "export const x = 1;\n");
    expect(Object.keys(await unpack((await packPackage(root)).contents))).toContain(
      "dist/cli/extra.js",
    );
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    await writeFile(join(root, "package.json"), JSON.stringify({ ...pkg, version: "1.2.4" }));
    const bumped = await packPackage(root);
    expect(bumped.path).toBe("vendor/create-agent-1.2.4.tgz");
    expect(JSON.parse((await unpack(bumped.contents))["package.json"]!).version).toBe("1.2.4");
  });

  it("ignores an entry that does not hold its key (a damaged file, a name collision)", async () => {
    const root = await fakePackage();
    const good = await packPackage(root);
    const [name] = await readdir(packCacheDir(root));
    for (const damaged of [
      "",
      "xy",
      "\u0000\u0000\u0000\u0002k1tarball",
      "\u0000\u0000\u0004\u0000short",
    ]) {
      await writeFile(join(packCacheDir(root), name!), damaged);
      expect((await packPackage(root)).contents.equals(good.contents)).toBe(true);
    }
  });

  it("keeps only the newest few entries", async () => {
    const root = await fakePackage();
    for (let i = 0; i < 6; i++) {
      await writeFile(join(root, "dist/cli/main.js"), `export const build = ${i};\n`);
      await packPackage(root);
    }
    expect((await readdir(packCacheDir(root))).length).toBeLessThanOrEqual(4);
  });

  it("still packs when the cache folder cannot be made", async () => {
    const root = await fakePackage();
    await writeFile(join(root, "node_modules"), "not a folder");
    const self = await packPackage(root);
    expect(self.contents.equals((await packPackage(root, { cache: false })).contents)).toBe(true);
  });
});
