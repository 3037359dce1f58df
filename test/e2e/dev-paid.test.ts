// `npm run dev:paid` in a generated project: it starts its own anvil with Circle's USDC at Base Sepolia's address,
// funds a test payer and serves in production mode; the `npm run call` command it prints pays (balances read on
// chain move by the price), and Ctrl-C (SIGINT to the terminal's process group) leaves no process behind.
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { BASE_SEPOLIA_USDC, usdcBalance } from "../chain/usdc.js";
import { freePort } from "../runtime/servers.js";
import { copyProject } from "./helpers.js";

const shared = inject("projectDir");
let projectDir = "";
let child: ChildProcess | undefined;

beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-dev-paid-");
});
afterAll(async () => {
  // Only if the test failed before its Ctrl-C: the group may hold anvil and the server.
  if (child?.pid && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

/** Process ids still in process group `pgid`. */
async function groupMembers(pgid: number): Promise<string[]> {
  const ps = await execa("ps", ["-e", "-o", "pid=,pgid=,args="], { reject: false });
  return ps.stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group]) => Number(group) === pgid)
    .map((parts) => parts.join(" "));
}

it("prints a call command that pays on its local chain, and Ctrl-C stops server and chain", async () => {
  const port = await freePort();
  // Its own process group, as a terminal runs it: Ctrl-C sends SIGINT to the whole group.
  child = spawn("npm", ["run", "dev:paid"], {
    cwd: projectDir,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", PORT: String(port) },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child!.once("exit", (code) => resolve(code)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`dev:paid printed no instructions in 120 s:\n${output}`)),
      120_000,
    );
    const poll = setInterval(() => {
      if (output.includes("Ctrl-C stops the server and the chain.")) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }
    }, 100);
    void exited.then(() => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`dev:paid exited early:\n${output}`));
    });
  });

  const rpcUrl = /Local chain: (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
  const payer = /Payer: +(0x[0-9a-fA-F]{40})/.exec(output)?.[1] as `0x${string}` | undefined;
  const payee = /Payee: +(0x[0-9a-fA-F]{40})/.exec(output)?.[1] as `0x${string}` | undefined;
  const command =
    /^ {2}(AGENT_URL=\S+ X402_PAYER_KEY=0x[0-9a-f]{64} npm run call -- summarize .*)$/m.exec(
      output,
    )?.[1];
  expect({ rpcUrl, payer, payee, command }, output).toEqual({
    rpcUrl: expect.any(String),
    payer: expect.any(String),
    payee: expect.any(String),
    command: expect.any(String),
  });
  expect(output).toContain("PUBLIC test key");
  expect(output).toMatch(/chain id 84532/);

  const balance = (address: `0x${string}`) => usdcBalance(rpcUrl!, BASE_SEPOLIA_USDC, address);
  const [payerBefore, payeeBefore] = [await balance(payer!), await balance(payee!)];
  expect(payerBefore).toBeGreaterThan(0n);
  const call = await execa("sh", ["-c", command!], { cwd: projectDir, reject: false, all: true });
  expect(call.exitCode, call.all).toBe(0);
  expect(call.all).toContain("paid 0.01 USDC on eip155:84532");
  expect(await balance(payee!)).toBe(payeeBefore + 10_000n);
  expect(await balance(payer!)).toBe(payerBefore - 10_000n);

  // The seller's smoke check of this running project, told the payee and network dev:paid uses (its .env has
  // no PAY_TO): every check passes, and --pay runs one more paid job on the local chain (a testnet's id).
  const agentUrl = /AGENT_URL=(\S+)/.exec(command!)![1]!;
  const payerKey = /X402_PAYER_KEY=(0x[0-9a-f]{64})/.exec(command!)![1]!;
  const smoke = await execa(
    "npm",
    ["run", "smoke", "--", agentUrl, "--pay-to", payee!, "--network", "base-sepolia", "--pay"],
    {
      cwd: projectDir,
      reject: false,
      all: true,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/root",
        X402_PAYER_KEY: payerKey,
      },
      extendEnv: false,
    },
  );
  expect(smoke.exitCode, smoke.all).toBe(0);
  expect(smoke.all).toMatch(/^ok +402 offer base-sepolia \(eip155:84532\) v2 payTo: /m);
  expect(smoke.all).toMatch(/^ok +paid job: summarize paid 0\.01 USDC on eip155:84532/m);
  expect(await balance(payee!)).toBe(payeeBefore + 20_000n);

  const pgid = child.pid!;
  process.kill(-pgid, "SIGINT");
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  // Give the group's last members a moment to go, then nothing of it may remain.
  for (let i = 0; i < 50 && (await groupMembers(pgid)).length > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await groupMembers(pgid)).toEqual([]);
  await expect(fetch(rpcUrl!, { method: "POST", body: "{}" })).rejects.toThrow();
});
