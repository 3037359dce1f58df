// The first-use install (src/first-use.ts) that call, smoke --pay and dev:paid share, run by plain node
// (vitest would resolve the cache folder's imports from this repo), with no registry: a package made
// here with `npm pack`, or one another process "installed" while this one waited for the lock.
import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const FIRST_USE = join(import.meta.dirname, "../../dist/first-use.js");

/** A process importing `tinypkg` on first use into `cache` (installing `spec`); its output. */
function firstUse(cache: string, spec: string) {
  const script = `
    const { importOnFirstUse } = await import(${JSON.stringify(FIRST_USE)});
    const absent = async (s) => { throw Object.assign(new Error("no " + s), { code: "ERR_MODULE_NOT_FOUND" }); };
    const [m] = await importOnFirstUse(["tinypkg"], { cache: ${JSON.stringify(cache)}, specs: [${JSON.stringify(spec)}], what: "tinypkg" }, absent);
    console.log("loaded", m.answer);`;
  return execa("node", ["--input-type=module", "-e", script], {
    reject: false,
    env: { npm_config_registry: "http://127.0.0.1:9/", npm_config_fetch_retries: "0" },
  });
}

/** tinypkg@1.0.0's files in `dir`: an ES module exporting answer = 42. */
async function tinyPackage(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const pkg = { name: "tinypkg", version: "1.0.0", type: "module", exports: "./index.js" };
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg));
  await writeFile(join(dir, "index.js"), "export const answer = 42;\n");
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
    await tinyPackage(join(dir, "src"));
    await execa("npm", ["pack", "--pack-destination", dir], { cwd: join(dir, "src") });
    const cache = join(dir, "cache");
    const lock = `${cache}.installing`;
    await mkdir(lock, { recursive: true });
    const old = new Date(Date.now() - 20 * 60_000);
    await utimes(lock, old, old);
    const result = await firstUse(cache, `file:${join(dir, "tinypkg-1.0.0.tgz")}`);
    expect(result.stdout, result.stderr).toBe("loaded 42");
    expect(result.stderr).toContain(`First use: installing tinypkg (file:${dir}`);
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(cache, "package.json"))).toBe(false); // --no-save: nothing recorded
  });
});
