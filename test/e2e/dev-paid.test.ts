// `npm run dev:paid` in a generated project: it starts its own anvil with Circle's USDC at Base Sepolia's address,
// funds a test payer and serves in production mode; the `npm run call` command it prints pays (balances read on
// chain move by the price), and Ctrl-C (SIGINT to the terminal's process group) leaves no process behind.
// A project without the `onchain` feature settles through the official x402 facilitator that dev:paid runs on
// 127.0.0.1 (the server gets X402_FACILITATOR_URL, no RPC URL or settler key); one with it settles directly.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { appendFile, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
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
  // Only if a test failed before its Ctrl-C: the group may hold anvil and the server.
  killGroup("SIGKILL");
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

function killGroup(signal: NodeJS.Signals) {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Process ids and command lines still in process group `pgid`. */
async function groupMembers(pgid: number): Promise<string[][]> {
  const ps = await execa("ps", ["-e", "-o", "pid=,pgid=,args="], { reject: false });
  return ps.stdout
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group]) => Number(group) === pgid);
}

/** The project's package.json with `features` as its recorded optional features (the `onchain` one or not). */
async function recordFeatures(edit: (features: string[]) => string[]) {
  const file = join(projectDir, "package.json");
  const pkg = JSON.parse(await readFile(file, "utf8")) as { createAgent: { features: string[] } };
  pkg.createAgent.features = edit(pkg.createAgent.features.filter((f) => f !== "onchain"));
  await writeFile(file, `${JSON.stringify(pkg, null, 2)}\n`);
}

/** `npm run dev:paid` in its own process group (as a terminal runs it), once it has printed its instructions. */
async function startDevPaid() {
  const port = await freePort();
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
  const balance = (address: `0x${string}`) => usdcBalance(rpcUrl!, BASE_SEPOLIA_USDC, address);
  return {
    output: () => output,
    rpcUrl: rpcUrl!,
    payer: payer!,
    payee: payee!,
    command: command!,
    balance,
    /** The environment the server was started with (its tsx process's, read from /proc). */
    serverEnv: async () => {
      const members = await groupMembers(child!.pid!);
      const tsx = members.find((args) => args.slice(2).join(" ").includes("watch src/server.ts"));
      expect(tsx, members.map((m) => m.join(" ")).join("\n")).toBeDefined();
      return Object.fromEntries(
        readFileSync(`/proc/${tsx![0]}/environ`, "utf8")
          .split("\0")
          .filter((entry) => entry.includes("="))
          .map((entry) => [
            entry.slice(0, entry.indexOf("=")),
            entry.slice(entry.indexOf("=") + 1),
          ]),
      ) as Record<string, string>;
    },
    /** Runs the printed call command: it pays the price once (payer -0.01 USDC, payee +0.01 USDC). */
    paysOnce: async () => {
      const [payerBefore, payeeBefore] = [await balance(payer!), await balance(payee!)];
      expect(payerBefore).toBeGreaterThan(0n);
      const call = await execa("sh", ["-c", command!], {
        cwd: projectDir,
        reject: false,
        all: true,
      });
      expect(call.exitCode, call.all).toBe(0);
      expect(call.all).toContain("paid 0.01 USDC on eip155:84532");
      expect(call.all).toMatch(/0x[0-9a-f]{64}/); // the settlement transaction
      expect(await balance(payee!)).toBe(payeeBefore + 10_000n);
      expect(await balance(payer!)).toBe(payerBefore - 10_000n);
      return { payeeBefore };
    },
    /** Ctrl-C to the whole group: nothing of it may remain, and the chain no longer answers. */
    ctrlC: async () => {
      const pgid = child!.pid!;
      process.kill(-pgid, "SIGINT");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      // Give the group's last members a moment to go, then nothing of it may remain.
      for (let i = 0; i < 50 && (await groupMembers(pgid)).length > 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await groupMembers(pgid)).toEqual([]);
      await expect(fetch(rpcUrl!, { method: "POST", body: "{}" })).rejects.toThrow();
    },
  };
}

it("without the onchain feature: settles through the official facilitator it runs on 127.0.0.1; the printed call pays on its local chain; Ctrl-C stops everything", async () => {
  await recordFeatures((features) => features);
  // A facilitator the user set is not the one dev:paid uses: it is replaced, and said so.
  await appendFile(
    join(projectDir, ".env"),
    "\nX402_FACILITATOR_URL=https://x402.org/facilitator\n",
  );
  const run = await startDevPaid();
  const output = run.output();
  expect(output).toContain("PUBLIC test key");
  expect(output).toMatch(/chain id 84532/);
  expect(output).toContain(
    "dev:paid: ignoring X402_FACILITATOR_URL from .env: the local loop settles only on its own chain",
  );
  // The server settles only through dev:paid's own facilitator: no RPC URL, no settler key of its own.
  const env = await run.serverEnv();
  expect({
    facilitator: env.X402_FACILITATOR_URL,
    rpc: env.X402_RPC_URL ?? "",
    settlerKey: env.X402_SETTLER_KEY ?? "",
  }).toEqual({
    facilitator: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    rpc: "",
    settlerKey: "",
  });
  const facilitatorUrl = env.X402_FACILITATOR_URL!;
  expect(output).toContain(
    `Settlement: the official x402 facilitator (@x402/core, @x402/evm) run by dev:paid at ${facilitatorUrl}`,
  );
  const supported = (await (await fetch(`${facilitatorUrl}/supported`)).json()) as {
    kinds: Array<{ network: string }>;
  };
  expect(supported.kinds.map((k) => k.network)).toContain("eip155:84532");

  const { payeeBefore } = await run.paysOnce();

  // The seller's smoke check of this running project, told the payee and network dev:paid uses (its .env has
  // no PAY_TO): every check passes, and --pay runs one more paid job on the local chain (a testnet's id).
  const agentUrl = /AGENT_URL=(\S+)/.exec(run.command)![1]!;
  const payerKey = /X402_PAYER_KEY=(0x[0-9a-f]{64})/.exec(run.command)![1]!;
  const smoke = await execa(
    "npm",
    ["run", "smoke", "--", agentUrl, "--pay-to", run.payee, "--network", "base-sepolia", "--pay"],
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
  expect(await run.balance(run.payee)).toBe(payeeBefore + 20_000n);

  await run.ctrlC();
  await expect(fetch(`${facilitatorUrl}/supported`)).rejects.toThrow();
});

it("with the onchain feature: the server settles directly on the local chain (X402_RPC_URL, X402_SETTLER_KEY), as before", async () => {
  await recordFeatures((features) => [...features, "onchain"]);
  const run = await startDevPaid();
  expect(run.output()).toContain("Settlement: by the server itself (the onchain feature)");
  const env = await run.serverEnv();
  expect(env.X402_RPC_URL).toBe(run.rpcUrl);
  expect(env.X402_SETTLER_KEY).toMatch(/^0x[0-9a-f]{64}$/);
  expect(env.X402_FACILITATOR_URL ?? "").toBe("");
  await run.paysOnce();
  await run.ctrlC();
});
