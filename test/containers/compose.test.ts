// The generated compose.yaml, up as a seller runs it: nginx (deploy/proxy/) in front of two instances of
// the agent and a worker for async jobs sharing a Redis, only the proxy published, on 127.0.0.1. Jobs through the proxy reach both
// instances. Dev mode here (no payment): .env.production asks for it. An instance stopped mid-load, with
// payments on chain, is compose-paid.test.ts's. Then the same stack re-rendered as a project without the
// `redis` feature gets it (one instance, its ledger in its memory), where the proxy's health check is
// watched while its one instance stops: one stack for both, a compose stack being the costly part.
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ComposeStack, composeUp, renderedWithout } from "./compose-stack.js";
import { docker, execute, health, job, waitFor, waitHealthy } from "./docker.js";

const ctx = inject("containers");
let stack: ComposeStack;
const DEV = { NODE_ENV: "development", SERVICE_DEV_MODE: "true" };

/** The short container id (its HOSTNAME, which the test handler puts in its answer) of a service. */
const hostOf = async (service: string) => (await stack.idOf(service)).slice(0, 12);

beforeAll(async () => {
  if (ctx.skip) return;
  // The agent's NODE_ENV=production comes from the image; the env file (secrets, never committed) overrides.
  stack = await composeUp(ctx, `cadeploy${process.pid}`, DEV);
});
afterAll(async () => {
  if (ctx.skip) return;
  await stack?.down();
});

it.skipIf(ctx.skip)(
  "only the proxy is published, on 127.0.0.1, and it passes no /metrics scrape; Redis keeps its data and never evicts",
  async () => {
    expect(stack.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const service of ["web1", "web2", "redis"]) {
      const id = await stack.idOf(service);
      expect(await docker("port", id), service).toBe("");
    }
    // Metrics are per instance: the proxy does not pass a scrape to one at random.
    const metrics = await fetch(`${stack.base}/metrics`);
    expect(metrics.status).toBe(404);
    expect(await metrics.json()).toMatchObject({ error: expect.stringMatching(/each instance/) });
    const redis = await stack.idOf("redis");
    expect(await docker("exec", redis, "redis-cli", "config", "get", "appendonly")).toMatch(/yes/);
    expect(await docker("exec", redis, "redis-cli", "config", "get", "maxmemory-policy")).toMatch(
      /noeviction/,
    );
  },
);

it.skipIf(ctx.skip)(
  "what the proxy refuses itself is a typed JSON error as the agent's, never an HTML page: a body over its limit, a header over its buffers",
  async () => {
    const typed = async (res: Response, status: number, error: RegExp) => {
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ status: "failed", error_type: "validation", error });
    };
    const execute = `${stack.base}/execute`;
    const json = { "content-type": "application/json" };
    // Above the agent's MAX_BODY_BYTES but within the proxy's: the agent's own 413.
    await typed(
      await fetch(execute, { method: "POST", headers: json, body: "x".repeat(1_500_000) }),
      413,
      /./,
    );
    await typed(
      await fetch(execute, { method: "POST", headers: json, body: "x".repeat(3_000_000) }),
      413,
      /larger than this service accepts; nothing was run or charged/,
    );
    await typed(
      await fetch(execute, {
        method: "POST",
        headers: { ...json, "payment-signature": "a".repeat(70_000) },
        body: "{}",
      }),
      400,
      /headers larger than it accepts/,
    );
  },
);

it.skipIf(ctx.skip)(
  "PUBLIC_URL: unset, the documents name the address the buyer used through the proxy; set in .env.production, it reaches every instance",
  async () => {
    const card = await (await fetch(`${stack.base}/.well-known/agent-card.json`)).text();
    expect(card).toContain(`"${stack.base}/`);
    expect(card).not.toContain("localhost:8080");
    // What compose gives each instance from .env.production (`config` resolves env_file and environment).
    const envFile = join(ctx.cloneDir, ".env.production");
    const kept = await readFile(envFile, "utf8");
    try {
      await writeFile(envFile, `${kept}PUBLIC_URL=https://agent.example.com\n`);
      const resolved = await stack.run("config");
      const web1 = resolved.slice(resolved.indexOf("\n  web1:"));
      expect(web1).toMatch(/PUBLIC_URL: https:\/\/agent\.example\.com/);
    } finally {
      await writeFile(envFile, kept);
    }
  },
);

it.skipIf(ctx.skip)("jobs through the proxy are answered by both instances", async () => {
  const hosts = [await hostOf("web1"), await hostOf("web2")].sort();
  expect(await answeredBy("spread")).toEqual(hosts);
});

/** A service's address on the stack's network. */
const addressOf = async (service: string) =>
  docker(
    "inspect",
    "-f",
    "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
    await stack.idOf(service),
  );

/** Eight jobs through the proxy: the instances that answered them (all answered 200, or throws). */
async function answeredBy(tag: string): Promise<string[]> {
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => execute(stack.base, job(`${tag}-${i}`, "hello"))),
  );
  for (const a of answers) if (a.status !== 200) throw new Error(JSON.stringify(a.body));
  return [
    ...new Set(
      answers.map((a) => String((a.body.output as { summary: string }).summary.split(":")[0])),
    ),
  ].sort();
}

it.skipIf(ctx.skip)(
  "both instances recreated at new addresses (a redeploy), the proxy not restarted: it follows them",
  async () => {
    const before = [await addressOf("web1"), await addressOf("web2")];
    await stack.run("rm", "-s", "-f", "web1", "web2");
    // Two containers take the freed addresses, so the recreated instances get others.
    const holders: string[] = [];
    for (const _ of before)
      holders.push(
        await docker(
          "run",
          "-d",
          "--network",
          `${stack.project}_default`,
          "--entrypoint",
          "sleep",
          ctx.image,
          "300",
        ),
      );
    try {
      await stack.run("up", "-d", "--no-build", "--wait", "--wait-timeout", "120", "web1", "web2");
      const after = [await addressOf("web1"), await addressOf("web2")];
      expect(after.filter((a) => before.includes(a))).toEqual([]);
      const hosts = [await hostOf("web1"), await hostOf("web2")].sort();
      let seen: string[] = [];
      await waitFor("the proxy answering from the new instances", 30_000, async () => {
        seen = await answeredBy(`redeploy-${Date.now()}`);
        return seen.join() === hosts.join();
      });
      expect(seen).toEqual(hosts);
    } finally {
      await docker("rm", "-f", ...holders).catch(() => undefined);
    }
  },
  240_000,
);

it.skipIf(ctx.skip)(
  "async jobs run on the worker service (the web instances run none); stopped, a new one is refused 503",
  async () => {
    const worker = await stack.idOf("worker");
    // Its health check asks the worker's own GET /health (WORKER_HEALTH_PORT).
    await waitHealthy(worker, 60_000);
    const submit = () =>
      fetch(`${stack.base}/execute`, {
        method: "POST",
        headers: { "content-type": "application/json", prefer: "respond-async" },
        body: JSON.stringify(job(`async-${Date.now()}`, "hello")),
      });
    const accepted = await submit();
    expect(accepted.status).toBe(202);
    const { job_token: token } = (await accepted.json()) as { job_token: string };
    const poll = `${stack.base}${accepted.headers.get("location")}`;
    let answer: Record<string, unknown> = {};
    await waitFor("the async job's answer", 30_000, async () => {
      const res = await fetch(poll, { headers: { authorization: `Bearer ${token}` } });
      answer = (await res.json()) as Record<string, unknown>;
      return res.status === 200 && answer.status === "completed";
    });
    expect((answer.output as { summary: string }).summary).toBe(`${worker.slice(0, 12)}: 5`);

    await stack.run("stop", "worker");
    let refused: Response | undefined;
    await waitFor("a refusal while no worker runs", 30_000, async () => {
      refused = await submit();
      return refused.status === 503;
    });
    expect(((await refused!.json()) as { error: string }).error).toMatch(/no worker is running/);
    // Back once a worker beats again: async-queue-redis.test.ts (a restart here is a health check's wait).
  },
  180_000,
);

describe("re-rendered as a project without redis", () => {
  let one: ComposeStack;
  let dir = "";
  beforeAll(async () => {
    if (ctx.skip) return;
    dir = await renderedWithout(ctx.cloneDir, "redis");
    // The same compose project: web1 recreated without Redis, web2, the worker and Redis removed, the
    // proxy rebuilt with one upstream. The outer afterAll's `down -v` removes it all (and the volume).
    one = await composeUp({ ...ctx, cloneDir: dir }, stack.project, DEV, ["--remove-orphans"]);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // It once named a Redis the project cannot use, and the agent refused to start.
  it.skipIf(ctx.skip)(
    "one instance behind the proxy, no Redis, jobs answered there with its in-memory ledger",
    async () => {
      expect((await one.run("config", "--services")).split("\n").sort()).toEqual(["proxy", "web1"]);
      const running = await docker(
        ...["ps", "-a", "--filter", `label=com.docker.compose.project=${one.project}`],
        ...["--format", '{{.Label "com.docker.compose.service"}}'],
      );
      expect(running.split("\n").sort()).toEqual(["proxy", "web1"]);
      const web1 = await one.idOf("web1");
      const answers = await Promise.all(
        [0, 1, 2].map((i) => execute(one.base, job(`one-${i}`, "hello"))),
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

  // The proxy's health says nginx serves, whatever its instances do (they have their own checks): a
  // redeploy recreating them must not fail `up --wait` on an unhealthy proxy. The old check, `nginx -t`,
  // failed once an instance was stopped (its name no longer resolves) though nginx served on.
  it.skipIf(ctx.skip)(
    "the proxy stays healthy while its instance is stopped, and serves it again once it is back",
    async () => {
      const proxy = await one.idOf("proxy");
      expect(await health(proxy)).toBe("healthy");
      await one.run("stop", "web1");
      try {
        // deploy/proxy/Dockerfile: 3 failed checks 5 s apart would turn it unhealthy within ~24 s.
        const until = Date.now() + 26_000;
        while (Date.now() < until) {
          expect(await health(proxy)).toBe("healthy");
          await new Promise((r) => setTimeout(r, 2_000));
        }
      } finally {
        await one.run("start", "web1");
      }
      await waitFor("a job through the proxy again", 60_000, async () => {
        const answer = await execute(one.base, job(`back-${Date.now()}`, "hello")).catch(
          () => null,
        );
        return answer?.status === 200;
      });
    },
    120_000,
  );
});

if (ctx.skip) it("container tests", () => console.log(`container tests skipped: ${ctx.skip}`));
