// `npm start` must pass SIGTERM on to the server: a platform (Docker, Kubernetes, systemd, a PaaS)
// stops a service by signalling the process it started, which is npm. If the signal stopped at npm
// (or at the shell npm runs scripts through), the server would never shut down gracefully and
// would be left running, orphaned. The generated script is `exec node dist/server.js`, so node
// replaces the shell and npm forwards the signal to it.
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { copyProject, buildProject, spawnCollecting } from "./helpers.js";
import { PAYEE } from "../chain/accounts.js";
import { chain, chainPayment } from "./chain.js";

const shared = inject("projectDir");

let projectDir = "";
const leftovers = new Set<number>();
beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-start-");
  await buildProject(projectDir);
});
afterAll(async () => {
  // Only if the test failed: never leave a server of ours running.
  for (const pid of leftovers) if (alive(pid)) process.kill(pid, "SIGKILL");
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by its parent) is gone for our purposes.
  try {
    return !execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .startsWith("Z");
  } catch {
    return false;
  }
}

/** Every process below `root`, with its command line. */
function descendants(root: number): { pid: number; args: string }[] {
  const table = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const found: { pid: number; args: string }[] = [];
  const parents = [root];
  while (parents.length > 0) {
    const parent = parents.pop()!;
    for (const p of table.filter((row) => row.ppid === parent)) {
      found.push({ pid: p.pid, args: p.args });
      parents.push(p.pid);
    }
  }
  return found;
}

async function waitFor(what: string, limitMs: number, check: () => boolean) {
  const until = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(100);
  }
}

it("SIGTERM to the `npm start` process reaches the server: it shuts down gracefully, nothing is left running, npm exits", async () => {
  const { child: npm, output } = spawnCollecting("npm", ["start"], projectDir, {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    NODE_ENV: "production",
    PORT: "0",
    ...chainPayment(PAYEE),
    X402_FACILITATOR_URL: chain.facilitatorUrl,
  });
  let exited = false;
  void npm.finally(() => (exited = true));
  const npmPid = npm.pid!;
  leftovers.add(npmPid);

  await waitFor(`"listening" in the output of npm start:\n${output()}`, 30_000, () => {
    if (exited) throw new Error(`npm start exited before listening:\n${output()}`);
    return /listening on http:\/\//.test(output());
  });
  const port = /listening on http:\/\/[\w.[\]:-]+:(\d+)/.exec(output())![1];
  expect((await fetch(`http://127.0.0.1:${port}/about`)).status).toBe(200);

  // The server: the node process running dist/server.js somewhere below npm (with `exec`, npm's child).
  const tree = descendants(npmPid);
  const server = tree.find((p) => /(^|\/)node\s+(\S+\s+)*dist\/server\.js\b/.test(p.args));
  expect(
    server,
    `no "node dist/server.js" below npm (${npmPid}): ${JSON.stringify(tree)}`,
  ).toBeDefined();
  leftovers.add(server!.pid);

  process.kill(npmPid, "SIGTERM"); // npm itself, as a platform stopping the service would
  const result = await Promise.race([npm, sleep(20_000).then(() => undefined)]);
  expect(result, `npm start did not exit within 20 s of SIGTERM:\n${output()}`).toBeDefined();
  await waitFor(`the server (pid ${server!.pid}) ending`, 10_000, () => !alive(server!.pid));

  expect(output()).toMatch(/SIGTERM received/);
  expect(output()).toMatch(/"msg":"stopped"/);
  expect(result!.isForcefullyTerminated).toBe(false); // ended by itself, not by our forceKillAfterDelay
  expect(result!.exitCode, output()).toBe(0); // npm passes on the server's clean exit
  // What was still running below npm, beyond the server that already ended: nothing.
  expect(tree.filter((p) => alive(p.pid))).toEqual([]);
});
