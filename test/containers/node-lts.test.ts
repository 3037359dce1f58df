// The Deploy section's production advice, in a real container: the same clean clone as the other container
// tests, built with `--build-arg NODE_IMAGE=node:24-bookworm-slim`, runs Node 24 in every stage that ships
// (an ARG placed after a FROM, or a stage left on a fixed image, would silently keep Node 20), goes healthy
// and answers a job. Here no registry is reachable: the base image is the shared setup.sh's stand-in
// (NODE_VERSION/NPM_VERSION), built on first use when the script is at hand.
import { existsSync } from "node:fs";
import { execa } from "execa";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { NODE_LTS, NODE_LTS_IMAGE, NODE_LTS_NPM } from "../node-lts.js";
import { docker, execute, job, waitHealthy } from "./docker.js";

const ctx = inject("containers");
const image = `${ctx.image.replace(/:latest$/, "")}-lts:latest`;
const name = `create-agent-lts-${process.pid}`;

/** The shared containers set-up script, where .ci/run looks for it. */
function setupScript(): string | undefined {
  const candidates = [
    process.env.CONTAINERS_SETUP,
    "../shared/tools/containers/setup.sh",
    "/work/shared/tools/containers/setup.sh",
  ];
  return candidates.find((path): path is string => path !== undefined && existsSync(path));
}

/** NODE_LTS_IMAGE, as a local stand-in when it is missing and setup.sh can make it (else docker pulls it). */
async function ensureBaseImage(): Promise<void> {
  const present = await execa("docker", ["image", "inspect", NODE_LTS_IMAGE], { reject: false });
  const script = setupScript();
  if (present.exitCode === 0 || !script || process.getuid?.() !== 0) return;
  const made = await execa("bash", [script], {
    env: { NODE_VERSION: NODE_LTS, NPM_VERSION: NODE_LTS_NPM },
    reject: false,
    all: true,
  });
  if (made.exitCode !== 0) throw new Error(`${script} (NODE_VERSION=${NODE_LTS}):\n${made.all}`);
}

beforeAll(async () => {
  if (ctx.skip) return;
  await ensureBaseImage();
  await docker(
    "build",
    "-q",
    "--build-arg",
    `NODE_IMAGE=${NODE_LTS_IMAGE}`,
    "-t",
    image,
    ctx.cloneDir,
  );
  await docker("rm", "-f", name).catch(() => undefined);
  await docker(
    ..."run -d -p 127.0.0.1::3000 -e NODE_ENV=development -e SERVICE_DEV_MODE=true --name".split(
      " ",
    ),
    name,
    image,
  );
}, 600_000);
afterAll(async () => {
  if (ctx.skip) return;
  await docker("rm", "-f", name).catch(() => undefined);
  await execa("docker", ["rmi", "-f", image], { reject: false });
});

it.skipIf(ctx.skip)(
  `built with --build-arg NODE_IMAGE=${NODE_LTS_IMAGE}: runs Node ${NODE_LTS}, goes healthy, answers a job`,
  async () => {
    expect(await docker("exec", name, "node", "-v")).toBe(`v${NODE_LTS}`);
    await waitHealthy(name, 90_000);
    const base = `http://${(await docker("port", name, "3000/tcp")).split("\n")[0]}`;
    const answer = await execute(base, job("lts-1", "hello"));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(": 5");
  },
);
