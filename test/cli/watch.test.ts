import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, scaffold, snapshotTree } from "./helpers.js";

// Real binary, real files, real fs.watch: each test scaffolds a project and runs `generate --watch` in it.

interface Watcher {
  child: ResultPromise;
  stdout: () => string;
  stderr: () => string;
}

const running: ResultPromise[] = [];
afterEach(async () => {
  // A failed test must not leave a watcher behind (it would keep vitest alive).
  for (const child of running.splice(0)) {
    if (child.exitCode === null) child.kill("SIGKILL");
    await child;
  }
});

/** Starts `generate --watch` in dir and waits until it says it is watching. */
async function startWatch(dir: string): Promise<Watcher> {
  const child = execa("node", [CLI, "generate", "--watch"], {
    cwd: dir,
    reject: false,
    buffer: false,
    stdin: "ignore",
    env: { npm_config_user_agent: "" },
  });
  running.push(child);
  let out = "";
  let errText = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (errText += chunk.toString()));
  const watcher = { child, stdout: () => out, stderr: () => errText };
  await until(() => out.includes("Watching agent.json for changes"), 10_000, watcher);
  return watcher;
}

/** Polls fn until it returns true; fails with the watcher's output so far when it does not in time. */
async function until(
  fn: () => boolean | Promise<boolean>,
  timeoutMs = 8_000,
  watcher?: Watcher,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) {
      const output = watcher ? `\nstdout:\n${watcher.stdout()}\nstderr:\n${watcher.stderr()}` : "";
      throw new Error(`condition not met within ${timeoutMs} ms${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readManifest(dir: string) {
  return JSON.parse(await readFile(join(dir, "agent.json"), "utf8"));
}

/** The fixture manifest with one more output field on summarize. */
async function editedManifest(dir: string): Promise<string> {
  const manifest = await readManifest(dir);
  manifest.capabilities.summarize.output_schema.word_count = { type: "integer" };
  return JSON.stringify(manifest, null, 2);
}

const read = (dir: string, path: string) => readFile(join(dir, path), "utf8").catch(() => "");

describe("create-agent generate --watch", () => {
  it("regenerates when agent.json changes", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    expect(w.stdout()).toContain("up to date");

    await writeFile(join(dir, "agent.json"), await editedManifest(dir));
    await until(
      async () => (await read(dir, "src/generated/types.ts")).includes("word_count: number"),
      8_000,
      w,
    );
    await until(() => w.stdout().includes("wrote    src/generated/types.ts"), 8_000, w);
    expect(w.stdout()).toContain("agent.json changed; regenerated:");
  }, 15_000);

  it("survives a broken save, keeps the generated files, and recovers on the next good save", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    const before = await snapshotTree(join(dir, "src/generated"));
    const edited = await editedManifest(dir);

    await writeFile(join(dir, "agent.json"), '{ "name": "agent", ');
    await until(
      () => w.stderr().includes("agent.json has problems; keeping the last good output:"),
      8_000,
      w,
    );
    expect(w.stderr()).toMatch(/agent\.json:\d+:\d+:/);
    expect(await snapshotTree(join(dir, "src/generated"))).toEqual(before);
    expect(w.child.exitCode).toBeNull();

    await writeFile(join(dir, "agent.json"), edited);
    await until(
      async () => (await read(dir, "src/generated/types.ts")).includes("word_count: number"),
      8_000,
      w,
    );
    await until(() => w.stdout().includes("agent.json is valid again"), 8_000, w);
  }, 15_000);

  it("picks up an atomic save (temp file renamed over agent.json), repeatedly", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    const tmp = join(dir, "agent.json.tmp");

    await writeFile(tmp, await editedManifest(dir));
    await rename(tmp, join(dir, "agent.json"));
    await until(
      async () => (await read(dir, "src/generated/types.ts")).includes("word_count: number"),
      8_000,
      w,
    );

    // The watched path now has a new inode; a second atomic save must still be seen.
    const manifest = await readManifest(dir);
    manifest.capabilities.summarize.output_schema.language = { type: "string" };
    await writeFile(tmp, JSON.stringify(manifest, null, 2));
    await rename(tmp, join(dir, "agent.json"));
    await until(
      async () => (await read(dir, "src/generated/types.ts")).includes("language: string"),
      8_000,
      w,
    );
  }, 15_000);

  it("reports no changes and touches no file when a save does not change the generated code", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    const registry = join(dir, "src/generated/registry.ts");
    const mtimeBefore = (await stat(registry)).mtimeMs;
    const before = await snapshotTree(join(dir, "src/generated"));

    // Same manifest, different whitespace: a real change to the file, none to the output.
    await writeFile(join(dir, "agent.json"), JSON.stringify(await readManifest(dir), null, 4));
    await until(() => w.stdout().includes("no changes"), 8_000, w);
    expect((await stat(registry)).mtimeMs).toBe(mtimeBefore);
    expect(await snapshotTree(join(dir, "src/generated"))).toEqual(before);
    expect(w.stdout()).not.toContain("wrote ");
  }, 15_000);

  it("stops cleanly on SIGINT with exit code 0", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    w.child.kill("SIGINT");
    const result = await w.child;
    expect(result.exitCode).toBe(0);
    expect(w.stdout()).toContain("Stopped watching.");
  }, 15_000);

  it("never overwrites handler files", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    const handler = join(dir, "src/capabilities/summarize.ts");
    await writeFile(handler, "// my own code\n");

    await writeFile(join(dir, "agent.json"), await editedManifest(dir));
    await until(() => w.stdout().includes("wrote    src/generated/types.ts"), 8_000, w);
    expect(await readFile(handler, "utf8")).toBe("// my own code\n");
  }, 15_000);

  it("waits for a deleted agent.json to come back", async () => {
    const dir = await scaffold();
    const w = await startWatch(dir);
    const edited = await editedManifest(dir);
    const before = await snapshotTree(join(dir, "src/generated"));

    await rm(join(dir, "agent.json"));
    await until(() => w.stderr().includes("agent.json was deleted"), 8_000, w);
    expect(await snapshotTree(join(dir, "src/generated"))).toEqual(before);

    await writeFile(join(dir, "agent.json"), edited);
    await until(() => w.stdout().includes("agent.json is back; regenerated:"), 8_000, w);
    expect(await read(dir, "src/generated/types.ts")).toContain("word_count: number");
  }, 15_000);
});
