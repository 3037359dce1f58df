// The compose tests' one set-up: the generated compose.yaml of the clone (global-setup.ts) brought up as a
// seller runs it, with the agent's image built once per run and the proxy published on an ephemeral
// 127.0.0.1 port. `.env.production` (what every instance reads) is written first: each file gives its own.
import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import type { ProvidedContext } from "vitest";
import { generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/load.js";
import { healthLog } from "./docker.js";

export interface ComposeStack {
  /** `docker compose -p <project> <args>` in the clone; its stdout, or throws with its output. */
  run(...args: string[]): Promise<string>;
  /** The compose project's name (its network: `<project>_default`). */
  project: string;
  /** The proxy's published address, http://127.0.0.1:<port>. */
  base: string;
  /** A service's container id. */
  idOf(service: string): Promise<string>;
  /** `down -v`: the containers, network and Redis volume removed (errors ignored). */
  down(): Promise<void>;
}

/**
 * Writes `.env.production` from `settings`, builds the proxy image, `up --wait`s the stack (with `upArgs`:
 * `--remove-orphans` turns a running stack of the same project into this one).
 */
export async function composeUp(
  ctx: ProvidedContext["containers"],
  project: string,
  settings: Record<string, string>,
  upArgs: string[] = [],
): Promise<ComposeStack> {
  const run = async (...args: string[]): Promise<string> => {
    const r = await execa("docker", ["compose", "-p", project, ...args], {
      cwd: ctx.cloneDir,
      env: { AGENT_IMAGE: ctx.image, PROXY_BIND: "127.0.0.1:" },
      reject: false,
      all: true,
    });
    if (r.exitCode !== 0) {
      // An `up --wait` that failed on a container's health: each container's last checks say why.
      const ids = args[0] === "up" ? await run("ps", "-q").catch(() => "") : "";
      const checks = await Promise.all(ids.split("\n").filter(Boolean).map(healthLog));
      throw new Error(`docker compose ${args.join(" ")}: ${r.all}\n${checks.join("\n")}`);
    }
    return (r.stdout ?? "").trim();
  };
  await writeFile(
    join(ctx.cloneDir, ".env.production"),
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  await run("build", "proxy");
  await run("up", "-d", "--no-build", ...upArgs, "--wait", "--wait-timeout", "240");
  return {
    run,
    project,
    base: `http://${await run("port", "proxy", "8080")}`,
    idOf: (service) => run("ps", "-q", service),
    down: () =>
      run("down", "-v").then(
        () => undefined,
        () => undefined,
      ),
  };
}

/**
 * A copy of the clone (in a new temporary folder) whose compose.yaml and deploy/proxy/nginx.conf are
 * rendered for the clone's features less `feature` (what a project without it gets). The image
 * stays the run's (what the feature added to it is unused).
 */
export async function renderedWithout(cloneDir: string, feature: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `create-agent-compose-no-${feature}-`));
  await cp(cloneDir, dir, { recursive: true });
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  const features = (pkg.createAgent.features as string[]).filter((f) => f !== feature);
  const model = parseManifest(await readFile(join(dir, "agent.json"), "utf8"), "agent.json");
  for (const file of generateProjectFiles(model, "npm", features))
    if (file.path === "compose.yaml" || file.path === "deploy/proxy/nginx.conf")
      await writeFile(join(dir, file.path), file.contents);
  return dir;
}
