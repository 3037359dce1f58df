// Container tests' shared set-up: is a container engine here (`docker`, started by .ci/run through the
// shared containers setup.sh)? If so, scaffold one project exactly as a user gets it (its own git
// repository, lockfile committed), clone it (a clean clone: no node_modules, no dist), and build its
// generated Dockerfile ONCE with --no-cache (an empty npm cache inside the build); every container test
// uses that image. Without an engine, `containers.skip` says why and the tests skip, printing it.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    containers: {
      skip?: string;
      image: string;
      cloneDir: string;
      buildSeconds: number;
      imageBytes: number;
    };
  }
}

const CLI = join(import.meta.dirname, "../../bin/create-agent.js");

/** A capability that takes its time when asked ("slow"), so a test can stop a container mid-job. */
const HANDLER = `import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";
import type { HandlerContext } from "../runtime/types.js";

export default async function summarize(input: SummarizeInput, ctx: HandlerContext): Promise<SummarizeOutput> {
  const ms = input.text.startsWith("slow") ? 4000 : 0;
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { summary: \`\${process.env.HOSTNAME ?? "?"}: \${input.text.length}\` };
}
`;

/** Why no engine can be used here, or undefined when `docker info` answers. */
function engineProblem(): string | undefined {
  try {
    execFileSync("docker", ["info", "--format", "{{.ServerVersion}}"], {
      stdio: "pipe",
      timeout: 20_000,
    });
    return undefined;
  } catch (error) {
    const e = error as { code?: string; stderr?: Buffer };
    if (e.code === "ENOENT")
      return "no `docker` command (run /work/shared/tools/containers/setup.sh, as .ci/run does)";
    return `docker has no engine: ${
      String(e.stderr ?? error)
        .trim()
        .split("\n")[0]
    }`;
  }
}

async function run(cmd: string, args: string[], cwd: string) {
  const r = await execa(cmd, args, {
    cwd,
    reject: false,
    all: true,
    env: { npm_config_audit: "false", npm_config_fund: "false" },
  });
  if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(" ")} failed in ${cwd}:\n${r.all}`);
  return r.all ?? "";
}

export default async function setup(project: TestProject) {
  const skip = engineProblem();
  const image = `create-agent-test-${process.pid}:latest`;
  const workDir = await mkdtemp(join(tmpdir(), "create-agent-containers-"));
  const projectDir = join(workDir, "deploy-agent");
  const cloneDir = join(workDir, "clone");
  let buildSeconds = 0;
  let imageBytes = 0;
  // The legacy builder leaves each stage as an untagged image: those new ones are removed at the end.
  const dangling = async () =>
    (await execa("docker", ["images", "-q", "-f", "dangling=true"], { reject: false })).stdout
      .split("\n")
      .filter(Boolean);
  const before = new Set(skip ? [] : await dangling());
  if (!skip) {
    // The project as created, with the redis and queue features (compose shares one ledger; a worker); the lockfile as an
    // install writes it (--package-lock-only: the same file, without installing here).
    await run(
      "node",
      [
        CLI,
        projectDir,
        "--yes",
        "--no-install",
        "--no-git",
        "--features",
        "onchain,mcp,console,redis,queue",
      ],
      workDir,
    );
    await writeFile(join(projectDir, "src/capabilities/summarize.ts"), HANDLER);
    await run("npm", ["install", "--package-lock-only", "--prefer-offline"], projectDir);
    await run("git", ["init", "-q"], projectDir);
    await run("git", ["add", "-A"], projectDir);
    await run(
      "git",
      ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "project"],
      projectDir,
    );
    await run("git", ["clone", "-q", projectDir, cloneDir], workDir);
    const started = Date.now();
    await run("docker", ["build", "--no-cache", "-q", "-t", image, "."], cloneDir);
    buildSeconds = Math.round((Date.now() - started) / 1000);
    imageBytes = Number(
      await run("docker", ["image", "inspect", "-f", "{{.Size}}", image], workDir),
    );
    process.stdout.write(
      `[containers] image built from a clean clone in ${buildSeconds} s: ${(imageBytes / 1e6).toFixed(0)} MB\n`,
    );
  }
  project.provide("containers", {
    ...(skip && { skip }),
    image,
    cloneDir,
    buildSeconds,
    imageBytes,
  });
  return async () => {
    if (!skip) {
      // The agent's image, and the proxy's that the compose tests built (compose.yaml names it).
      await execa("docker", ["rmi", "-f", image, "deploy-agent-proxy:latest"], { reject: false });
      const left = (await dangling()).filter((id) => !before.has(id));
      if (left.length > 0) await execa("docker", ["rmi", ...left], { reject: false });
    }
    await rm(workDir, { recursive: true, force: true });
  };
}
