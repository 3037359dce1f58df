// Valid Solana paid jobs per server CPU-second, settlement excluded, against the official verification any
// Solana x402 server pays per job: @x402/svm's facilitator-side exact scheme `verify` over the same
// transactions, in a loop (issue 17's figure: >= 0.9x).
//   chain: the test kit's Solana runtime (LiteSVM, USDC at devnet's mint) behind its loopback JSON-RPC, in this
//          process: both sides' simulations go to it, and its CPU is counted for neither.
//   ours:  one app process (templates/runtime compiled alone, production mode, in-memory ledger, the default
//          logger writing to stdout, drained here), offering solana-devnet and settling directly
//          (SOLANA_FEE_PAYER_KEY, X402_RPC_URL_SOLANA_DEVNET = the kit): each job carries a distinct payment
//          built by the official @x402/svm client before measuring; it is decoded, checked against the offer
//          and the deadline rule, reserved in the ledger, verified by the official scheme in process
//          (instructions, amounts, simulation on the kit), run (an echo) and marked spent. Settlement is
//          excluded: the official scheme's settle() is replaced in that process by one answering success
//          (no co-signing, no send). Each window starts on a fresh app (fresh ledger).
//   peer:  one process calling the official scheme's verify() (a signer over the same kit) on the same
//          payloads and requirements, in a loop.
// Per core: each side's work over the CPU-seconds of its own process over the window (the server's from
// /proc, the peer's from process.cpuUsage). Throughputs: higher is better.
// Run: npx tsc -p tsconfig.build.json && node bench/svm-paid.mjs
// Knobs: RUNS (9 pairs), SVM_BENCH_SECONDS (3), SVM_BENCH_JOBS (pool, 3000), SVM_BENCH_CONCURRENCY (16),
// BENCH_SERVER_ARGS / BENCH_PEER_ARGS (node flags for either process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
// SVM_BENCH_OWN_COST=1: no ratio; our side alone with the official verify() also answering valid without
// checking (so no simulation either), RUNS windows after one unmeasured: the pipeline's own CPU per job (HTTP,
// checks, transaction read, blockhash clock, ledger, logging), the part of our figure this runtime controls.
// It runs about ten times more jobs per window: raise SVM_BENCH_JOBS or lower SVM_BENCH_SECONDS.
import { execFileSync } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median, pairs, report, root } from "./lib.mjs";
import { compileRuntime, echoAgent, forkWorker, load, workDir } from "./lib-server.mjs";

const NETWORK = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
const PRICE = "10000"; // 0.01 USDC
const scheme = () => import("@x402/svm/exact/facilitator");

if (process.argv[2] === "--worker") await worker(JSON.parse(process.argv[3]));
else if (process.argv[2] === "--peer") await peer(JSON.parse(process.argv[3]));
else await main();

// ---- the server: one app on 127.0.0.1, port 0; IPC {id, type: "reset" | "exit"} -> {id, ok} ----
async function worker({ runtimeDir, rpcUrl, payTo, feePayerKey, ownCost }) {
  process.on("disconnect", () => process.exit(0));
  // Settlement excluded: the official scheme's settle() answers success without co-signing or sending.
  const { ExactSvmScheme } = await scheme();
  ExactSvmScheme.prototype.settle = async function (payload, requirements) {
    return { success: true, transaction: "bench", network: requirements.network, payer: "" };
  };
  // SVM_BENCH_OWN_COST: the official verification answers valid without checking (our own cost alone).
  if (ownCost) ExactSvmScheme.prototype.verify = async () => ({ isValid: true, payer: "bench" });
  const loadRuntime = (file) => import(pathToFileURL(join(runtimeDir, file)).href);
  const { createApp } = await loadRuntime("app.js");
  const { inputAjv, outputAjv } = await loadRuntime("ajv.js");
  const agent = echoAgent({ inputAjv, outputAjv }, PRICE);
  const build = () =>
    // MAX_JOBS_PER_PAYER on (each job takes a payer slot) but above the lanes of one payer: none refused.
    createApp(agent, {
      env: { X402_RPC_URL_SOLANA_DEVNET: rpcUrl },
      devMode: false,
      payment: { networks: ["solana-devnet"], payToSolana: payTo, solanaFeePayerKey: feePayerKey, maxJobsPerPayer: 1000 },
    });
  let current = build();
  const server = http.createServer((req, res) => current(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.on("message", (msg) => {
    if (msg.type === "exit") process.exit(0);
    if (msg.type === "reset") current = build();
    process.send({ id: msg.id, ok: true });
  });
  process.send({ id: 0, ok: true, value: server.address().port });
}

// ---- the peer: the official verify() in a loop; IPC {id, seconds} -> {id, ok, value} ----
async function peer({ file, rpcUrl, feePayerKey }) {
  process.on("disconnect", () => process.exit(0));
  const { ExactSvmScheme } = await scheme();
  const { toFacilitatorSvmSigner } = await import("@x402/svm");
  const kit = await import("@solana/kit");
  const signer = await kit.createKeyPairSignerFromBytes(kit.getBase58Encoder().encode(feePayerKey));
  const verifier = new ExactSvmScheme(
    toFacilitatorSvmSigner(signer, { [NETWORK]: kit.createSolanaRpc(kit.devnet(rpcUrl)) }),
  );
  const items = JSON.parse(readFileSync(file, "utf8"));
  let k = 0;
  process.on("message", async (msg) => {
    if (msg.type === "exit") process.exit(0);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const until = t0 + msg.seconds * 1000;
    let count = 0;
    while (performance.now() < until) {
      const { payload, requirements } = items[k++ % items.length];
      const answer = await verifier.verify(payload, requirements);
      if (!answer.isValid) throw new Error(`official verify refused a payment: ${answer.invalidReason} ${answer.invalidMessage ?? ""}`);
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
  const flags = process.env[mode === "--worker" ? "BENCH_SERVER_ARGS" : "BENCH_PEER_ARGS"];
  return forkWorker(new URL(import.meta.url).pathname, [mode, JSON.stringify(arg)], flags ? flags.split(" ") : []);
}

/** The Solana test kit (test/solana/*.ts), compiled alone into `work` and loaded. */
async function loadKit(work) {
  const out = join(work, "kit");
  const config = join(work, "tsconfig.kit.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(root, "tsconfig.json"),
      compilerOptions: { noEmit: false, noCheck: true, rootDir: root, outDir: out, declaration: false, sourceMap: false, incremental: false },
      include: [],
      files: [join(root, "test/solana/kit.ts")],
    }),
  );
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", config], { cwd: root, stdio: "inherit" });
  symlinkSync(join(root, "node_modules"), join(out, "node_modules"), "dir");
  writeFileSync(join(out, "package.json"), '{ "type": "module" }\n');
  return import(pathToFileURL(join(out, "test/solana/kit.js")).href);
}

async function main() {
  const runs = Number(process.env.RUNS ?? 9);
  const seconds = Number(process.env.SVM_BENCH_SECONDS ?? 3);
  const poolSize = Number(process.env.SVM_BENCH_JOBS ?? 3000);
  const concurrency = Number(process.env.SVM_BENCH_CONCURRENCY ?? 16);
  const work = workDir("bench-svm-paid");

  let started = performance.now();
  const runtimeDir = compileRuntime(work);
  const { startSolanaKit } = await loadKit(work);
  console.error(`bench: runtime and Solana kit compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const kit = await startSolanaKit();
  const payTo = await kit.payee();
  const feePayer = await kit.newAccount();
  const payers = await Promise.all(Array.from({ length: 8 }, () => kit.fundedPayer(1_000_000_000n)));

  // Every payment built by the official client before anything is measured, for the offer our server makes.
  started = performance.now();
  const { x402Client } = await import("@x402/core/client");
  const { ExactSvmScheme: ClientScheme } = await import("@x402/svm/exact/client");
  const clients = payers.map((p) => new x402Client().register(NETWORK, new ClientScheme(p.signer, { rpcUrl: kit.rpcUrl })));
  const requirements = {
    scheme: "exact",
    network: NETWORK,
    amount: PRICE,
    asset: kit.mint,
    payTo,
    maxTimeoutSeconds: 45,
    extra: { feePayer: feePayer.address },
  };
  const resource = { url: "http://127.0.0.1/execute", description: "echoes its text", mimeType: "application/json" };
  const items = [];
  const headers = [];
  for (let i = 0; i < poolSize; i++) {
    const payload = await clients[i % clients.length].createPaymentPayload({ x402Version: 2, resource, accepts: [requirements] });
    items.push({ payload, requirements });
    headers.push(Buffer.from(JSON.stringify(payload)).toString("base64"));
  }
  const itemsFile = join(work, "payments.json");
  writeFileSync(itemsFile, JSON.stringify(items));
  const buildSeconds = (performance.now() - started) / 1000;

  const ownCost = process.env.SVM_BENCH_OWN_COST === "1";
  const server = await child("--worker", { runtimeDir, rpcUrl: kit.rpcUrl, payTo, feePayerKey: feePayer.secretKey, ownCost });
  const verifier = await child("--peer", { file: itemsFile, rpcUrl: kit.rpcUrl, feePayerKey: feePayer.secretKey });
  const loadStart = loadavg()[0];
  const rows = { ours: [], peer: [] };
  // Due in 20 s when sent: a job Solana pays for (due within 30 s).
  const request = (i) => {
    if (i >= poolSize) return undefined;
    const body = JSON.stringify({
      service_version: "1.0",
      job_id: `bench-${i}`,
      task: { capability: "echo", input: { text: "hello" } },
      deadline: Math.floor(Date.now() / 1000) + 20,
    });
    return {
      method: "POST",
      path: "/execute",
      body,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "payment-signature": headers[i] },
    };
  };
  try {
    const ours = async () => {
      await server.ask({ type: "reset" });
      const result = await load({
        port: server.value,
        pid: server.child.pid,
        concurrency,
        seconds,
        next: request,
        check: (res) => (res.status === 200 ? undefined : `HTTP ${res.status}: ${res.body.slice(0, 300)}`),
      });
      if (result.errors.length > 0) throw new Error(`paid jobs failed: ${result.errors.join("\n")}`);
      if (result.exhausted) throw new Error("the payment pool ran out within a window: raise SVM_BENCH_JOBS");
      const row = { perCpu: result.perServerCpuSecond, perSecond: result.rps, cpu: result.serverCpu, p99: result.p99 };
      rows.ours.push(row);
      return row.perCpu;
    };
    const theirs = async () => {
      const { count, wall, cpu } = await verifier.ask({ seconds });
      const row = { perCpu: count / cpu, perSecond: count / wall, cpu };
      rows.peer.push(row);
      return row.perCpu;
    };
    if (ownCost) return await ownCostOnly(ours, runs, { seconds, concurrency, loadStart });
    const result = await pairs({ ours, peer: theirs, runs });
    const last = (side, key) => rows[side].slice(-runs).map((r) => r[key]);
    console.log(
      `svm paid bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
        `${runs} pairs of ${seconds} s windows, ${concurrency} connections; ${poolSize} payments from ${payers.length} payers built in ${buildSeconds.toFixed(1)} s`,
    );
    console.log(
      `wall: create-agent median ${median(last("ours", "perSecond")).toFixed(0)} paid jobs/s (p99 ${median(last("ours", "p99")).toFixed(1)} ms, ` +
        `server CPU ${median(last("ours", "cpu")).toFixed(2)} s per window), official verify median ${median(last("peer", "perSecond")).toFixed(0)}/s`,
    );
    report("svm-paid-jobs-per-cpu-second-higher-is-better", result, { unit: "/CPU-s", peer: "@x402/svm exact verify" });
  } finally {
    if (process.env.BENCH_SERVER_ARGS || process.env.BENCH_PEER_ARGS) {
      // lets --cpu-prof write its profiles
      for (const c of [server.child, verifier.child]) c.send({ type: "exit" });
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    server.child.kill("SIGKILL");
    verifier.child.kill("SIGKILL");
    await kit.close();
  }
}

/** SVM_BENCH_OWN_COST: our side alone (the official verify() stubbed), one unmeasured window, then `runs`. */
async function ownCostOnly(ours, runs, { seconds, concurrency, loadStart }) {
  await ours();
  const rates = [];
  for (let i = 0; i < runs; i++) rates.push(await ours());
  console.log(
    `svm paid bench, own cost (official verify stubbed): ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ` +
      `${loadavg()[0].toFixed(2)} at end; ${runs} windows of ${seconds} s, ${concurrency} connections`,
  );
  const sorted = [...rates].sort((a, b) => a - b);
  console.log(
    `own cost: median ${median(rates).toFixed(0)} paid jobs/CPU-s (${sorted[0].toFixed(0)}..${sorted.at(-1).toFixed(0)}), ` +
      `${(1e6 / median(rates)).toFixed(0)} us of server CPU per job`,
  );
}
