// Cold start of a generated project in dev mode: from spawning `node dist/server.js` (SERVICE_DEV_MODE=true,
// PORT=0) to the first 200 on GET /health, at 1 and at 100 capabilities, against a bare Express 5 app with
// express.json() started the same way, all interleaved in one run (each round starts every one of them).
// Times: lower is better, so a ratio below 1 means create-agent starts faster. Also prints how start-up
// grows from 1 to 100 capabilities (flat = 1.00).
// Run: npx tsc -p tsconfig.build.json && node bench/server-start.mjs   (RUNS=15 for more rounds)
import { writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { median, report } from "./lib.mjs";
import {
  buildProject,
  EXPRESS_PEER,
  manyCapabilities,
  startServer,
  stop,
  workDir,
} from "./lib-server.mjs";

const runs = Number(process.env.RUNS ?? 11);
const work = workDir("bench-server-start");

const projects = {};
for (const [key, count] of [
  [1, 1],
  [100, 100],
]) {
  const started = performance.now();
  projects[key] = buildProject(join(work, `agent-${key}`), manyCapabilities(count), {});
  console.error(`bench: project ${key} built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
const peerFile = join(projects[1], "peer-express.mjs");
writeFileSync(peerFile, EXPRESS_PEER);

/** ms from spawn to the first 200 on /health (a fresh connection, as a health checker makes it). */
async function coldStart(args, cwd) {
  const { child, port, started } = await startServer(args, { cwd, env: { SERVICE_DEV_MODE: "true" } });
  try {
    const status = await new Promise((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path: "/health", agent: false }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        })
        .on("error", reject);
    });
    if (status !== 200) throw new Error(`GET /health answered ${status}`);
    return performance.now() - started;
  } finally {
    await stop(child);
  }
}

// All of them in every round (the order rotating), so each ratio compares starts made moments apart.
const keys = [1, 100];
const results = Object.fromEntries(keys.map((key) => [key, { ours: [], peer: [], ratios: [] }]));
const sides = [
  ["peer", () => coldStart([peerFile], projects[1])],
  ...keys.map((key) => [key, () => coldStart(["dist/server.js"], projects[key])]),
];
for (let round = 0; round < runs + 1; round++) {
  const times = {};
  for (let i = 0; i < sides.length; i++) {
    const [key, start] = sides[(i + round) % sides.length];
    times[key] = await start();
  }
  if (round === 0) continue; // warm-up: file system cache
  for (const key of keys) {
    results[key].ours.push(times[key]);
    results[key].peer.push(times.peer);
    results[key].ratios.push(times[key] / times.peer);
  }
}

const growth = (key) => (median(results[key].ours) / median(results[1].ours)).toFixed(2);
console.log(`start-up growth 1 -> 100 capabilities (flat = 1.00): create-agent x${growth(100)}`);
for (const key of [1, 100])
  report(`server-start-${key}-capability-time-lower-is-better`, results[key], { peer: "express+json" });
