// A newcomer's first minutes, as the README tells them: its first command on a fresh clone (set the tool up
// with only what scaffolding needs, scaffold a project outside the clone), scaffolding into the tool's own
// folder refused, the project's scripts under npm, pnpm, yarn and bun, and `npm run dev` on a busy port.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { copyFile, cp, lstat, mkdir, mkdtemp, readlink, rm, symlink } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { copyProject } from "./helpers.js";

const REPO = join(import.meta.dirname, "../..");
const shared = inject("projectDir");

/** A user's shell environment: no npm_* variables of a parent `npm test`, no vitest variables, no NODE_ENV. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(npm_|VITEST|INIT_CWD$|NODE_ENV$|NODE_OPTIONS$|TEST$)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** Git author and committer for machines without a git identity (CI); a user's own identity otherwise. */
function gitIdentity(): Record<string, string> {
  try {
    execFileSync("git", ["config", "user.email"], { stdio: "pipe" });
    execFileSync("git", ["config", "user.name"], { stdio: "pipe" });
    return {};
  } catch {
    const who = { name: "create-agent tests", email: "tests@create-agent.invalid" };
    return {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
    };
  }
}

/**
 * What a clone of this repository would hold once the current work is committed: the tracked and the untracked
 * but not ignored files, with their working-tree contents (no node_modules, no dist), committed in a fresh
 * repository.
 */
async function emulateClone(dest: string): Promise<void> {
  const listed = execFileSync(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
    { cwd: REPO, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  )
    .split("\0")
    .filter(Boolean);
  for (const path of new Set(listed)) {
    const from = join(REPO, path);
    const stat = await lstat(from).catch(() => undefined);
    if (!stat) continue; // deleted in the working tree: a commit would not have it
    const to = join(dest, path);
    await mkdir(dirname(to), { recursive: true });
    if (stat.isSymbolicLink()) await symlink(await readlink(from), to);
    else if (stat.isFile()) await copyFile(from, to);
  }
  const git = (...args: string[]) =>
    execa("git", args, { cwd: dest, env: userEnv(gitIdentity()), extendEnv: false });
  await git("init", "-q");
  await git("add", "-A");
  await git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "create-agent");
}

/** Bytes under `dir`, as `du -sb` counts them. */
function diskBytes(dir: string): number {
  return Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split(/\s/)[0]);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe("the README's first command, on a fresh clone", () => {
  let tmp = "";
  let clone = "";
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), "create-agent-first-"));
    clone = join(tmp, "create-agent");
    await emulateClone(clone);
  });
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("sets the tool up without test-only packages and scaffolds ../my-agent: its own repository, tests and typecheck pass", async () => {
    const readme = readFileSync(join(clone, "README.md"), "utf8");
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    if (!block) throw new Error("README.md has no ```sh block: its quick start changed shape");
    const command = block
      .split("\n")[0]!
      .replace(/\s+#.*$/, "")
      .trim();
    expect(command, "README.md's first command").not.toBe("");

    // The command's steps, one at a time (as `&&` runs them), to time each.
    const env = userEnv({
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      ...gitIdentity(),
    });
    const timings: string[] = [];
    for (const step of command.split(/\s*&&\s*/)) {
      const started = performance.now();
      const run = await execa("bash", ["-c", step], {
        cwd: clone,
        env,
        extendEnv: false,
        reject: false,
        all: true,
        timeout: 400_000,
      });
      timings.push(`${step}: ${seconds(performance.now() - started)}`);
      expect(run.exitCode, `\`${step}\` (from \`${command}\`) failed:\n${run.all}`).toBe(0);
    }

    const project = join(tmp, "my-agent");
    expect(existsSync(join(project, "agent.json")), `no project in ${project}`).toBe(true);
    expect(relative(clone, project).startsWith(".."), "the project is outside the clone").toBe(
      true,
    );
    const top = await execa("git", ["rev-parse", "--show-toplevel"], { cwd: project });
    expect(top.stdout).toBe(realpathSync(project));
    const commits = await execa("git", ["rev-list", "--count", "HEAD"], { cwd: project });
    expect(commits.stdout).toBe("1");

    const modules = join(clone, "node_modules");
    const { devDependencies } = JSON.parse(readFileSync(join(clone, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    const testOnly = new Set([
      "vitest",
      "@foundry-rs/anvil-linux-amd64",
      "@x402/core",
      "create-vite",
      ...Object.keys(devDependencies),
    ]);
    const installed = [...testOnly].filter((name) => existsSync(join(modules, name)));
    expect(installed, "test-only packages installed in the clone").toEqual([]);
    const size = diskBytes(modules);
    console.log(
      `first command: ${timings.join("; ")}; the tool's node_modules: ${(size / 1e6).toFixed(1)} MB`,
    );
    expect(size).toBeLessThan(150 * 1024 * 1024);

    const projectEnv = userEnv();
    const test = await execa("npm", ["test"], {
      cwd: project,
      env: projectEnv,
      extendEnv: false,
      reject: false,
      all: true,
    });
    expect(test.exitCode, test.all).toBe(0);
    expect(test.all, "the project's tests ran with the tool's configuration").not.toContain(clone);
    // src/runtime's declarations were built by the scaffold after its install: the first typecheck checks
    // the user's code against them, not the runtime again.
    expect(existsSync(join(project, "node_modules/.cache/create-agent/runtime.tsbuildinfo"))).toBe(true);
    const typecheck = await execa("npm", ["run", "typecheck", "--", "--verbose"], {
      cwd: project,
      env: projectEnv,
      extendEnv: false,
      reject: false,
      all: true,
    });
    expect(typecheck.exitCode, typecheck.all).toBe(0);
    expect(typecheck.all).toContain("Project 'src/runtime/tsconfig.json' is up to date");
  });
});

describe("scaffolding into the tool's own folder", () => {
  let tmp = "";
  let tool = "";
  beforeAll(async () => {
    // A clone set up for scaffolding: the repository's node_modules and its built dist/ stand in for `npm ci`.
    tmp = await mkdtemp(join(tmpdir(), "create-agent-home-"));
    tool = join(tmp, "create-agent");
    await emulateClone(tool);
    if (!existsSync(join(REPO, "dist", "cli", "main.js")))
      throw new Error(
        `${join(REPO, "dist")} is missing: run \`npx tsc -p tsconfig.build.json\` first`,
      );
    await cp(join(REPO, "dist"), join(tool, "dist"), { recursive: true });
    await symlink(join(REPO, "node_modules"), join(tool, "node_modules"), "dir");
  });
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** Every file git sees in the folder, committed, changed, untracked or ignored (node_modules is a symlink). */
  const files = async (dir: string) =>
    (
      await execa("git", ["status", "--porcelain", "--untracked-files=all", "--ignored"], {
        cwd: dir,
      })
    ).stdout;

  const create = (...args: string[]) =>
    execa("node", [join(tool, "bin/create-agent.js"), ...args], {
      cwd: tmp,
      env: userEnv(),
      extendEnv: false,
      reject: false,
      all: true,
    });

  it("is refused, naming the folder and how to create the project elsewhere; nothing is written", async () => {
    const target = join(tool, "inside");
    const before = await files(tool);
    const refused = await create(target, "--yes", "--no-install");
    expect(refused.exitCode, refused.all).toBe(1);
    expect(refused.stderr).toContain("inside create-agent's own folder");
    expect(refused.stderr).toContain(tool);
    expect(refused.stderr).toMatch(/elsewhere/i);
    expect(refused.stderr).toContain("--inside-tool-repo");
    expect(existsSync(target)).toBe(false);
    expect(await files(tool), "files were written into the tool's folder").toEqual(before);
  });

  it("is done when asked with --inside-tool-repo", async () => {
    const target = join(tool, "inside-anyway");
    const created = await create(target, "--yes", "--no-install", "--inside-tool-repo");
    expect(created.exitCode, created.all).toBe(0);
    expect(existsSync(join(target, "agent.json"))).toBe(true);
  });
});

// pnpm, yarn and bun, installed once from the npm registry into a temporary prefix and reused by later runs.
const PM_VERSIONS = { pnpm: "10.34.8", yarn: "1.22.22", bun: "1.4.5" } as const;
const PMS = join(tmpdir(), "create-agent-pms");

async function packageManagers(): Promise<{ bin: string } | { problem: string }> {
  const bin = join(PMS, "node_modules", ".bin");
  const ready = () =>
    Object.entries(PM_VERSIONS).every(([name, version]) => {
      try {
        const manifest = join(PMS, "node_modules", name, "package.json");
        const installed = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
        return installed.version === version && existsSync(join(bin, name));
      } catch {
        return false;
      }
    });
  if (ready()) return { bin };
  const started = performance.now();
  const install = await execa(
    "npm",
    [
      "install",
      "--prefix",
      PMS,
      "--no-audit",
      "--no-fund",
      ...Object.entries(PM_VERSIONS).map(([name, version]) => `${name}@${version}`),
    ],
    { env: userEnv(), extendEnv: false, reject: false, all: true, timeout: 300_000 },
  );
  console.log(`installing pnpm, yarn and bun: ${seconds(performance.now() - started)}`);
  if (install.exitCode !== 0 || !ready())
    return { problem: `npm install --prefix ${PMS} failed (${install.exitCode}):\n${install.all}` };
  return { bin };
}

const pms = await packageManagers();
const pmProblem = "problem" in pms ? pms.problem : undefined;
if (pmProblem) console.warn(`skipping the package manager tests: ${pmProblem}`);

describe.skipIf(pmProblem !== undefined)(
  `the project's scripts under npm, pnpm, yarn and bun${pmProblem ? " (skipped: installing pnpm, yarn and bun failed)" : ""}`,
  () => {
    let project = "";
    beforeAll(async () => {
      project = await copyProject(shared, "create-agent-pms-");
    });
    afterAll(async () => {
      if (project) await rm(dirname(project), { recursive: true, force: true });
    });

    const run = (line: string) =>
      execa("bash", ["-c", line], {
        cwd: project,
        env: userEnv({ PATH: `${"bin" in pms ? pms.bin : ""}:${process.env.PATH ?? ""}` }),
        extendEnv: false,
        reject: false,
        all: true,
        timeout: 60_000,
      });

    it.each([
      "pnpm run generate --check",
      "pnpm run generate -- --check",
      "yarn generate --check",
      "bun run generate --check",
      "npm run generate -- --check",
    ])("`%s` checks the generated code: up to date", async (line) => {
      const result = await run(line);
      expect(result.exitCode, result.all).toBe(0);
      expect(result.stdout, result.all).toContain("up to date");
    });

    it("`pnpm run add-capability translate --price 0.05` adds it; `--check` is clean afterwards", async () => {
      const added = await run("pnpm run add-capability translate --price 0.05");
      expect(added.exitCode, added.all).toBe(0);
      const manifest = JSON.parse(readFileSync(join(project, "agent.json"), "utf8")) as {
        capabilities: Record<string, { pricing: { amount: string } }>;
      };
      expect(manifest.capabilities.translate?.pricing.amount).toBe("0.05");
      expect(existsSync(join(project, "src/capabilities/translate.ts"))).toBe(true);
      const check = await run("pnpm run generate --check");
      expect(check.exitCode, check.all).toBe(0);
      expect(check.stdout, check.all).toContain("up to date");
    });
  },
);

describe("`npm run dev` when the port is busy", () => {
  let project = "";
  beforeAll(async () => {
    project = await copyProject(shared, "create-agent-busy-");
  });
  afterAll(async () => {
    if (project) await rm(dirname(project), { recursive: true, force: true });
  });

  it("exits non-zero within seconds, saying the port is busy and how to set PORT", async () => {
    // Bound the way the dev server binds: no host, every interface.
    const squatter = createServer();
    await new Promise<void>((resolve, reject) => {
      squatter.once("error", reject);
      squatter.listen(0, () => resolve());
    });
    const { port } = squatter.address() as AddressInfo;
    try {
      const started = performance.now();
      const dev = await execa("npm", ["run", "dev"], {
        cwd: project,
        env: userEnv({ PORT: String(port) }),
        extendEnv: false,
        reject: false,
        all: true,
        timeout: 30_000,
        forceKillAfterDelay: 2000,
      });
      const elapsed = performance.now() - started;
      expect(dev.timedOut, `still running after 30 s:\n${dev.all}`).toBe(false);
      expect(dev.exitCode, dev.all).not.toBe(0);
      expect(elapsed, dev.all).toBeLessThan(10_000);
      expect(dev.all).toContain(`port ${port} is busy`);
      expect(dev.all).toMatch(/PORT=\d+/);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});

/** Processes (but this one) whose working directory is `dir` or inside it: what `npm run dev` would leave running. */
function processesIn(dir: string): string[] {
  if (!existsSync("/proc/self/cwd")) return []; // Linux only
  const left: string[] = [];
  for (const pid of execFileSync("ls", ["/proc"], { encoding: "utf8" }).split("\n")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cwd = execFileSync("readlink", [`/proc/${pid}/cwd`], { encoding: "utf8" }).trim();
      if (cwd === dir || cwd.startsWith(`${dir}/`))
        left.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return left;
}

describe("`npm run dev` with NODE_ENV=production", () => {
  let project = "";
  beforeAll(async () => {
    project = realpathSync(await copyProject(shared, "create-agent-devprod-"));
  });
  afterAll(async () => {
    if (project) await rm(dirname(project), { recursive: true, force: true });
  });

  it("exits non-zero at once with the server's reason, leaving no process behind (no watcher, no tsx)", async () => {
    const dev = await execa("npm", ["run", "dev"], {
      cwd: project,
      env: userEnv({ NODE_ENV: "production", PORT: "0" }),
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 60_000,
      forceKillAfterDelay: 2000,
    });
    expect(dev.timedOut, `still running after 60 s:\n${dev.all}`).toBe(false);
    expect(dev.exitCode, dev.all).toBe(1);
    expect(dev.all).toContain('dev mode is on while NODE_ENV is "production"');
    expect(dev.all).toContain("the server stopped before it listened");
    // tsx's helpers end with it; give them a moment (bounded) before calling them left behind.
    let left = processesIn(project);
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      left = processesIn(project);
    }
    expect(left).toEqual([]);
  });
});
