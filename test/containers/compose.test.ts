// The generated compose.yaml, up as a seller runs it: nginx (deploy/proxy/) in front of two instances of
// the agent sharing a Redis, only the proxy published, on 127.0.0.1. Jobs through the proxy reach both
// instances. Dev mode here (no payment): .env.production asks for it. An instance stopped mid-load, with
// payments on chain, is compose-paid.test.ts's.
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { type ComposeStack, composeUp } from "./compose-stack.js";
import { docker, execute, job } from "./docker.js";

const ctx = inject("containers");
let stack: ComposeStack;

/** The short container id (its HOSTNAME, which the test handler puts in its answer) of a service. */
const hostOf = async (service: string) => (await stack.idOf(service)).slice(0, 12);

beforeAll(async () => {
  if (ctx.skip) return;
  // The agent's NODE_ENV=production comes from the image; the env file (secrets, never committed) overrides.
  stack = await composeUp(ctx, `cadeploy${process.pid}`, {
    NODE_ENV: "development",
    SERVICE_DEV_MODE: "true",
  });
});
afterAll(async () => {
  if (ctx.skip) return;
  await stack?.down();
});

it.skipIf(ctx.skip)(
  "only the proxy is published, on 127.0.0.1; Redis keeps its data and never evicts",
  async () => {
    expect(stack.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const service of ["web1", "web2", "redis"]) {
      const id = await stack.idOf(service);
      expect(await docker("port", id), service).toBe("");
    }
    const redis = await stack.idOf("redis");
    expect(await docker("exec", redis, "redis-cli", "config", "get", "appendonly")).toMatch(/yes/);
    expect(await docker("exec", redis, "redis-cli", "config", "get", "maxmemory-policy")).toMatch(
      /noeviction/,
    );
  },
);

it.skipIf(ctx.skip)("jobs through the proxy are answered by both instances", async () => {
  const hosts = [await hostOf("web1"), await hostOf("web2")];
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => execute(stack.base, job(`spread-${i}`, "hello"))),
  );
  const seen = new Set<string>();
  for (const a of answers) {
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    seen.add(String((a.body.output as { summary: string }).summary.split(":")[0]));
  }
  expect([...seen].sort()).toEqual([...hosts].sort());
});

if (ctx.skip) it("container tests", () => console.log(`container tests skipped: ${ctx.skip}`));
