// The other ways to run a generated project, read as a seller uses them: the systemd unit
// (deploy/agent.service) passes `systemd-analyze verify` with no warning, runs what `npm start` runs as an
// unprivileged user with its secrets in an EnvironmentFile, retries a transient start (exit 75) but not a
// wrong configuration (exit 1), and waits longer than the server's drain before killing; Fly.io's fly.toml
// builds the project's Dockerfile and checks the port the server listens on and the health path it serves.
// test/e2e/systemd-unit.test.ts runs the unit's command line with its environment on a built project.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { generateProjectFiles } from "../../src/generate/project.js";
import { parseManifest } from "../../src/manifest/index.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { TRANSIENT_EXIT_CODE } from "../../templates/runtime/ops/settings.js";
import { parseUnit } from "../e2e/systemd-unit.js";
import { makeAgent, startApp } from "../runtime/helpers.js";

const run = promisify(execFile);
const MANIFEST = JSON.stringify({
  name: "@acme/shop-agent",
  version: "1.0.0",
  capabilities: {
    classify: {
      pricing: { model: "per_job", amount: "0.02", currency: "USDC" },
      input_schema: { text: { type: "string", required: true } },
      output_schema: { label: { type: "string" } },
    },
  },
});
const model = parseManifest(MANIFEST, "agent.json");
const project = (features: string[]) => {
  const files = generateProjectFiles(model, "npm", features);
  return (path: string) => files.find((f) => f.path === path)?.contents;
};
const withQueue = project(["queue", "redis"]);
const plain = project([]);
const dir = await mkdtemp(join(tmpdir(), "create-agent-deploy-elsewhere-"));
afterAll(() => rm(dir, { recursive: true, force: true }));
const defaults = resolveConfig({ devMode: true, env: {} });

const SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze";

describe("the systemd unit (deploy/agent.service)", () => {
  it.each([
    ["without async jobs", plain],
    ["with async jobs", withQueue],
  ])("passes systemd-analyze verify with no warning (%s)", async (_label, file) => {
    if (!existsSync(SYSTEMD_ANALYZE)) {
      console.log(`skipped: ${SYSTEMD_ANALYZE} is not on this machine`);
      return;
    }
    let unit = file("deploy/agent.service")!;
    // verify checks that ExecStart's program exists: this machine's node, when it is elsewhere.
    if (process.execPath !== "/usr/bin/node")
      unit = unit.replace("ExecStart=/usr/bin/node ", `ExecStart=${process.execPath} `);
    const path = join(dir, "acme-shop-agent.service");
    await writeFile(path, unit);
    const { stdout, stderr } = await run(SYSTEMD_ANALYZE, ["verify", path]);
    expect(stderr + stdout).toBe("");
  });

  const unit = parseUnit(plain("deploy/agent.service")!);
  const service = (key: string) => unit.Service?.[key] ?? [];

  it("is named after the project and runs what `npm start` runs, node itself, from the project", () => {
    expect(unit.Unit?.Description).toEqual(["@acme/shop-agent (x402 agent)"]);
    expect(service("WorkingDirectory")).toEqual(["/srv/acme-shop-agent"]);
    expect(service("ExecStart")).toEqual(["/usr/bin/node dist/server.js"]);
    expect(plain("deploy/agent.service")).toContain(
      "sudo cp deploy/agent.service /etc/systemd/system/acme-shop-agent.service",
    );
  });

  it("runs as an unprivileged user, with every secret in an EnvironmentFile and none in the unit", () => {
    expect(service("DynamicUser")).toEqual(["yes"]);
    expect(service("User")).toEqual([]);
    expect(service("EnvironmentFile")).toEqual(["/etc/acme-shop-agent/env"]);
    const names = service("Environment").map((e) => e.split("=")[0]);
    expect(names).toEqual(["NODE_ENV", "PORT", "HOST", "TRUST_PROXY"]);
    expect(service("Environment")).toContain(`PORT=${defaults.port}`);
  });

  it("restarts a transient start failure, never a wrong configuration", () => {
    expect(service("Restart")).toEqual(["on-failure"]);
    expect(service("RestartPreventExitStatus")).toEqual(["1"]);
    expect(service("RestartPreventExitStatus")).not.toContain(String(TRANSIENT_EXIT_CODE));
    expect(service("RestartSec")).toEqual(["10s"]);
  });

  it("stops with SIGTERM and waits longer than the server's drain before killing", () => {
    expect(service("KillSignal")).toEqual(["SIGTERM"]);
    expect(Number(service("TimeoutStopSec")[0])).toBeGreaterThan(defaults.shutdownTimeoutSeconds);
  });

  it("is hardened: no privileges to gain, a read-only system, private /tmp", () => {
    for (const [key, value] of [
      ["NoNewPrivileges", "yes"],
      ["ProtectSystem", "strict"],
      ["ProtectHome", "yes"],
      ["PrivateTmp", "yes"],
      ["CapabilityBoundingSet", ""],
    ])
      expect(service(key!), key).toEqual([value]);
    // node's JIT needs writable executable memory: this one would stop the server.
    expect(service("MemoryDenyWriteExecute")).toEqual([]);
  });

  it("says how to run the queue's workers apart only in a project that has async jobs", () => {
    const worker = "ExecStart=/usr/bin/node dist/server.js --worker";
    expect(withQueue("deploy/agent.service")).toContain(worker);
    expect(plain("deploy/agent.service")).not.toContain(worker);
  });
});

/** A TOML file as JSON, read by Python's standard TOML reader (tomllib). */
async function readToml(text: string): Promise<Record<string, any>> {
  const path = join(dir, "fly.toml");
  await writeFile(path, text);
  const read =
    "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))";
  return JSON.parse((await run("python3", ["-c", read, path])).stdout) as Record<string, any>;
}

describe("Fly.io's fly.toml", async () => {
  const fly = await readToml(plain("fly.toml")!);

  it("builds the project's own Dockerfile", () => {
    expect(fly.build).toEqual({ dockerfile: "Dockerfile" });
    expect(plain(fly.build.dockerfile)).toContain('CMD ["node", "dist/server.js"]');
    expect(fly.app).toBe("acme-shop-agent");
  });

  it("sends traffic to the port the server listens on, and the image exposes", () => {
    const port = fly.http_service.internal_port as number;
    expect(port).toBe(defaults.port);
    expect(fly.env.PORT).toBe(String(port));
    expect(fly.env.HOST).toBe("0.0.0.0");
    expect(plain("Dockerfile")).toContain(`EXPOSE ${port}\n`);
    expect(fly.env.PUBLIC_URL).toBe("https://acme-shop-agent.fly.dev");
  });

  it("checks a path the server answers 200 on, and outlives the drain on SIGTERM", async () => {
    const [check] = fly.http_service.checks as Array<{ method: string; path: string }>;
    expect(check!.method).toBe("GET");
    const app = await startApp(makeAgent(), { devMode: true });
    try {
      expect((await fetch(`${app.url}${check!.path}`)).status).toBe(200);
    } finally {
      await app.close();
    }
    expect(fly.kill_signal).toBe("SIGTERM");
    expect(fly.kill_timeout).toBeGreaterThan(defaults.shutdownTimeoutSeconds);
  });

  it("keeps secrets out of the file: settings that are secret go through `fly secrets set`", () => {
    expect(Object.keys(fly.env).sort()).toEqual(["HOST", "PORT", "PUBLIC_URL", "TRUST_PROXY"]);
    expect(plain("fly.toml")).toContain("fly secrets set PAY_TO=");
    expect(plain("fly.toml")).toContain("fly secrets set REDIS_URL=");
  });
});
