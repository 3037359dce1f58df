// Async paid jobs across processes, as a deployment runs them: the runtime and a one-capability service
// (SLOW_SERVICE) compiled into a temporary project, then web processes (`node dist/main.js`, WORKER=off)
// and worker processes (`--worker`, as `npm run worker` runs them) on one redis-server, paying on the
// chain test's anvil (Base Sepolia's USDC, direct settlement). Shared by the chain tests that start them.
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
import { expect } from "vitest";
import { freePort, healthUntil } from "../runtime/servers.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";

const root = new URL("../..", import.meta.url).pathname;

/** The price of SLOW_SERVICE's `slow` (0.01 USDC). */
export const SLOW_PRICE = 10_000n;

/**
 * The service every process runs: `slow` waits input.ms, then answers which process ran it; when
 * RUNS_FILE is set, it appends its pid there as it starts.
 */
export const SLOW_SERVICE = `
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
        if (process.env.RUNS_FILE) appendFileSync(process.env.RUNS_FILE, process.pid + "\\n");
        await new Promise((resolve) => setTimeout(resolve, (input as { ms: number }).ms));
        return { text: "done by " + process.pid };
      },
    },
  },
};
if (process.argv.includes("--worker")) await startWorker(agent);
else await startServer(agent);
`;

/** The runtime and `service` compiled into a temporary project (node_modules linked to the repo's). */
async function compile(service: string): Promise<string> {
  mkdirSync(join(root, ".tmp"), { recursive: true }); // inside the repo: node_modules resolves
  const dir = mkdtempSync(join(root, ".tmp/async-workers-"));
  cpSync(join(root, "templates/runtime"), join(dir, "src/runtime"), { recursive: true });
  writeFileSync(join(dir, "src/main.ts"), service);
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
  return dir;
}

export interface AsyncProcesses {
  /** The compiled project's folder. */
  dir: string;
  /** Web instances' base URLs (http://127.0.0.1:<port>). */
  webUrls: string[];
  webs: ChildProcess[];
  workers: ChildProcess[];
  /** Each worker's GET /health base URL (with workerHealth). */
  workerHealthUrls: string[];
  /** The process ids of the `slow` runs so far, in order (each appends its own to RUNS_FILE). */
  runs(): number[];
  /** Everything `child` printed so far (stdout and stderr). */
  output(child: ChildProcess): string;
  /** Resolves once `child` printed something matching `pattern` (within `ms`). */
  printed(child: ChildProcess, pattern: RegExp, ms?: number): Promise<void>;
  /** Starts one more worker process; resolves once it takes jobs. */
  startWorker(): Promise<ChildProcess>;
  /** SIGKILLs every process still running and removes the project. */
  close(): Promise<void>;
}

export interface AsyncProcessOptions {
  rpcUrl: string;
  redisUrl: string;
  webs: number;
  workers: number;
  /** Added to every process's environment (undefined: removed from it). */
  env?: Record<string, string | undefined>;
  /** Each worker answers GET /health on a port of its own (WORKER_HEALTH_PORT): workerHealthUrls. */
  workerHealth?: boolean;
  service?: string;
}

/** Compiles the service, starts the web and worker processes, and resolves once all are ready. */
export async function startAsyncProcesses(o: AsyncProcessOptions): Promise<AsyncProcesses> {
  const dir = await compile(o.service ?? SLOW_SERVICE);
  const runsFile = join(dir, "runs");
  writeFileSync(runsFile, "");
  const runs = () => readFileSync(runsFile, "utf8").split("\n").filter(Boolean).map(Number);
  const children: ChildProcess[] = [];
  const output = new Map<ChildProcess, string>();
  const start = (env: Record<string, string>, args: string[] = []): ChildProcess => {
    const child = spawn(process.execPath, [join(dir, "dist/main.js"), ...args], {
      cwd: dir,
      env: withoutUnset({
        PATH: process.env.PATH,
        PAY_TO: PAYEE,
        X402_NETWORK: "base-sepolia",
        X402_RPC_URL: o.rpcUrl,
        X402_SETTLER_KEY: SETTLER_KEY,
        REDIS_URL: o.redisUrl,
        RUNS_FILE: runsFile,
        JOB_LOCK_SECONDS: "2",
        WORKER_CONCURRENCY: "1",
        ...o.env,
        ...env,
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    output.set(child, "");
    const keep = (chunk: Buffer) => output.set(child, output.get(child)! + chunk.toString());
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    children.push(child);
    return child;
  };
  const printed = async (child: ChildProcess, pattern: RegExp, ms = 30_000): Promise<void> => {
    const until = Date.now() + ms;
    while (!pattern.test(output.get(child)!)) {
      if (child.exitCode !== null || Date.now() > until)
        throw new Error(`no ${pattern} from the process:\n${output.get(child)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const close = async () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Webs on ports the system picks (PORT=0), read from their start-up line. A random port once
    // collided with one in use, and "another process is listening on port …" passed for started.
    const webs = Array.from({ length: o.webs }, () => start({ PORT: "0", WORKER: "off" }));
    const healthPorts = await Promise.all(
      Array.from({ length: o.workers }, () => (o.workerHealth ? freePort() : undefined)),
    );
    const workers = healthPorts.map((port) =>
      start(port ? { WORKER_HEALTH_PORT: String(port) } : {}, ["--worker"]),
    );
    const workerHealthUrls = healthPorts.map((port) => `http://127.0.0.1:${port}`);
    await Promise.all(webs.map((web) => printed(web, STARTED)));
    const webUrls = webs.map((web) => `http://127.0.0.1:${STARTED.exec(output.get(web)!)![1]}`);
    for (const url of webUrls) expect((await healthUntil(url, (s) => s === 200)).status).toBe(200);
    await Promise.all(workers.map((w) => printed(w, /job worker: up to \d+ async jobs/)));
    if (o.workerHealth)
      await Promise.all(workers.map((w) => printed(w, /worker health: GET \/health on port/)));
    const outputOf = (child: ChildProcess) => output.get(child)!;
    const startWorker = async () => {
      const worker = start({}, ["--worker"]);
      await printed(worker, /job worker: up to \d+ async jobs/);
      return worker;
    };
    return {
      dir,
      webUrls,
      webs,
      workers,
      workerHealthUrls,
      runs,
      output: outputOf,
      printed,
      startWorker,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A web process's start-up line (server.ts), with the port it listens on. */
const STARTED = / listening on http:\/\/[^\s:]+:(\d+)/;

const withoutUnset = (env: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));

/** Resolves with the exit code once `child` exited. */
export const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code)),
  );

/** The official x402 client (@x402/fetch + @x402/evm) paying as `payer` on Base Sepolia. */
export const paying = (payer: PrivateKeyAccount) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer))),
  );
