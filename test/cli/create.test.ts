import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { cli, FIXTURES, snapshotTree, tempDir } from "./helpers.js";

const e2eManifest = join(FIXTURES, "e2e/agent.json");

describe("create-agent <dir>", () => {
  it("scaffolds a complete project with --yes and prints the next steps", async () => {
    const dir = join(await tempDir(), "my-agent");
    const result = await cli([dir, "--yes", "--no-install", "--no-git"]);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain("Next steps:");
    expect(result.stdout).toContain("npm install");
    expect(result.stdout).toContain("npm run dev");
    const manifest = JSON.parse(await readFile(join(dir, "agent.json"), "utf8"));
    expect(manifest.name).toBe("my-agent");
    expect(manifest.$schema).toBe("./src/generated/agent.schema.json");
    expect(Object.keys(manifest.capabilities)).toEqual(["summarize"]);
    expect(existsSync(join(dir, "src/capabilities/summarize.ts"))).toBe(true);
    expect(existsSync(join(dir, ".gitignore"))).toBe(true);
    expect(existsSync(join(dir, ".env.example"))).toBe(true);
  });

  it("is deterministic: the same manifest gives byte-identical projects", async () => {
    const parent = await tempDir();
    for (const name of ["a", "b"]) {
      const result = await cli([
        join(parent, name),
        "--yes",
        "--no-install",
        "--no-git",
        "--manifest",
        e2eManifest,
      ]);
      expect(result.exitCode, result.all).toBe(0);
    }
    expect(await snapshotTree(join(parent, "a"))).toEqual(await snapshotTree(join(parent, "b")));
  });

  it("starts from --manifest, keeping the user's text and adding a $schema pointer", async () => {
    const dir = join(await tempDir(), "shop");
    const result = await cli([dir, "--yes", "--no-install", "--no-git", "--manifest", e2eManifest]);
    expect(result.exitCode, result.all).toBe(0);
    const original = await readFile(e2eManifest, "utf8");
    const written = await readFile(join(dir, "agent.json"), "utf8");
    expect(written).toContain('"$schema": "./src/generated/agent.schema.json"');
    expect(written.replace(/\s*"\$schema": "[^"]*",/, "")).toBe(original);
    expect(existsSync(join(dir, "src/capabilities/classify-review.ts"))).toBe(true);
  });

  it("refuses a non-empty folder, names it, and touches nothing", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "notes.txt"), "mine");
    const result = await cli([dir, "--yes", "--no-install", "--no-git"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("is not empty (notes.txt)");
    expect(result.stderr).toContain("--force");
    expect(await readdir(dir)).toEqual(["notes.txt"]);
  });

  it("accepts a folder holding only .git", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, ".git"));
    const result = await cli([dir, "--yes", "--no-install", "--no-git"]);
    expect(result.exitCode, result.all).toBe(0);
    expect(existsSync(join(dir, "agent.json"))).toBe(true);
  });

  it("with --force writes into a non-empty folder and keeps unrelated files", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "notes.txt"), "mine");
    await writeFile(join(dir, "README.md"), "old readme");
    const result = await cli([dir, "--yes", "--no-install", "--no-git", "--force"]);
    expect(result.exitCode, result.all).toBe(0);
    expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(await readFile(join(dir, "README.md"), "utf8")).not.toBe("old readme");
  });

  it("rejects a bad manifest naming the file, path and problem, and writes nothing", async () => {
    const parent = await tempDir();
    const manifest = join(parent, "bad.json");
    const good = JSON.parse(await readFile(e2eManifest, "utf8"));
    good.capabilities.summarize.pricing.amount = "-1";
    await writeFile(manifest, JSON.stringify(good, null, 2));
    const result = await cli([
      join(parent, "project"),
      "--yes",
      "--no-install",
      "--no-git",
      "--manifest",
      manifest,
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("bad.json:");
    expect(result.stderr).toContain("$.capabilities.summarize.pricing.amount");
    expect(await readdir(parent)).toEqual(["bad.json"]);
  });

  it("reports a missing manifest file", async () => {
    const parent = await tempDir();
    const result = await cli([
      join(parent, "project"),
      "--yes",
      "--manifest",
      join(parent, "nope.json"),
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("nope.json");
    expect(await readdir(parent)).toEqual([]);
  });

  it("asks for a directory when run without one and without a terminal", async () => {
    const result = await cli([], await tempDir());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("missing <directory>");
  });

  it("rejects an unknown option with usage help", async () => {
    const result = await cli(["x", "--frobnicate"]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("--frobnicate");
  });

  it("makes the project a git repository with a first commit", async () => {
    const dir = join(await tempDir(), "with-git");
    const result = await execa(
      "node",
      [join(FIXTURES, "../bin/create-agent.js"), dir, "--yes", "--no-install"],
      {
        reject: false,
        all: true,
        env: {
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@example.com",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@example.com",
        },
      },
    );
    expect(result.exitCode, result.all).toBe(0);
    const log = await execa("git", ["log", "--format=%s"], { cwd: dir });
    expect(log.stdout).toBe("Initial commit from create-agent");
    const status = await execa("git", ["status", "--porcelain"], { cwd: dir });
    expect(status.stdout).toBe("");
  });
});
