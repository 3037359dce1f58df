// The compose tests' one set-up: the generated compose.yaml of the clone (global-setup.ts) brought up as a
// seller runs it, with the agent's image built once per run and the proxy published on an ephemeral
// 127.0.0.1 port. `.env.production` (what every instance reads) is written first: each file gives its own.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import type { ProvidedContext } from "vitest";

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

/** Writes `.env.production` from `settings`, builds the proxy image, `up --wait`s the stack. */
export async function composeUp(
  ctx: ProvidedContext["containers"],
  project: string,
  settings: Record<string, string>,
): Promise<ComposeStack> {
  const run = async (...args: string[]) => {
    const r = await execa("docker", ["compose", "-p", project, ...args], {
      cwd: ctx.cloneDir,
      env: { AGENT_IMAGE: ctx.image, PROXY_BIND: "127.0.0.1:" },
      reject: false,
      all: true,
    });
    if (r.exitCode !== 0) throw new Error(`docker compose ${args.join(" ")}: ${r.all}`);
    return (r.stdout ?? "").trim();
  };
  await writeFile(
    join(ctx.cloneDir, ".env.production"),
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
  await run("build", "proxy");
  await run("up", "-d", "--no-build", "--wait", "--wait-timeout", "240");
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
