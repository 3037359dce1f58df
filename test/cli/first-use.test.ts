// The first-use install (src/first-use.ts) that call, smoke --pay and dev:paid share, run by plain node
// (vitest would resolve the cache folder's imports from this repo), with no registry: a package made
// here with `npm pack`, or one another process "installed" while this one waited for the lock.
import { mkdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const ROOT = join(import.meta.dirname, "../..");
const FIRST_USE = join(ROOT, "dist/first-use.js");
const PAYMENT = join(ROOT, "dist/caller/payment.js");

interface LockEntry {
  version?: string;
  integrity?: string;
  resolved?: string;
}

/**
 * A process importing `tinypkg` on first use into `cache` (installing `spec`, from `lockfile` when
 * given), with an npm cache of its own (`npmCache`, else npm's); its output.
 */
function firstUse(cache: string, spec: string, lockfile?: string, npmCache?: string) {
  const install = { cache, specs: [spec], what: "tinypkg", lockfile };
  const script = `
    const { importOnFirstUse } = await import(${JSON.stringify(FIRST_USE)});
    const absent = async (s) => { throw Object.assign(new Error("no " + s), { code: "ERR_MODULE_NOT_FOUND" }); };
    const [m] = await importOnFirstUse(["tinypkg"], ${JSON.stringify(install)}, absent);
    console.log("loaded", m.answer);`;
  return execa("node", ["--input-type=module", "-e", script], {
    reject: false,
    env: {
      npm_config_registry: "http://127.0.0.1:9/",
      npm_config_fetch_retries: "0",
      ...(npmCache ? { npm_config_cache: npmCache } : {}),
    },
  });
}

/** tinypkg@1.0.0's files in `dir`: an ES module exporting `answer` (42). */
async function tinyPackage(dir: string, answer = 42): Promise<void> {
  await mkdir(dir, { recursive: true });
  const pkg = { name: "tinypkg", version: "1.0.0", type: "module", exports: "./index.js" };
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg));
  await writeFile(join(dir, "index.js"), `export const answer = ${answer};\n`);
}

/** tinypkg-1.0.0.tgz in `dir`, answering `answer`, packed by npm; its file: spec. */
async function tinyTarball(dir: string, answer = 42): Promise<string> {
  await tinyPackage(join(dir, "src"), answer);
  await execa("npm", ["pack", "--pack-destination", dir], { cwd: join(dir, "src") });
  return `file:${join(dir, "tinypkg-1.0.0.tgz")}`;
}

describe("installing on first use", () => {
  it("waits while another process installs into the same folder, then uses its install instead of running npm again", async () => {
    const cache = join(await tempDir(), "cache");
    await mkdir(`${cache}.installing`, { recursive: true }); // another process is installing
    const waiting = firstUse(cache, "tinypkg@1.0.0");
    await new Promise((r) => setTimeout(r, 1500));
    expect(waiting.exitCode).toBeNull(); // still running: waiting for the lock
    await tinyPackage(join(cache, "node_modules/tinypkg")); // ... which the other process installed
    await rm(`${cache}.installing`, { recursive: true });
    const result = await waiting;
    expect(result.stdout, result.stderr).toBe("loaded 42");
    expect(result.stderr).not.toContain("First use: installing"); // npm did not run again
  });

  it("takes over a lock left by a process that died, installs, says so on stderr, and releases it", async () => {
    const dir = await tempDir();
    const spec = await tinyTarball(dir);
    const cache = join(dir, "cache");
    const lock = `${cache}.installing`;
    await mkdir(lock, { recursive: true });
    const old = new Date(Date.now() - 20 * 60_000);
    await utimes(lock, old, old);
    const result = await firstUse(cache, spec);
    expect(result.stdout, result.stderr).toBe("loaded 42");
    expect(result.stderr).toContain(`First use: installing tinypkg (file:${dir}`);
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(cache, "package.json"))).toBe(false); // --no-save: nothing recorded
  });

  it("installs from a shipped lockfile with npm ci, and refuses a package whose bytes are not the lock's", async () => {
    const dir = await tempDir();
    const spec = await tinyTarball(dir);
    const name = "tinypkg";
    // The lock, as npm itself writes it for that tarball (with its integrity).
    const made = join(dir, "made");
    await mkdir(made);
    const pkg = { name: "first-use-test", dependencies: { [name]: spec } };
    await writeFile(join(made, "package.json"), JSON.stringify(pkg));
    await execa("npm", ["install", "--package-lock-only"], { cwd: made });
    const lock = JSON.parse(await readFile(join(made, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    };
    expect(lock.packages[`node_modules/${name}`]?.integrity).toMatch(/^sha512-/);
    const lockfile = join(dir, "lock.json");
    await writeFile(lockfile, JSON.stringify(lock));

    const good = await firstUse(
      join(dir, "cache"),
      `${name}@${spec}`,
      lockfile,
      join(dir, "npm-1"),
    );
    expect(good.stdout, good.stderr).toBe("loaded 42");
    expect(good.stderr).toContain("First use: installing tinypkg");

    await tinyTarball(dir, 666); // the same name and version, other bytes
    const bad = await firstUse(
      join(dir, "cache-2"),
      `${name}@${spec}`,
      lockfile,
      join(dir, "npm-2"),
    );
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stdout).not.toContain("loaded");
    expect(bad.stderr).toContain("EINTEGRITY");
  });
});

describe("the x402 client's lockfile (locks/x402-client.json)", () => {
  it("pins exactly the packages call installs, each at the version and bytes this repo is tested with", async () => {
    const { X402_FIRST_USE } = (await import(PAYMENT)) as {
      X402_FIRST_USE: { lockfile: string; specs: string[] };
    };
    const { readLock } = (await import(FIRST_USE)) as {
      readLock: (path: string, specs: string[]) => { packages: Record<string, LockEntry> };
    };
    const shipped = readLock(X402_FIRST_USE.lockfile, X402_FIRST_USE.specs).packages;
    const tested = JSON.parse(await readFile(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, LockEntry>;
    };
    const entries = Object.entries(shipped).filter(([path]) => path !== "");
    expect(entries.map(([path]) => path)).toEqual(
      expect.arrayContaining(["node_modules/zod", "node_modules/ox"]),
    );
    for (const [path, entry] of entries) {
      expect(entry.integrity, path).toMatch(/^sha512-/);
      expect(entry.resolved, path).toBeUndefined(); // fetched from the user's registry
      expect([path, entry.version, entry.integrity]).toEqual([
        path,
        tested.packages[path]?.version,
        tested.packages[path]?.integrity,
      ]);
    }
  });

  it("is refused, naming the script that rewrites it, when a version changed without it", async () => {
    const { X402_FIRST_USE } = (await import(PAYMENT)) as {
      X402_FIRST_USE: { lockfile: string; specs: string[] };
    };
    const { readLock } = (await import(FIRST_USE)) as {
      readLock: (p: string, s: string[]) => unknown;
    };
    const specs = X402_FIRST_USE.specs.map((s) => (s.startsWith("viem@") ? "viem@2.0.0" : s));
    expect(() => readLock(X402_FIRST_USE.lockfile, specs)).toThrow(
      /pins .*viem@2\.57\.1.*, not .*viem@2\.0\.0.*: run node scripts\/first-use-lock\.mjs/,
    );
  });
});
