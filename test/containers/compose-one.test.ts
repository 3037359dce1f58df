// The compose.yaml of a project without the `redis` feature (a default project): one instance behind the
// proxy, its ledger in its memory. It must start as it is (it once named a Redis the project cannot use,
// and the agent refused to start) and serve jobs through the proxy. The files are rendered for the clone's
// features less `redis`, in a copy of the clone; the image is the run's (its redis folder unused here).
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { parseManifest } from "../../src/manifest/load.js";
import { generateProjectFiles } from "../../src/generate/project.js";
import { type ComposeStack, composeUp } from "./compose-stack.js";
import { docker, execute, job } from "./docker.js";

const ctx = inject("containers");
let stack: ComposeStack | undefined;
let dir = "";

beforeAll(async () => {
  if (ctx.skip) return;
  dir = await mkdtemp(join(tmpdir(), "create-agent-compose-one-"));
  await cp(ctx.cloneDir, dir, { recursive: true });
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  const features = (pkg.createAgent.features as string[]).filter((f) => f !== "redis");
  const model = parseManifest(await readFile(join(dir, "agent.json"), "utf8"), "agent.json");
  for (const file of generateProjectFiles(model, "npm", features))
    if (file.path === "compose.yaml" || file.path === "deploy/proxy/nginx.conf")
      await writeFile(join(dir, file.path), file.contents);
  stack = await composeUp({ ...ctx, cloneDir: dir }, `cadeployone${process.pid}`, {
    NODE_ENV: "development",
    SERVICE_DEV_MODE: "true",
  });
});
afterAll(async () => {
  await stack?.down();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it.skipIf(ctx.skip)(
  "a project without redis: one instance behind the proxy, no Redis, jobs answered there with its in-memory ledger",
  async () => {
    expect((await stack!.run("config", "--services")).split("\n").sort()).toEqual([
      "proxy",
      "web1",
    ]);
    const web1 = await stack!.idOf("web1");
    const answers = await Promise.all(
      [0, 1, 2].map((i) => execute(stack!.base, job(`one-${i}`, "hello"))),
    );
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect((a.body.output as { summary: string }).summary).toBe(`${web1.slice(0, 12)}: 5`);
    }
    // No Redis named: an instance given a REDIS_URL without the feature refuses to start.
    expect(await docker("inspect", "-f", "{{json .Config.Env}}", web1)).not.toMatch(/REDIS_URL/);
    expect(await docker("port", web1)).toBe("");
  },
);
