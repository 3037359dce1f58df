// Dev-mode POST /execute throughput and tail latency: a generated project (one capability, `echo`, whose
// handler returns its input's text) run as `SERVICE_DEV_MODE=true node dist/server.js`, against the same
// echo on a bare Express 5 app with express.json() (no validation, no deadline, no logging), both single
// processes, measured in interleaved windows by a keep-alive load generator in this process
// (EXECUTE_BENCH_CONCURRENCY connections, closed loop). The server's stdout (a log line per job) is
// drained by this process, as a terminal or a log collector would.
// Ratios: requests/s (higher is better) and p99 latency (lower is better), create-agent over the peer;
// also requests per server CPU-second (higher is better: the server process's own CPU, from /proc).
// Run: npx tsc -p tsconfig.build.json && node bench/execute.mjs
// Knobs: RUNS (9 pairs), EXECUTE_BENCH_SECONDS (3 per window), EXECUTE_BENCH_CONCURRENCY (16).
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { median, pairs, report } from "./lib.mjs";
import {
  buildProject,
  ECHO_HANDLER,
  ECHO_MANIFEST,
  EXPRESS_PEER,
  load,
  startServer,
  stop,
  workDir,
} from "./lib-server.mjs";

const runs = Number(process.env.RUNS ?? 9);
const seconds = Number(process.env.EXECUTE_BENCH_SECONDS ?? 3);
const concurrency = Number(process.env.EXECUTE_BENCH_CONCURRENCY ?? 16);
const work = workDir("bench-execute");

const project = buildProject(join(work, "agent"), ECHO_MANIFEST, { "echo.ts": ECHO_HANDLER });
const peerFile = join(project, "peer-express.mjs");
writeFileSync(peerFile, EXPRESS_PEER);

const ours = await startServer(["dist/server.js"], { cwd: project, env: { SERVICE_DEV_MODE: "true" } });
const peer = await startServer([peerFile], { cwd: project });
const loadStart = loadavg()[0];

const deadline = Math.floor(Date.now() / 1000) + 3600;
const bodies = Array.from({ length: 1024 }, (_, i) =>
  JSON.stringify({
    service_version: "1.0",
    job_id: `job-${i}`,
    task: { capability: "echo", input: { text: `hello ${i}` } },
    deadline,
  }),
);
const next = (i) => {
  const body = bodies[i % bodies.length];
  return {
    method: "POST",
    path: "/execute",
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    body,
  };
};
const check = (res, i) => {
  if (res.status !== 200) return `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
  if (i < 50) {
    const answer = JSON.parse(res.body);
    if (answer.status !== "completed" || answer.output?.text !== `hello ${i % bodies.length}`)
      return `unexpected answer: ${res.body.slice(0, 300)}`;
  }
  return undefined;
};

const windows = { ours: [], peer: [] };
const measure = (side, { port, child }) => async () => {
  const result = await load({ port, pid: child.pid, concurrency, seconds, next, check });
  if (result.errors.length > 0) throw new Error(`${side}: ${result.errors.join("\n")}`);
  windows[side].push(result);
  return result;
};
try {
  await pairs({ ours: measure("ours", ours), peer: measure("peer", peer), runs });
  // pairs() also ran a warm-up round: the last `runs` windows of each side are the measured ones.
  const pick = (key) => ({
    ours: windows.ours.slice(-runs).map((w) => w[key]),
    peer: windows.peer.slice(-runs).map((w) => w[key]),
  });
  const withRatios = (series) => ({ ...series, ratios: series.ours.map((x, i) => x / series.peer[i]) });
  const rps = withRatios(pick("rps"));
  const p99 = withRatios(pick("p99"));
  const p50 = pick("p50");
  const perCpu = withRatios(pick("perServerCpuSecond"));
  const cpu = pick("serverCpu");
  const clientCpu = pick("clientCpu");
  console.log(
    `execute bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
      `${runs} pairs of ${seconds} s windows, ${concurrency} connections`,
  );
  console.log(
    `p50 latency: create-agent median ${median(p50.ours).toFixed(2)} ms, express median ${median(p50.peer).toFixed(2)} ms`,
  );
  console.log(
    `server CPU per window: create-agent median ${median(cpu.ours).toFixed(2)} s, express ${median(cpu.peer).toFixed(2)} s ` +
      `(of ${seconds} s, GC threads included; load generator ${median(clientCpu.ours).toFixed(2)} / ${median(clientCpu.peer).toFixed(2)} s)`,
  );
  report("execute-dev-requests-per-server-cpu-second-higher-is-better", perCpu, { unit: "req/CPU-s", peer: "express+json" });
  report("execute-dev-p99-latency-lower-is-better", p99, { peer: "express+json" });
  report("execute-dev-requests-per-second-higher-is-better", rps, { unit: "req/s", peer: "express+json" });
} finally {
  await Promise.all([stop(ours.child), stop(peer.child)]);
}
