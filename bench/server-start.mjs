// Cold start of a generated project in dev mode: from spawning `node dist/server.js` (SERVICE_DEV_MODE=true,
// PORT=0) to the first 200 on GET /health, at 1 and at 100 capabilities, against a bare Express 5 app with
// express.json() started the same way, all interleaved in one run (each round starts every one of them).
// Times: lower is better, so a ratio below 1 means create-agent starts faster. Also prints how start-up
// grows from 1 to 100 capabilities (flat = 1.00), and a third project: 100 capabilities with the generated
// code as proposed for the generator (proposedGeneratedCode below), to show what it changes.
// Run: npx tsc -p tsconfig.build.json && node bench/server-start.mjs   (RUNS=15 for more rounds)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { median, report } from "./lib.mjs";
import {
  buildProject,
  EXPRESS_PEER,
  manyCapabilities,
  runtimeSource,
  startServer,
  stop,
  workDir,
} from "./lib-server.mjs";

const runs = Number(process.env.RUNS ?? 11);
const work = workDir("bench-server-start");

/**
 * The generated code as proposed for the generator (not what it emits yet): each capability's module
 * imported on first use through the runtime's lazyHandler (handlers.ts), and the discovery data as a
 * JSON string parsed at start-up (V8 parses JSON several times faster than an object literal).
 */
function proposedGeneratedCode(dir) {
  const registryFile = join(dir, "src/generated/registry.ts");
  let registry = readFileSync(registryFile, "utf8");
  registry = registry.replace(
    /^import (\w+) from "(\.\.\/capabilities\/[^"]+)";$/gm,
    'const $1 = lazyHandler(() => import("$2"));',
  );
  registry = registry.replace(/^import /m, 'import { lazyHandler } from "../runtime/handlers.js";\nimport ');
  writeFileSync(registryFile, registry);
  const discoveryFile = join(dir, "src/generated/discovery.ts");
  const source = readFileSync(discoveryFile, "utf8");
  const declaration = "export const discovery: DiscoveryData = ";
  const start = source.indexOf(declaration) + declaration.length;
  const data = JSON.parse(source.slice(start, source.lastIndexOf(";")));
  writeFileSync(discoveryFile, `${source.slice(0, start)}JSON.parse(${JSON.stringify(JSON.stringify(data))});\n`);
}

// A runtime without handlers.ts (BENCH_RUNTIME of an older one) has no lazyHandler to propose.
const proposable = existsSync(join(runtimeSource, "handlers.ts"));
const projects = {};
for (const [key, count, transform] of [
  [1, 1],
  [100, 100],
  ...(proposable ? [["100-proposed", 100, proposedGeneratedCode]] : []),
]) {
  const started = performance.now();
  projects[key] = buildProject(join(work, `agent-${key}`), manyCapabilities(count), {}, transform);
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
const keys = proposable ? [1, 100, "100-proposed"] : [1, 100];
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
console.log(
  `start-up growth 1 -> 100 capabilities (flat = 1.00): create-agent x${growth(100)} as generated today` +
    (proposable
      ? `, x${growth("100-proposed")} with the generated code proposed (lazy handler imports, JSON discovery data)`
      : ""),
);
if (proposable)
  report("server-start-100-capability-proposed-generated-code-time-lower-is-better", results["100-proposed"], {
    peer: "express+json",
  });
for (const key of [1, 100])
  report(`server-start-${key}-capability-time-lower-is-better`, results[key], { peer: "express+json" });
