// The generated Dockerfile, built from a clean clone of a freshly created project (global-setup.ts):
// the container runs as a non-root user, its HEALTHCHECK turns healthy without curl, it answers a job,
// and SIGTERM (what `docker stop` and every orchestrator send) lets an in-flight job finish and answer
// before the container exits 0: node is PID 1 and drains, no npm or shell swallows the signal.
import { execa } from "execa";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { docker, execute, job, logs, waitFor, waitHealthy } from "./docker.js";

const ctx = inject("containers");
const name = `create-agent-image-${process.pid}`;
let base = "";

beforeAll(async () => {
  if (ctx.skip) return;
  await docker("rm", "-f", name).catch(() => undefined);
  // Dev mode (no payment): NODE_ENV=production (the image's) refuses it, so the test overrides it.
  await docker(
    "run",
    "-d",
    "--name",
    name,
    "-p",
    "127.0.0.1::3000",
    "-e",
    "NODE_ENV=development",
    "-e",
    "SERVICE_DEV_MODE=true",
    ctx.image,
  );
  base = `http://${(await docker("port", name, "3000/tcp")).split("\n")[0]}`;
});
afterAll(async () => {
  if (!ctx.skip) await docker("rm", "-f", name).catch(() => undefined);
});

it.skipIf(ctx.skip)(
  "runs as a non-root user, goes healthy through its HEALTHCHECK, answers a job",
  async () => {
    expect(await docker("exec", name, "id", "-u")).not.toBe("0");
    expect(await docker("inspect", "-f", "{{json .Config.Healthcheck.Test}}", name)).toMatch(
      /^\["CMD","node"/,
    );
    await waitHealthy(name, 90_000);
    // A failing check says why, in what `docker inspect` keeps of it: here a port nothing listens on.
    const failed = await execa(
      "docker",
      ["exec", "-e", "WORKER_HEALTH_PORT=1", name, "node", "deploy/healthcheck.mjs"],
      { reject: false },
    );
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/health: connect ECONNREFUSED/);
    const answer = await execute(base, job("img-1", "hello"));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(": 5");
    // The goal on node:20-bookworm-slim (itself about 241 MB): at most 300 MB.
    expect(ctx.imageBytes).toBeLessThanOrEqual(300e6);
    // What ships: node, dist/ and production dependencies only (no TypeScript compiler, no sources).
    expect(
      await docker(
        "exec",
        name,
        "sh",
        "-c",
        "ls node_modules/typescript dist/server.js 2>&1 || true",
      ),
    ).toMatch(/No such file[\s\S]*dist\/server\.js|dist\/server\.js[\s\S]*No such file/);
  },
);

it.skipIf(ctx.skip)(
  "SIGTERM with a job in flight: the job's answer arrives, then the container exits 0",
  async () => {
    await waitHealthy(name, 90_000);
    const inFlight = execute(base, job("img-slow", "slow job"));
    await waitFor("the slow job started", 20_000, async () => /img-slow/.test(await logs(name)));
    await docker("kill", "--signal", "SIGTERM", name);
    const answer = await inFlight;
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(JSON.stringify(answer.body)).toContain(": 8");
    expect(await docker("wait", name)).toBe("0");
  },
);

if (ctx.skip) it("container tests", () => console.log(`container tests skipped: ${ctx.skip}`));
