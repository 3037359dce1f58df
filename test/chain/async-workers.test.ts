// Async paid jobs across processes, on real parts: two web processes (WORKER=off) and two worker
// processes (`--worker`, as `npm run worker` runs them) on one Debian redis-server (BullMQ and the
// payment ledger), anvil with Circle's FiatTokenV2_2, direct settlement, the official @x402/fetch
// client. The runtime is compiled with a one-capability service (async-processes.ts) into a temporary
// project. SIGKILL of the worker running a job: the other worker takes it over (BullMQ's stalled-job
// recovery) and finishes it; the handler ran twice, the payer is charged once. SIGKILL of the only
// worker: the job is answered as failed once its deadline passed, nothing charged. SIGTERM of a worker
// running a job: the job finishes there, the worker exits, and takes no new job.
import type { ChildProcess } from "node:child_process";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { job, nowSeconds } from "../runtime/helpers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { PAYEE } from "./accounts.js";
import {
  type AsyncProcesses,
  exited,
  paying,
  SLOW_PRICE as PRICE,
  startAsyncProcesses,
} from "./async-processes.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";

const { rpcUrl } = inject("chain");

let redis: RedisServer;
let asset: `0x${string}`;
let processes: AsyncProcesses;
let webUrls: string[] = [];
let workers: ChildProcess[] = [];
const runs = () => processes.runs();

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  processes = await startAsyncProcesses({
    rpcUrl,
    redisUrl: redis.url,
    webs: 2,
    workers: 2,
    // Each process its own metrics listener (an ephemeral port): a worker counts the jobs it ran.
    env: { METRICS_PORT: "0" },
    workerHealth: true,
  });
  ({ webUrls, workers } = processes);
}, 120_000);

afterAll(async () => {
  await processes?.close();
  await redis?.stop();
});

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

describe("a worker's health (WORKER_HEALTH_PORT, what its container's check asks)", () => {
  it("GET /health, the app's own check (its ledger, so its Redis, and settlement routes): 200; nothing else is served", async () => {
    const url = processes.workerHealthUrls[0]!;
    const health = () => fetch(`${url}/health`);
    expect((await health()).status).toBe(200);
    const other = await fetch(`${url}/execute`, { method: "POST", body: "{}" });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: "a worker answers GET /health only" });
  }, 30_000);
});

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
    // The survivor serves GET /metrics on METRICS_PORT: the job it completed and settled is counted there.
    const metricsUrl = /metrics on (http:\S+\/metrics)/.exec(processes.output(survivor))?.[1];
    expect(metricsUrl, processes.output(survivor)).toBeDefined();
    const metrics = await (await fetch(metricsUrl!)).text();
    expect(metrics).toMatch(/^agent_jobs_total\{capability="slow",outcome="completed"\} 1$/m);
    expect(metrics).toMatch(
      /^agent_settlements_total\{capability="slow",result="settled",network="eip155:84532"\} 1$/m,
    );
    workers = [survivor];
  }, 90_000);

  it("SIGKILL of the only worker running a job: 'running' until its deadline and JOB_LOCK_SECONDS passed with no worker, then failed (408 deadline), nothing charged; a worker started later keeps it failed", async () => {
    const [victim] = workers;
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await usdcBalance(rpcUrl, asset, payer.address);
    const deadline = nowSeconds() + 8;
    const { location, token } = await submit(payer, job("slow", { ms: 60_000 }, { deadline }));
    expect(await runningOn(runs().length + 1)).toBe(victim!.pid);
    victim!.kill("SIGKILL");
    await exited(victim!);
    const poll = async () => {
      const res = await fetch(`${webUrls[0]}${location}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return {
        status: res.status,
        jobStatus: res.headers.get("job-status"),
        body: await res.json(),
      };
    };
    expect(await poll()).toMatchObject({ status: 200, jobStatus: "running" });
    const failed = await finished(location, token, 45_000);
    // Not before the deadline and the lock (2 s here) have passed, and no worker counts any more.
    expect(nowSeconds()).toBeGreaterThanOrEqual(deadline + 2);
    expect(failed.status).toBe(408);
    expect(failed.headers.get("job-status")).toBe("failed");
    expect(failed.body).toMatchObject({ error_type: "deadline" });
    expect(failed.body.error).toMatch(/no worker is running.*nothing was charged/);
    expect(await usdcBalance(rpcUrl, asset, payer.address)).toBe(before);

    // A worker started now takes the stalled job back (BullMQ) and refuses it: its deadline passed.
    const count = runs().length;
    workers = [await processes.startWorker()];
    await new Promise((r) => setTimeout(r, 5_000)); // its stalled-job check (every 2 s here)
    expect(await poll()).toMatchObject({ status: 408, jobStatus: "failed" });
    expect(runs()).toHaveLength(count); // the handler did not run again
    expect(await usdcBalance(rpcUrl, asset, payer.address)).toBe(before);
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
