import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CLI, cli, FIXTURES, snapshotTree, tempDir } from "./helpers.js";

const e2eManifest = join(FIXTURES, "e2e/agent.json");

/** `create-agent <dir> --yes --no-install --no-git ...more`. */
const scaffold = (dir: string, ...more: string[]) =>
  cli([dir, "--yes", "--no-install", "--no-git", ...more]);

/** `create-agent ...args` refused (exit 1), leaving exactly `left` in `folder`. Its stderr. */
async function refusedLeaving(args: string[], folder: string, left: string[]): Promise<string> {
  const result = await cli(args);
  expect(result.exitCode).toBe(1);
  expect(await readdir(folder)).toEqual(left);
  return result.stderr;
}

describe("create-agent <dir>", () => {
  it("scaffolds a complete project with --yes and prints the next steps", async () => {
    const dir = join(await tempDir(), "my-agent");
    const result = await scaffold(dir);
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
      const result = await scaffold(join(parent, name), "--manifest", e2eManifest);
      expect(result.exitCode, result.all).toBe(0);
    }
    expect(await snapshotTree(join(parent, "a"))).toEqual(await snapshotTree(join(parent, "b")));
  });

  it("starts from --manifest, keeping the user's text and adding a $schema pointer", async () => {
    const dir = join(await tempDir(), "shop");
    const result = await scaffold(dir, "--manifest", e2eManifest);
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
    const stderr = await refusedLeaving([dir, "--yes", "--no-install", "--no-git"], dir, [
      "notes.txt",
    ]);
    expect(stderr).toContain("is not empty (notes.txt)");
    expect(stderr).toContain("--force");
  });

  it("accepts a folder holding only .git", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, ".git"));
    const result = await scaffold(dir);
    expect(result.exitCode, result.all).toBe(0);
    expect(existsSync(join(dir, "agent.json"))).toBe(true);
  });

  it("with --force writes into a non-empty folder, keeps unrelated files, and names those it replaced", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "notes.txt"), "mine");
    await writeFile(join(dir, "README.md"), "old readme");
    await writeFile(join(dir, "package.json"), "{}");
    const result = await scaffold(dir, "--force");
    expect(result.exitCode, result.all).toBe(0);
    const replaced = /Replaced \(--force\): (.*)\.\n/.exec(result.stdout)?.[1]?.split(", ");
    expect(replaced?.sort()).toEqual(["README.md", "package.json"]);
    expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("mine");
    expect(await readFile(join(dir, "README.md"), "utf8")).not.toBe("old readme");
  });

  it("refuses a folder holding an agent project, even with --force: its manifest and handlers stay", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "agent.json"), "{}");
    await writeFile(join(dir, "notes.txt"), "mine");
    const stderr = await refusedLeaving(
      [dir, "--yes", "--no-install", "--no-git", "--force"],
      dir,
      ["agent.json", "notes.txt"],
    );
    expect(stderr).toContain("already holds an agent project (agent.json)");
    expect(stderr).toContain("upgrade");
    expect(await readFile(join(dir, "agent.json"), "utf8")).toBe("{}");
  });

  it("a bare name inside an agent project is taken for a mistyped command: refused, naming it; a path or `create` still creates", async () => {
    const project = await tempDir();
    await writeFile(join(project, "agent.json"), "{}");
    await mkdir(join(project, "src"));
    for (const [name, cwd] of [
      ["upgarde", project],
      ["genrate", join(project, "src")],
    ] as const) {
      const result = await cli([name, "--yes", "--no-install", "--no-git"], cwd);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`"${name}" is not a command (did you mean`);
      expect(result.stderr).toContain(`To create a project there anyway, give a path: ./${name}`);
    }
    const unlike = await cli(["frobnicate", "--yes", "--no-install", "--no-git"], project);
    expect(unlike.stderr).toMatch(
      /^create-agent: "frobnicate" is not a command, and this folder is inside/,
    );
    expect((await readdir(project)).sort()).toEqual(["agent.json", "src"]);
    for (const args of [["./nested"], ["create", "again"]]) {
      const made = await cli([...args, "--yes", "--no-install", "--no-git"], project);
      expect(made.exitCode, made.all).toBe(0);
    }
    expect((await readdir(project)).sort()).toEqual(["again", "agent.json", "nested", "src"]);
  });

  it("rejects a bad manifest naming the file, path and problem, and writes nothing", async () => {
    const parent = await tempDir();
    const manifest = join(parent, "bad.json");
    const good = JSON.parse(await readFile(e2eManifest, "utf8"));
    good.capabilities.summarize.pricing.amount = "-1";
    await writeFile(manifest, JSON.stringify(good, null, 2));
    const stderr = await refusedLeaving(
      [join(parent, "project"), "--yes", "--no-install", "--no-git", "--manifest", manifest],
      parent,
      ["bad.json"],
    );
    expect(stderr).toContain("bad.json:");
    expect(stderr).toContain("$.capabilities.summarize.pricing.amount");
  });

  it.skipIf(process.platform !== "linux")(
    "a folder the file system refuses (under /sys): the system's reason and the path, no stack trace; exit 1",
    async () => {
      const r = await cli(
        ["/sys/create-agent-here", "--yes", "--no-install", "--no-git"],
        await tempDir(),
      );
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(
        /^create-agent: E(PERM|ROFS|ACCES): .*\/sys\/.*\(check that folder's owner and permissions, or the disk\)/,
      );
      expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
    },
  );

  it("a folder on the way that is a file, or a place the file system makes no folder in (/proc): named plainly, exit 1", async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, "afile"), "");
    const through = await cli(["afile/sub", "--yes", "--no-install", "--no-git"], cwd);
    expect(through.exitCode).toBe(1);
    expect(through.stderr).toBe(
      "create-agent: afile/sub cannot be a folder: afile, on its way, is a file",
    );
    expect((await cli(["afile", "--yes", "--no-install", "--no-git"], cwd)).stderr).toBe(
      "create-agent: afile exists and is a file, not a folder",
    );
    if (process.platform !== "linux") return;
    const proc = await cli(["/proc/create-agent-here", "--yes", "--no-install", "--no-git"], cwd);
    expect(proc.exitCode).toBe(1);
    expect(proc.stderr).toMatch(
      /^create-agent: cannot create the project in \/proc\/create-agent-here: the file system refused \(ENOENT: .*\)\. Choose another folder$/,
    );
  });

  it("reports a missing manifest file", async () => {
    const parent = await tempDir();
    const stderr = await refusedLeaving(
      [join(parent, "project"), "--yes", "--manifest", join(parent, "nope.json")],
      parent,
      [],
    );
    expect(stderr).toContain("nope.json");
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

  it("says what it created where, with ./ for a folder below the current one", async () => {
    const cwd = await tempDir();
    const result = await cli(["my-agent", "--yes", "--no-install", "--no-git"], cwd);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toMatch(/^Created agent "my-agent" in \.\/my-agent \(\d+ files\)\.$/m);
    expect(result.stdout).toContain("  cd my-agent\n");
  });

  it("quotes the folder in `cd` when a POSIX shell needs it", async () => {
    const cwd = await tempDir();
    for (const [folder, cd, name] of [
      ["My Agent", "cd 'My Agent'", "my-agent"],
      ["Bob's Agent", "cd 'Bob'\\''s Agent'", "bob-s-agent"],
      ["Über Agent", "cd 'Über Agent'", "uber-agent"], // accents dropped, not their letters
    ] as const) {
      const result = await cli([folder, "--yes", "--no-install", "--no-git"], cwd);
      expect(result.exitCode, result.all).toBe(0);
      expect(result.stdout).toContain(`Created agent "${name}" in ./${folder} (`);
      expect(result.stdout).toContain(`\n  ${cd}\n`);
      // What the next steps say to type really gets there.
      const shell = await execa("sh", ["-c", `${cd} && pwd`], { cwd });
      expect(shell.stdout).toBe(join(cwd, folder));
    }
  });

  it.each([
    ["pnpm", "pnpm install", "pnpm dev"],
    ["yarn", "yarn install", "yarn dev"],
    ["bun", "bun install", "bun run dev"],
    ["npm", "npm install", "npm run dev"],
  ])("gives next steps in %s commands", async (pm, install, dev) => {
    const dir = join(await tempDir(), "agent");
    const result = await scaffold(dir, "--package-manager", pm);
    expect(result.exitCode, result.all).toBe(0);
    expect(result.stdout).toContain(`\n  ${install}\n  ${dev}   `);
  });

  it("gives the project folder the permissions of a folder the user makes (0777 & ~umask)", async () => {
    const parent = await tempDir();
    for (const [umask, mode] of [
      ["022", 0o755],
      ["027", 0o750],
    ] as const) {
      const dir = join(parent, `umask-${umask}`);
      const result = await execa(
        "sh",
        [
          "-c",
          `umask ${umask} && exec node "$0" "$@"`,
          CLI,
          dir,
          "--yes",
          "--no-install",
          "--no-git",
        ],
        { reject: false, all: true, stdin: "ignore", env: { npm_config_user_agent: "" } },
      );
      expect(result.exitCode, result.all).toBe(0);
      expect(((await stat(dir)).mode & 0o777).toString(8)).toBe(mode.toString(8));
      expect(((await stat(join(dir, "src"))).mode & 0o777).toString(8)).toBe(mode.toString(8));
    }
  });

  it("Ctrl-C while the files are staged writes nothing: no staging folder, no project, no folder on its way (exit 130)", async () => {
    const parent = await tempDir();
    await writeFile(join(parent, "notes.txt"), "mine");
    const pause = join(import.meta.dirname, "pause-staging.mjs");
    const args = ["--import", pause, CLI, "new/agent", "--yes", "--no-install", "--no-git"];
    const child = execa(process.execPath, args, {
      cwd: parent,
      reject: false,
      all: true,
      stdin: "pipe",
      env: { npm_config_user_agent: "" },
    });
    child.stdin!.on("error", () => {}); // EPIPE, had the signal killed it
    let err = "";
    await new Promise<void>((staged) =>
      child.stderr!.on("data", (data: Buffer) => {
        if ((err += data).includes("staging ")) staged();
      }),
    );
    expect(await readdir(join(parent, "new"))).toEqual([
      expect.stringMatching(/^\.agent\.staging-/),
    ]);
    child.kill("SIGINT");
    child.stdin!.end("go\n");
    const result = await child;
    expect(result.exitCode, result.all).toBe(130);
    expect(result.stderr).toContain(
      "Stopped (SIGINT) before the project was written: nothing was created, ./new/agent is as it was.",
    );
    expect(await readdir(parent)).toEqual(["notes.txt"]);
    expect(await readFile(join(parent, "notes.txt"), "utf8")).toBe("mine");
  });

  describe("installing dependencies", () => {
    /** Runs the CLI with PATH holding only `bin` (fake package managers), so no real install happens. */
    async function withPath(bin: string, args: string[], cwd: string) {
      return execa(process.execPath, [CLI, ...args], {
        cwd,
        reject: false,
        all: true,
        stdin: "ignore",
        env: { PATH: bin, npm_config_user_agent: "" },
      });
    }
    async function fakeTool(bin: string, name: string, script: string) {
      await writeFile(join(bin, name), `#!/bin/sh\n${script}\n`);
      await chmod(join(bin, name), 0o755);
    }

    it("refuses a package manager that is not installed, before writing anything", async () => {
      const parent = await tempDir();
      const emptyBin = await tempDir();
      for (const [pm, how] of [
        ["pnpm", "`npm install -g pnpm` or `corepack enable`"],
        ["yarn", "`npm install -g yarn` or `corepack enable`"],
        ["bun", "`npm install -g bun`"],
      ]) {
        const result = await withPath(
          emptyBin,
          ["agent", "--yes", "--no-git", "--package-manager", pm!],
          parent,
        );
        expect(result.exitCode, result.all).toBe(1);
        expect(result.stderr).toBe(
          `create-agent: ${pm} is not installed (or not on PATH): install it (e.g. ${how}) or choose --package-manager npm`,
        );
        expect(await readdir(parent)).toEqual([]);
      }
    });

    it("runs `<pm> install` in the project and then leaves it out of the next steps", async () => {
      const parent = await tempDir();
      const bin = await tempDir();
      await fakeTool(bin, "pnpm", `echo "$@" > pm-ran.txt`);
      const result = await withPath(
        bin,
        ["agent", "--yes", "--no-git", "--package-manager", "pnpm"],
        parent,
      );
      expect(result.exitCode, result.all).toBe(0);
      expect(result.stdout).toContain("Installing dependencies with pnpm...");
      expect(await readFile(join(parent, "agent/pm-ran.txt"), "utf8")).toBe("install\n");
      expect(result.stdout).toContain("  cd agent\n  pnpm dev ");
      expect(result.stdout).not.toContain("pnpm install");
    });

    it("Ctrl-C during the install stops it and says what was done and what to run next (exit 130)", async () => {
      const parent = await tempDir();
      const bin = await tempDir();
      const wait = `"${process.execPath}" -e "setTimeout(() => {}, 10000)"`;
      await fakeTool(bin, "npm", `[ "$1" = --version ] && exit 0\nexec ${wait}`);
      const child = execa(process.execPath, [CLI, "agent", "--yes"], {
        cwd: parent,
        reject: false,
        all: true,
        stdin: "ignore",
        env: { PATH: bin, npm_config_user_agent: "" },
      });
      let out = "";
      await new Promise<void>((started) =>
        child.stdout!.on("data", (data: Buffer) => {
          if ((out += data).includes("Installing dependencies")) started();
        }),
      );
      child.kill("SIGINT");
      const result = await child;
      expect(result.exitCode, result.all).toBe(130);
      expect(result.stderr).toContain(
        "Stopped (SIGINT): the project's files are all in ./agent, but its dependencies (node_modules) and its git repository are not there yet",
      );
      expect(result.stderr).toContain(
        '  cd agent\n  npm install\n  git init && git add -A && git commit -m "Initial commit from create-agent"',
      );
      expect(existsSync(join(parent, "agent/agent.json"))).toBe(true);
      expect(existsSync(join(parent, "agent/.git"))).toBe(false);
    });

    it("when install fails, names the command that failed and how to retry; the project stays", async () => {
      const parent = await tempDir();
      const bin = await tempDir();
      await fakeTool(
        bin,
        "npm",
        `[ "$1" = --version ] && exit 0\necho "npm ERR! network unreachable" >&2\nexit 7`,
      );
      const result = await withPath(bin, ["agent", "--yes", "--no-git"], parent);
      expect(result.exitCode, result.all).toBe(1);
      expect(result.stderr).toContain("npm ERR! network unreachable");
      expect(result.stderr).toContain(
        "`npm install` exited with code 7. The project itself is complete in ./agent: fix the problem shown above, then retry with `cd agent && npm install`.",
      );
      expect(existsSync(join(parent, "agent/agent.json"))).toBe(true);
      expect(result.stdout).toContain("  cd agent\n  npm install\n  npm run dev");
    });
  });
});
