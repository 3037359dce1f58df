// Valid paid jobs per CPU-second, settlement excluded, against the floor any x402 server pays per job: viem's
// recoverTypedDataAddress over the same signatures, in a loop.
//   ours: one app process (templates/runtime compiled alone, production mode, in-memory ledger, the default
//         logger writing its lines to stdout, drained by this process), answering real paid jobs: each
//         a distinct EIP-3009 authorization signed before measuring, decoded, checked (signature, payee,
//         amount, time window), reserved, run (an echo), "settled" by a settler that costs nothing, and
//         marked spent. Each window starts on a fresh app (fresh ledger), so the pool is reused across
//         windows but never within one.
//   peer: one process calling viem's recoverTypedDataAddress on the same typed data and signatures.
// Per core: both are single processes; each side's figure is its work divided by the CPU-seconds (user +
// system) of that process alone over the window (the server's from /proc, the peer's from process.cpuUsage),
// so the load generator's CPU is not counted for either. Throughputs: higher is better.
// Run: node bench/paid.mjs. Knobs: RUNS (9 pairs), PAID_BENCH_SECONDS (3), PAID_BENCH_JOBS (pool, 6000),
// PAID_BENCH_CONCURRENCY (16), PAID_BENCH_PAYERS (distinct payer keys the pool cycles through, 1; 0 = a new
// key for every job, so no per-payer work could ever be reused), BENCH_SERVER_ARGS (node flags for the
// server process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median, pairs, report } from "./lib.mjs";
import { compileRuntime, echoAgent, forkWorker, load, workDir } from "./lib-server.mjs";
import { DOMAIN, PAY_TO, PAYER_KEY, PRICE, TYPES } from "./eip3009.mjs";


if (process.argv[2] === "--worker") await worker(process.argv[3]);
else if (process.argv[2] === "--peer") await peer(process.argv[3]);
else await main();

// ---- the server: one app on 127.0.0.1, port 0; IPC {id, type: "reset" | "exit"} -> {id, ok} ----
async function worker(runtimeDir) {
  process.on("disconnect", () => process.exit(0));
  const load = (file) => import(pathToFileURL(join(runtimeDir, file)).href);
  const { createApp } = await load("app.js");
  const { inputAjv, outputAjv } = await load("ajv.js");
  const transaction = `0x${"ab".repeat(32)}`;
  const settler = { settle: async (p) => ({ transaction, network: p.network, payer: p.payer }) };
  const agent = echoAgent({ inputAjv, outputAjv }, PRICE);
  const build = () =>
    // MAX_JOBS_PER_PAYER on (each job takes a payer slot) but above the lanes of one payer: none refused.
    createApp(agent, { env: {}, devMode: false, payment: { payTo: PAY_TO, network: "base-sepolia", settler, maxJobsPerPayer: 1000 } });
  let current = build();
  const server = http.createServer((req, res) => current(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.on("message", (msg) => {
    if (msg.type === "exit") process.exit(0); // lets --cpu-prof (BENCH_SERVER_ARGS) write its profile
    if (msg.type === "reset") current = build();
    process.send({ id: msg.id, ok: true });
  });
  process.send({ id: 0, ok: true, value: server.address().port });
}

// ---- the peer: viem's recoverTypedDataAddress in a loop; IPC {id, seconds} -> {id, ok, value} ----
async function peer(file) {
  process.on("disconnect", () => process.exit(0));
  const { recoverTypedDataAddress } = await import("viem/utils");
  const items = JSON.parse(readFileSync(file, "utf8")).map(({ message, signature }) => ({
    domain: DOMAIN,
    types: TYPES,
    primaryType: "TransferWithAuthorization",
    message: {
      ...message,
      value: BigInt(message.value),
      validAfter: BigInt(message.validAfter),
      validBefore: BigInt(message.validBefore),
    },
    signature,
  }));
  let k = 0;
  process.on("message", async (msg) => {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const until = t0 + msg.seconds * 1000;
    let count = 0;
    while (performance.now() < until) {
      const item = items[k++ % items.length];
      const signer = await recoverTypedDataAddress(item);
      if (signer !== item.message.from) throw new Error(`recovered ${signer}, not ${item.message.from}`);
      count++;
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    process.send({ id: msg.id, ok: true, value: { count, wall, cpu: (cpu.user + cpu.system) / 1e6 } });
  });
  process.send({ id: 0, ok: true });
}

/** Forks this script in `mode`; resolves with the child, an ask() over IPC and the first answer's value. */
function child(mode, arg) {
  const execArgv = mode === "--worker" && process.env.BENCH_SERVER_ARGS ? process.env.BENCH_SERVER_ARGS.split(" ") : [];
  return forkWorker(new URL(import.meta.url).pathname, [mode, arg], execArgv);
}

async function main() {
  const runs = Number(process.env.RUNS ?? 9);
  const seconds = Number(process.env.PAID_BENCH_SECONDS ?? 3);
  const poolSize = Number(process.env.PAID_BENCH_JOBS ?? 6000);
  const concurrency = Number(process.env.PAID_BENCH_CONCURRENCY ?? 16);
  const payerCount = Number(process.env.PAID_BENCH_PAYERS ?? 1);
  const work = workDir("bench-paid");

  let started = performance.now();
  const runtimeDir = compileRuntime(work);
  console.error(`bench: runtime compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // Every authorization signed before anything is measured.
  started = performance.now();
  const { privateKeyToAccount } = await import("viem/accounts");
  const payers =
    payerCount > 0
      ? Array.from({ length: payerCount }, (_, i) =>
          privateKeyToAccount(i === 0 ? PAYER_KEY : `0x${randomBytes(32).toString("hex")}`),
        )
      : undefined;
  const now = Math.floor(Date.now() / 1000);
  const validBefore = String(now + 3600);
  const deadline = now + 3000; // validBefore must cover deadline + 15 s
  const accepted = {
    scheme: "exact",
    network: "eip155:84532",
    amount: PRICE,
    asset: DOMAIN.verifyingContract,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: DOMAIN.name, version: DOMAIN.version },
  };
  const requests = [];
  const signed = [];
  for (let i = 0; i < poolSize; i++) {
    const payer = payers ? payers[i % payers.length] : privateKeyToAccount(`0x${randomBytes(32).toString("hex")}`);
    const message = {
      from: payer.address,
      to: PAY_TO,
      value: PRICE,
      validAfter: "0",
      validBefore,
      nonce: `0x${randomBytes(32).toString("hex")}`,
    };
    const signature = await payer.signTypedData({
      domain: DOMAIN,
      types: TYPES,
      primaryType: "TransferWithAuthorization",
      message: { ...message, value: BigInt(message.value), validAfter: 0n, validBefore: BigInt(validBefore) },
    });
    signed.push({ message, signature });
    const payment = { x402Version: 2, resource: { url: "http://127.0.0.1/execute" }, accepted, payload: { signature, authorization: message } };
    const body = JSON.stringify({
      service_version: "1.0",
      job_id: `bench-${i}`,
      task: { capability: "echo", input: { text: "hello" } },
      deadline,
    });
    requests.push({
      method: "POST",
      path: "/execute",
      body,
      headers: {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "payment-signature": Buffer.from(JSON.stringify(payment)).toString("base64"),
      },
    });
  }
  const signaturesFile = join(work, "signatures.json");
  writeFileSync(signaturesFile, JSON.stringify(signed));
  const signSeconds = (performance.now() - started) / 1000;

  const server = await child("--worker", runtimeDir);
  const recoverer = await child("--peer", signaturesFile);
  const loadStart = loadavg()[0];
  const rows = { ours: [], peer: [] };
  try {
    const ours = async () => {
      await server.ask({ type: "reset" });
      const result = await load({
        port: server.value,
        pid: server.child.pid,
        concurrency,
        seconds,
        next: (i) => requests[i],
        check: (res) => (res.status === 200 ? undefined : `HTTP ${res.status}: ${res.body.slice(0, 300)}`),
      });
      if (result.errors.length > 0) throw new Error(`paid jobs failed: ${result.errors.join("\n")}`);
      if (result.exhausted) throw new Error("the signed pool ran out within a window: raise PAID_BENCH_JOBS");
      const row = { perCpu: result.perServerCpuSecond, perSecond: result.rps, cpu: result.serverCpu, p99: result.p99 };
      rows.ours.push(row);
      return row.perCpu;
    };
    const theirs = async () => {
      const { count, wall, cpu } = await recoverer.ask({ seconds });
      const row = { perCpu: count / cpu, perSecond: count / wall, cpu };
      rows.peer.push(row);
      return row.perCpu;
    };
    const result = await pairs({ ours, peer: theirs, runs });
    const last = (side, key) => rows[side].slice(-runs).map((r) => r[key]);
    console.log(
      `paid bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
        `${runs} pairs of ${seconds} s windows, ${concurrency} connections; ${poolSize} authorizations from ` +
        `${payerCount > 0 ? `${payerCount} payer(s)` : "a new payer each"} signed in ${signSeconds.toFixed(1)} s`,
    );
    console.log(
      `wall: create-agent median ${median(last("ours", "perSecond")).toFixed(0)} paid jobs/s (p99 ${median(last("ours", "p99")).toFixed(1)} ms, ` +
        `server CPU ${median(last("ours", "cpu")).toFixed(2)} s per window), recoverTypedDataAddress median ${median(last("peer", "perSecond")).toFixed(0)}/s`,
    );
    const name = payerCount > 0 ? "paid-jobs-per-cpu-second-higher-is-better" : "paid-jobs-new-payers-per-cpu-second-higher-is-better";
    report(name, result, { unit: "/CPU-s", peer: "viem recoverTypedDataAddress" });
  } finally {
    if (process.env.BENCH_SERVER_ARGS) {
      server.child.send({ type: "exit" });
      await new Promise((resolve) => server.child.once("exit", resolve));
    }
    server.child.kill("SIGKILL");
    recoverer.child.kill("SIGKILL");
  }
}
