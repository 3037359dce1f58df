// The generated systemd unit (deploy/agent.service) run as systemd would run it, short of systemd itself
// (no systemd is PID 1 here): its ExecStart command line, in its WorkingDirectory (the built project), with
// its Environment= lines overridden by an EnvironmentFile's, and (when the test runs as root) under the unit's user and
// sandbox (DynamicUser, NoNewPrivileges, no capabilities, PrivateTmp, ProtectHome, ProtectSystem=strict: see
// systemd-sandbox.sh). The server starts on the unit's HOST and answers /health; the unit's KillSignal lets it drain and
// exit 0 within TimeoutStopSec; a facilitator that does not answer exits 75 (the unit restarts it) and a
// wrong configuration exits 1 (RestartPreventExitStatus: not restarted). The other hardening settings
// need systemd itself: test/generate/deploy-elsewhere.test.ts verifies the unit with systemd-analyze.
import { existsSync } from "node:fs";
import { chmod, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PAYEE } from "../chain/accounts.js";
import { chain, chainPayment } from "./chain.js";
import { closedUrl } from "../runtime/servers.js";
import { buildProject, copyProject } from "./helpers.js";
import { environment, parseUnit, type Unit } from "./systemd-unit.js";

const shared = inject("projectDir");
const workDir = inject("workDir");
/** nobody: what DynamicUser= gives, a user that owns nothing in the project. */
const UNPRIVILEGED = 65534;
const asRoot = process.getuid?.() === 0;
/** The unit's hardening, applied as systemd would (systemd-sandbox.sh): as root, with unshare and setpriv. */
const SANDBOX = join(import.meta.dirname, "systemd-sandbox.sh");
const sandboxed = asRoot && existsSync("/usr/bin/unshare") && existsSync("/usr/bin/setpriv");
/** The PATH systemd gives a service. */
const SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin";

let projectDir = "";
let unit: Unit;
beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-systemd-");
  await buildProject(projectDir);
  unit = parseUnit(await readFile(join(projectDir, "deploy/agent.service"), "utf8"));
  if (asRoot) {
    // The temporary folders are 0700: let the unprivileged user reach the project (and, through the
    // copy's node_modules links, the shared install), as /srv/<name> is readable by all.
    await chmod(dirname(projectDir), 0o755);
    await chmod(workDir, 0o711);
  }
}, 180_000);
afterAll(async () => {
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

const service = (key: string) => unit.Service?.[key] ?? [];

/** ExecStart with the unit's environment, the EnvironmentFile's `lines` overriding it (the process, wrapped: awaiting it would wait for its end). */
async function runUnit(lines: Record<string, string>) {
  const envFile = join(dirname(projectDir), "env");
  await writeFile(
    envFile,
    Object.entries(lines)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
    {
      mode: 0o600, // root's: systemd reads it before the server starts, the server's user cannot
    },
  );
  const fileLines = (await readFile(envFile, "utf8")).split("\n").filter(Boolean);
  const [program, ...args] = service("ExecStart")[0]!.split(" ");
  const command = [existsSync(program!) ? program! : process.execPath, ...args];
  const workingDirectory = service("WorkingDirectory")[0]!;
  expect(workingDirectory).toMatch(/^\/srv\/[\w.-]+$/);
  const env = {
    PATH: SYSTEMD_PATH,
    ...environment(service("Environment")),
    ...environment(fileLines),
  };
  const options = {
    env,
    extendEnv: false,
    reject: false,
    all: true,
    forceKillAfterDelay: 2000,
  } as const;
  const child = sandboxed
    ? execa(
        "unshare",
        ["-m", "sh", SANDBOX, projectDir, basename(workingDirectory), workDir, ...command],
        options,
      )
    : execa(command[0]!, command.slice(1), {
        ...options,
        cwd: projectDir,
        ...(asRoot && { uid: UNPRIVILEGED, gid: UNPRIVILEGED }),
      });
  return { child };
}

const settings = {
  ...chainPayment(PAYEE),
  X402_FACILITATOR_URL: chain.facilitatorUrl,
  PORT: "0", // the EnvironmentFile's line wins over the unit's PORT
};

describe("deploy/agent.service's command line, environment and exit codes", () => {
  it("starts on the unit's HOST as an unprivileged user, answers /health, and drains to exit 0 on KillSignal", async () => {
    if (!asRoot) console.log("not root: the server runs as this user, not as an unprivileged one");
    const { child } = await runUnit(settings);
    let output = "";
    child.all!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening:\n${output}`)), 30_000);
      child.all!.on("data", () => {
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (m) resolve((clearTimeout(timer), m[1]!));
      });
      void child.then(() => reject(new Error(`exited before listening:\n${output}`)));
    });
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status, await health.text()).toBe(200);
    if (asRoot) {
      const ps = await execa("ps", ["-o", "uid=", "-p", String(child.pid)]);
      expect(Number(ps.stdout.trim())).toBe(UNPRIVILEGED);
    }
    // In the sandbox, the server runs from the unit's WorkingDirectory.
    if (sandboxed)
      expect(await readlink(`/proc/${child.pid}/cwd`)).toBe(service("WorkingDirectory")[0]);

    const signal = service("KillSignal")[0] as NodeJS.Signals;
    const started = Date.now();
    child.kill(signal);
    const result = await child;
    expect(result.exitCode, output).toBe(0);
    expect(Date.now() - started).toBeLessThan(Number(service("TimeoutStopSec")[0]) * 1000);
    expect(output).toMatch(new RegExp(`${signal} received`));
  }, 60_000);

  it("a facilitator that does not answer exits 75, which the unit restarts; a wrong configuration exits 1, which it does not", async () => {
    const prevented = service("RestartPreventExitStatus");
    expect(service("Restart")).toEqual(["on-failure"]);

    const down = await closedUrl();
    const transient = await (await runUnit({ ...settings, X402_FACILITATOR_URL: down })).child;
    expect(transient.exitCode, transient.all).toBe(75);
    expect(transient.all).toContain("Cannot start yet");
    expect(prevented).not.toContain("75");

    const wrong = await (await runUnit({ ...settings, PAY_TO: "not-an-address" })).child;
    expect(wrong.exitCode, wrong.all).toBe(1);
    expect(wrong.all).toContain("PAY_TO");
    expect(prevented).toContain("1");
  }, 60_000);
});
