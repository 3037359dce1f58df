// Async paid jobs across processes, on real parts: two web processes (WORKER=off) and two worker
// processes (`--worker`, as `npm run worker` runs them) on one Debian redis-server (BullMQ and the
// payment ledger), anvil with Circle's FiatTokenV2_2, direct settlement, the official @x402/fetch
// client. The runtime is compiled with a one-capability service (SERVICE below) into a temporary
// project. SIGKILL of the worker running a job: the other worker takes it over (BullMQ's stalled-job
// recovery) and finishes it; the handler ran twice, the payer is charged once. SIGTERM of a worker
// running a job: the job finishes there, the worker exits, and takes no new job.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { job, nowSeconds } from "../runtime/helpers.js";
import { healthUntil } from "../runtime/servers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";

const root = new URL("../..", import.meta.url).pathname;
const { rpcUrl } = inject("chain");
const PRICE = 10_000n;

/** The service every process runs: `slow` appends its pid to RUNS_FILE when it starts. */
const SERVICE = `
import { appendFileSync } from "node:fs";
import { inputAjv, outputAjv } from "./runtime/ajv.js";
import { startServer, startWorker } from "./runtime/server.js";
import type { AgentDefinition } from "./runtime/types.js";
const object = (field: string, type: string) => ({ type: "object", additionalProperties: false, required: [field], properties: { [field]: { type } } });
const agent: AgentDefinition = {
  name: "async-workers",
  version: "1.0.0",
  capabilities: {
    slow: {
      name: "slow",
      declaration: {
        description: "waits input.ms",
        pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
        input_schema: { ms: { type: "integer", required: true } },
        output_schema: { text: { type: "string" } },
      },
      priceAtomic: "10000",
      validateInput: inputAjv.compile(object("ms", "integer")),
      validateOutput: outputAjv.compile(object("text", "string")),
      handler: async (input: unknown) => {
        appendFileSync(process.env.RUNS_FILE!, process.pid + "\\n");
        await new Promise((resolve) => setTimeout(resolve, (input as { ms: number }).ms));
        return { text: "done by " + process.pid };
      },
    },
  },
};
if (process.argv.includes("--worker")) await startWorker(agent);
else await startServer(agent);
`;

let dir: string;
let redis: RedisServer;
let asset: `0x${string}`;
const children: ChildProcess[] = [];
const output = new Map<ChildProcess, string>();
let webUrls: string[] = [];
let workers: ChildProcess[] = [];
let runsFile: string;

/** The runtime and SERVICE compiled into a temporary project (node_modules linked to the repo's). */
async function compile(): Promise<void> {
  mkdirSync(join(root, ".tmp"), { recursive: true }); // inside the repo: node_modules resolves
  dir = mkdtempSync(join(root, ".tmp/async-workers-"));
  cpSync(join(root, "templates/runtime"), join(dir, "src/runtime"), { recursive: true });
  writeFileSync(join(dir, "src/main.ts"), SERVICE);
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  const base = JSON.parse(
    readFileSync(join(root, "templates/project/tsconfig.json"), "utf8").replace(
      /^\s*\/\/.*$/gm,
      "",
    ),
  );
  const compilerOptions = {
    ...base.compilerOptions,
    noEmit: false,
    incremental: false,
    tsBuildInfoFile: undefined,
    rootDir: "src",
    outDir: "dist",
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"] }));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  await promisify(execFile)(process.execPath, [
    join(root, "node_modules/typescript/bin/tsc"),
    "-p",
    dir,
  ]);
}

function start(env: Record<string, string>, args: string[] = []): ChildProcess {
  const child = spawn(process.execPath, [join(dir, "dist/main.js"), ...args], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      PAY_TO: PAYEE,
      X402_NETWORK: "base-sepolia",
      X402_RPC_URL: rpcUrl,
      X402_SETTLER_KEY: SETTLER_KEY,
      REDIS_URL: redis.url,
      JOB_LOCK_SECONDS: "2",
      WORKER_CONCURRENCY: "1",
      RUNS_FILE: runsFile,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  output.set(child, "");
  const keep = (chunk: Buffer) => output.set(child, output.get(child)! + chunk.toString());
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  children.push(child);
  return child;
}

/** Resolves once `child` printed something matching `pattern` (within `ms`). */
async function printed(child: ChildProcess, pattern: RegExp, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!pattern.test(output.get(child)!)) {
    if (child.exitCode !== null || Date.now() > until)
      throw new Error(`no ${pattern} from the process:\n${output.get(child)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code)),
  );

const runs = (): number[] => readFileSync(runsFile, "utf8").split("\n").filter(Boolean).map(Number);

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  await compile();
  mkdirSync(join(dir, "runs"));
  runsFile = join(dir, "runs/pids");
  writeFileSync(runsFile, "");
  const ports = [0, 1].map(() => 20_000 + Math.floor(Math.random() * 20_000));
  const webs = ports.map((port) => start({ PORT: String(port), WORKER: "off" }));
  workers = [start({}, ["--worker"]), start({}, ["--worker"])];
  await Promise.all(webs.map((web) => printed(web, /listening on/)));
  webUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  for (const url of webUrls) expect((await healthUntil(url, (s) => s === 200)).status).toBe(200);
  await Promise.all(workers.map((w) => printed(w, /job worker: up to 1 async jobs/)));
}, 120_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const paying = (payer: PrivateKeyAccount) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer))),
  );

async function submit(payer: PrivateKeyAccount, body: unknown) {
  const res = await paying(payer)(`${webUrls[0]}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  expect(res.status, JSON.stringify(json)).toBe(202);
  return { location: res.headers.get("location")!, token: json.job_token as string };
}

async function finished(location: string, token: string, ms = 60_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await fetch(`${webUrls[1]}${location}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as any;
    if (!(res.status === 200 && ["queued", "running"].includes(body.status)))
      return { status: res.status, body, headers: res.headers };
    if (Date.now() > until) throw new Error(`still ${body.status} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function runningOn(count: number): Promise<number> {
  const until = Date.now() + 30_000;
  while (runs().length < count) {
    if (Date.now() > until) throw new Error("the job never started");
    await new Promise((r) => setTimeout(r, 50));
  }
  return runs()[count - 1]!;
}

describe("two web and two worker processes on one Redis", () => {
  it("SIGKILL of the worker running a job: the other worker finishes it; charged once", async () => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const [payerBefore, payeeBefore] = [
      await usdcBalance(rpcUrl, asset, payer.address),
      await usdcBalance(rpcUrl, asset, PAYEE),
    ];
    const { location, token } = await submit(
      payer,
      job("slow", { ms: 5000 }, { deadline: nowSeconds() + 120 }),
    );
    const first = await runningOn(1);
    const victim = workers.find((w) => w.pid === first)!;
    expect(victim).toBeDefined();
    victim.kill("SIGKILL");
    await exited(victim);
    expect(await usdcBalance(rpcUrl, asset, payer.address)).toBe(payerBefore);

    const done = await finished(location, token);
    expect(done.status).toBe(200);
    const survivor = workers.find((w) => w !== victim)!;
    expect(done.body).toMatchObject({
      status: "completed",
      output: { text: `done by ${survivor.pid}` },
    });
    expect(done.headers.get("payment-response")).toBeTruthy();
    expect(runs()).toEqual([victim.pid, survivor.pid]); // the handler ran twice
    expect(await usdcBalance(rpcUrl, asset, payer.address)).toBe(payerBefore - PRICE); // charged once
    expect(await usdcBalance(rpcUrl, asset, PAYEE)).toBe(payeeBefore + PRICE);
    workers = [survivor];
  }, 90_000);

  it("SIGTERM of a worker running a job: the job finishes there and is charged; the worker exits", async () => {
    const [worker] = workers;
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await usdcBalance(rpcUrl, asset, payer.address);
    const { location, token } = await submit(
      payer,
      job("slow", { ms: 2000 }, { deadline: nowSeconds() + 120 }),
    );
    const count = runs().length + 1;
    expect(await runningOn(count)).toBe(worker!.pid);
    worker!.kill("SIGTERM");
    expect(await exited(worker!)).toBe(0);
    const done = await finished(location, token);
    expect(done.body).toMatchObject({
      status: "completed",
      output: { text: `done by ${worker!.pid}` },
    });
    expect(await usdcBalance(rpcUrl, asset, payer.address)).toBe(before - PRICE);
    expect(runs()).toHaveLength(count);
  }, 90_000);
});
