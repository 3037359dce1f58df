// Async jobs (the `queue` feature) on BullMQ, against bare BullMQ in the same process layout, on one Debian
// redis-server this script starts (127.0.0.1, a free port, no persistence):
//   ours: a generated project (one capability, `echo`) as one web process (`node dist/server.js`, WORKER=off)
//         and one worker process (`node dist/server.js --worker`, i.e. `npm run worker`), WORKER_CONCURRENCY 4,
//         both on REDIS_URL. Jobs are sent as POST /execute with `Prefer: respond-async` (202 + Location).
//   peer: what a seller would write by hand with BullMQ: one producer process (a bare Express 5 app with
//         express.json() whose POST /execute calls queue.add and answers 202 + Location; GET /jobs/:id reads
//         Job.fromId + getState) and one bare BullMQ Worker process (concurrency 4) whose processor returns
//         the echo. Same bullmq version (the repo's), same job options as ours (attempts, backoff, kept answers).
// DEV MODE (SERVICE_DEV_MODE=true, no payment) on our side: the throughput compared is the queue path, not
// payment verification or settlement (bench/paid.mjs measures those).
//   1. Throughput, enqueue -> completed (higher is better): a batch of ASYNC_BENCH_JOBS jobs sent over
//      ASYNC_BENCH_CONCURRENCY keep-alive connections (closed loop); the clock runs from the first POST until
//      the queue's completed set (ZCARD <prefix>:jobs:completed, read every 5 ms by this process, the same
//      way for both sides) holds all of them. Interleaved pairs after a warm-up round; ratio ours / peer.
//      Also jobs per CPU-second of the web and worker processes together (from /proc; higher is better),
//      less sensitive to whatever else runs on the machine.
//   2. Latency, unloaded (one job at a time): ours sync (POST /execute, no Prefer) and ours async (POST with
//      Prefer: respond-async, then GET Location polled back to back until completed), and the peer's async
//      job polled the same way; p50 of each, and the p50 of the added latency of a completed async job over a
//      sync one (per pair: async - sync). Ratio: our async p50 over the peer's (lower is better).
// Run: npm run build && node bench/async.mjs. Knobs: RUNS (7 pairs), ASYNC_BENCH_JOBS (1000),
// ASYNC_BENCH_CONCURRENCY (16), ASYNC_BENCH_LATENCY_JOBS (100), BENCH_SERVER_ARGS (node flags for our two
// processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": profiles are written when the bench ends).
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { median, pairs, report, root } from "./lib.mjs";
import {
  buildProject,
  cpuSecondsOf,
  ECHO_HANDLER,
  ECHO_MANIFEST,
  request,
  startServer,
  workDir,
} from "./lib-server.mjs";

const runs = Number(process.env.RUNS ?? 7);
const batch = Number(process.env.ASYNC_BENCH_JOBS ?? 1000);
const concurrency = Number(process.env.ASYNC_BENCH_CONCURRENCY ?? 16);
const latencyJobs = Number(process.env.ASYNC_BENCH_LATENCY_JOBS ?? 100);
const WORKER_CONCURRENCY = "4";
const serverArgs = process.env.BENCH_SERVER_ARGS ? process.env.BENCH_SERVER_ARGS.split(" ") : [];
const Redis = createRequire(join(root, "package.json"))("ioredis");

/** The bare BullMQ producer: Express 5 + queue.add, the job options ours uses (bullmq-queue.ts). */
const PEER_WEB = `import { randomBytes } from "node:crypto";
import express from "express";
import { Job, Queue } from "bullmq";

const { hostname, port } = new URL(process.env.REDIS_URL);
const connection = { host: hostname, port: Number(port), enableOfflineQueue: false };
const queue = new Queue("jobs", { connection, prefix: process.env.PEER_PREFIX });
queue.on("error", () => undefined);
const keep = { age: 86400 };
const app = express();
app.use(express.json());
app.post("/execute", async (req, res) => {
  const { job_id, task, deadline } = req.body;
  const id = "job_" + randomBytes(16).toString("hex");
  const data = { id, jobId: job_id, capability: task.capability, input: task.input, deadline };
  await queue.add("jobs", data, { jobId: id, attempts: 5, backoff: { type: "fixed", delay: 1000 }, removeOnComplete: keep, removeOnFail: keep });
  res.status(202).location("/jobs/" + id).json({ service_version: "1.0", job_id, status: "queued" });
});
app.get("/jobs/:id", async (req, res) => {
  const job = await Job.fromId(queue, req.params.id);
  if (!job) return res.status(404).json({ status: "failed", error_type: "validation" });
  const state = await job.getState();
  // Read before it completed, its return value is not in this copy: read it again.
  if (state === "completed") return res.json(job.returnvalue ?? (await Job.fromId(queue, job.id)).returnvalue);
  res.set("Retry-After", "1").json({ service_version: "1.0", job_id: job.data.jobId, status: state === "active" ? "running" : "queued" });
});
const server = app.listen(Number(process.env.PORT ?? 0), () => {
  console.log(\`listening on http://localhost:\${server.address().port}\`);
});
`;

/** The bare BullMQ worker: the echo, as the job result ours returns. */
const PEER_WORKER = `import { Worker } from "bullmq";

const { hostname, port } = new URL(process.env.REDIS_URL);
const worker = new Worker(
  "jobs",
  async (job) => ({
    service_version: "1.0",
    job_id: job.data.jobId,
    status: "completed",
    output: { text: job.data.input.text },
    completed_at: Math.floor(Date.now() / 1000),
  }),
  { connection: { host: hostname, port: Number(port) }, prefix: process.env.PEER_PREFIX, concurrency: Number(process.env.WORKER_CONCURRENCY), lockDuration: 30000, stalledInterval: 30000, maxStalledCount: 3 },
);
worker.on("error", () => undefined);
await worker.waitUntilReady();
console.log("worker ready");
`;

/** A port nothing listens on right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Debian's redis-server (as test/redis/redis-server.ts starts it), killed when this script exits. */
async function startRedis(dir) {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
  const child = spawn("redis-server", [...args, "--daemonize", "no", "--logfile", ""], { stdio: ["ignore", "pipe", "inherit"] });
  process.on("exit", () => child.kill("SIGKILL"));
  await new Promise((resolve, reject) => {
    let out = "";
    child.once("exit", (code) => reject(new Error(`redis-server exited (${code}):\n${out}`)));
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (/Ready to accept connections/.test(out)) resolve();
    });
  });
  child.stdout.resume();
  return { url: `redis://127.0.0.1:${port}`, child };
}

const work = workDir("bench-async");
const project = buildProject(join(work, "agent"), ECHO_MANIFEST, { "echo.ts": ECHO_HANDLER });
writeFileSync(join(project, "peer-web.mjs"), PEER_WEB);
writeFileSync(join(project, "peer-worker.mjs"), PEER_WORKER);
const redis = await startRedis(join(work, "redis"));
const client = new Redis(redis.url);

const OUR_PREFIX = "bench-ours:";
const PEER_PREFIX = "bench-peer:bull";
const common = { REDIS_URL: redis.url, WORKER_CONCURRENCY, SERVICE_DEV_MODE: "true" };
const start = (args, env, ready) => startServer([...serverArgs, ...args], { cwd: project, env: { ...common, ...env }, ready });
const sides = {
  ours: {
    web: await start(["dist/server.js"], { WORKER: "off", REDIS_KEY_PREFIX: OUR_PREFIX }),
    worker: await start(["dist/server.js", "--worker"], { REDIS_KEY_PREFIX: OUR_PREFIX }, /job worker: up to \d+ async jobs/),
    // Dev mode's queue has its own keys (queue.ts: `<prefix>dev:bull`), apart from paid jobs'.
    completedKey: `${OUR_PREFIX}dev:bull:jobs:completed`,
    failedKey: `${OUR_PREFIX}dev:bull:jobs:failed`,
  },
  peer: {
    web: await start(["peer-web.mjs"], { PEER_PREFIX }),
    worker: await start(["peer-worker.mjs"], { PEER_PREFIX }, /worker ready/),
    completedKey: `${PEER_PREFIX}:jobs:completed`,
    failedKey: `${PEER_PREFIX}:jobs:failed`,
  },
};
const loadStart = loadavg()[0];

let sent = 0;
const deadline = Math.floor(Date.now() / 1000) + 3600;
function execute(async) {
  const i = sent++;
  const body = JSON.stringify({ service_version: "1.0", job_id: `job-${i}`, task: { capability: "echo", input: { text: `hello ${i}` } }, deadline });
  const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
  if (async) headers.prefer = "respond-async";
  return { i, req: { method: "POST", path: "/execute", headers, body } };
}

const completed = async (side) => Number(await client.zcard(side.completedKey));

/** One batch: its jobs sent over `concurrency` connections; resolves once all are completed. */
async function throughput(name) {
  const side = sides[name];
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const before = await completed(side);
  const cpuBefore = { web: cpuSecondsOf(side.web.child.pid), worker: cpuSecondsOf(side.worker.child.pid) };
  let left = batch;
  const t0 = performance.now();
  let enqueued = 0;
  const lane = async () => {
    while (left > 0) {
      left--;
      const res = await request(agent, side.web.port, execute(true).req);
      if (res.status !== 202) throw new Error(`${name}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    }
    enqueued = performance.now() - t0;
  };
  const lanes = Promise.all(Array.from({ length: concurrency }, lane));
  while ((await completed(side)) < before + batch) {
    if ((await client.zcard(side.failedKey)) > 0) throw new Error(`${name}: a job failed in the queue`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  await lanes;
  agent.destroy();
  const row = {
    perSecond: (batch * 1000) / ms,
    enqueuedPerSecond: (batch * 1000) / enqueued,
    webCpu: cpuSecondsOf(side.web.child.pid) - cpuBefore.web,
    workerCpu: cpuSecondsOf(side.worker.child.pid) - cpuBefore.worker,
  };
  (side.rows ??= []).push(row);
  return row.perSecond;
}

/** One async job, POST then GET Location back to back until it is no longer queued or running: ms. */
async function asyncLatency(side, agent) {
  const { i, req } = execute(true);
  const t0 = performance.now();
  const accepted = await request(agent, side.web.port, req);
  if (accepted.status !== 202) throw new Error(`HTTP ${accepted.status}: ${accepted.body.slice(0, 300)}`);
  const token = JSON.parse(accepted.body).job_token;
  const headers = token ? { authorization: `Bearer ${token}` } : {};
  for (;;) {
    const res = await request(agent, side.web.port, { path: accepted.headers.location, headers });
    const body = JSON.parse(res.body);
    if (res.status === 200 && (body.status === "queued" || body.status === "running")) continue;
    if (body.status !== "completed" || body.output?.text !== `hello ${i}`) throw new Error(`unexpected answer: ${res.body.slice(0, 300)}`);
    return performance.now() - t0;
  }
}

async function syncLatency(side, agent) {
  const { i, req } = execute(false);
  const t0 = performance.now();
  const res = await request(agent, side.web.port, req);
  if (res.status !== 200 || JSON.parse(res.body).output?.text !== `hello ${i}`) throw new Error(`sync: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
  return performance.now() - t0;
}

try {
  const result = await pairs({ ours: () => throughput("ours"), peer: () => throughput("peer"), runs });
  const last = (name, key) => sides[name].rows.slice(-runs).map((r) => r[key]);
  console.log(
    `async bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} after the throughput pairs; ` +
      `dev mode (no payment); ${runs} pairs of ${batch} jobs over ${concurrency} connections; worker concurrency ${WORKER_CONCURRENCY}`,
  );
  for (const name of ["ours", "peer"])
    console.log(
      `${name}: enqueue (202s) median ${median(last(name, "enqueuedPerSecond")).toFixed(0)} jobs/s; CPU per batch: web ${median(last(name, "webCpu")).toFixed(2)} s, worker ${median(last(name, "workerCpu")).toFixed(2)} s`,
    );
  report("async-jobs-per-second-higher-is-better", result, { unit: "jobs/s", peer: "bare BullMQ" });
  // Less sensitive to other load on the machine: jobs per CPU-second of the two processes together.
  const perCpu = (name) => sides[name].rows.slice(-runs).map((r) => batch / (r.webCpu + r.workerCpu));
  const cpuResult = { ours: perCpu("ours"), peer: perCpu("peer") };
  cpuResult.ratios = cpuResult.ours.map((x, k) => x / cpuResult.peer[k]);
  report("async-jobs-per-cpu-second-higher-is-better", cpuResult, { unit: "jobs/CPU-s", peer: "bare BullMQ" });

  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = { sync: [], async: [], peer: [], added: [] };
  for (let k = 0; k < 10; k++) {
    // warm-up, unmeasured
    await syncLatency(sides.ours, agent);
    await asyncLatency(sides.ours, agent);
    await asyncLatency(sides.peer, agent);
  }
  for (let k = 0; k < latencyJobs; k++) {
    const sync = await syncLatency(sides.ours, agent);
    const async = await asyncLatency(sides.ours, agent);
    lat.sync.push(sync);
    lat.async.push(async);
    lat.added.push(async - sync);
    lat.peer.push(await asyncLatency(sides.peer, agent));
  }
  agent.destroy();
  console.log(
    `latency (one job at a time, ${latencyJobs} each): ours sync p50 ${median(lat.sync).toFixed(2)} ms, ours async (enqueue -> completed answer polled) p50 ${median(lat.async).toFixed(2)} ms, ` +
      `bare BullMQ async p50 ${median(lat.peer).toFixed(2)} ms`,
  );
  console.log(`added latency of a completed async job over a sync one: p50 ${median(lat.added).toFixed(2)} ms`);
  const ratios = lat.async.map((a, k) => a / lat.peer[k]);
  report("async-latency-p50-lower-is-better", { ours: lat.async, peer: lat.peer, ratios }, { peer: "bare BullMQ" });
} finally {
  client.disconnect();
  for (const side of Object.values(sides))
    for (const child of [side.web.child, side.worker.child]) {
      if (serverArgs.length > 0) {
        child.kill("SIGTERM"); // lets --cpu-prof write its profile
        await new Promise((resolve) => child.once("exit", resolve));
      } else child.kill("SIGKILL");
    }
  redis.child.kill("SIGKILL");
}
