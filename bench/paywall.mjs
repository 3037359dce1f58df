// 402 answers per second: POST /execute without payment, answered "payment required" (the v2
// PAYMENT-REQUIRED header with the x402 Bazaar discovery extension, and the v1 body), against
// @x402/express 2.27's paymentMiddleware on bare Express 5 with express.json(), its route declaring a
// Bazaar discovery extension too. Both single processes, measured in interleaved windows by a keep-alive
// load generator in this process.
//   ours: a generated project (one capability, `echo`) in production mode, its own registry and runtime
//         (dist/), with a settler that is never called (no job is paid here).
//   peer: paymentMiddleware({"POST /execute": ...}, x402ResourceServer(facilitator stub).register(exact
//         EVM server scheme)), the facilitator stub answering /supported from memory.
// Ratios: answers/s (higher is better); also per server CPU-second (higher is better).
// Run: npx tsc -p tsconfig.build.json && node bench/paywall.mjs
// Knobs: RUNS (9 pairs), PAYWALL_BENCH_SECONDS (3), PAYWALL_BENCH_CONCURRENCY (16),
// PAYWALL_BENCH_NETWORKS (base-sepolia): several, comma-separated, are offered by both sides in one 402
// (e.g. base-sepolia,arbitrum-sepolia,polygon).
import { fork } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensurePeers, median, pairs, report } from "./lib.mjs";
import { buildProject, ECHO_HANDLER, ECHO_MANIFEST, load, workDir } from "./lib-server.mjs";

const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PEERS = { "@x402/express": "2.27.0", "@x402/evm": "2.27.0" };
const NETWORKS = (process.env.PAYWALL_BENCH_NETWORKS ?? "base-sepolia").split(",");
/** CAIP-2 ids of the networks both sides offer (the peer takes CAIP-2 ids only). */
const CAIP2 = {
  "base-sepolia": "eip155:84532",
  base: "eip155:8453",
  "arbitrum-sepolia": "eip155:421614",
  arbitrum: "eip155:42161",
  polygon: "eip155:137",
};

if (process.argv[2] === "--ours") await ours(process.argv[3]);
else if (process.argv[2] === "--peer") await peer(process.argv[3]);
else await main();

async function ours(project) {
  process.on("disconnect", () => process.exit(0));
  const { agent } = await import(pathToFileURL(join(project, "dist/generated/registry.js")).href);
  const { createApp } = await import(pathToFileURL(join(project, "dist/runtime/app.js")).href);
  const settler = {
    settle: async () => {
      throw new Error("nothing is paid in this bench");
    },
  };
  const app = createApp(agent, {
    env: {},
    devMode: false,
    payment: { payTo: PAY_TO, networks: NETWORKS, settler },
  });
  const server = app.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
}

async function peer(project) {
  process.on("disconnect", () => process.exit(0));
  const peers = ensurePeers(PEERS);
  const { paymentMiddleware, x402ResourceServer } = await peers.import("@x402/express");
  const { ExactEvmScheme } = await import(pathToFileURL(peers.path("@x402/evm/dist/esm/exact/server/index.mjs")).href);
  const { declareDiscoveryExtension } = await import(
    pathToFileURL(peers.path("@x402/extensions/dist/esm/bazaar/index.mjs")).href
  );
  // The same Express ours runs on (the repo's express 5.3.0).
  const { default: express } = await import(pathToFileURL(join(project, "node_modules/express/index.js")).href);
  const networks = NETWORKS.map((n) => CAIP2[n] ?? n);
  const network = networks[0];
  const facilitator = {
    getSupported: async () => ({
      kinds: networks.map((n) => ({ x402Version: 2, scheme: "exact", network: n })),
      extensions: [],
      signers: {},
    }),
    verify: async () => ({ isValid: false, invalidReason: "bench" }),
    settle: async () => ({ success: false, errorReason: "bench", transaction: "", network }),
  };
  const resourceServer = new x402ResourceServer(facilitator);
  for (const n of networks) resourceServer.register(n, new ExactEvmScheme());
  const deadline = Math.floor(Date.now() / 1000) + 300;
  const routes = {
    "POST /execute": {
      accepts: networks.map((n) => ({ scheme: "exact", price: "$0.01", network: n, payTo: PAY_TO })),
      description: "Echoes its text",
      mimeType: "application/json",
      extensions: declareDiscoveryExtension({
        bodyType: "json",
        input: { service_version: "1.0", job_id: "example-job", task: { capability: "echo", input: { text: "hello" } }, deadline },
        inputSchema: {
          type: "object",
          properties: {
            service_version: { type: "string", const: "1.0" },
            job_id: { type: "string", minLength: 1, maxLength: 256 },
            task: {
              type: "object",
              properties: {
                capability: { type: "string", const: "echo" },
                input: { type: "object", properties: { text: { type: "string", minLength: 1, maxLength: 100 } }, required: ["text"] },
              },
              required: ["capability", "input"],
            },
            deadline: { type: "number", exclusiveMinimum: 0 },
          },
          required: ["service_version", "job_id", "task", "deadline"],
        },
        output: {
          example: { service_version: "1.0", job_id: "example-job", status: "completed", output: { text: "hello" }, completed_at: deadline },
        },
      }),
    },
  };
  const app = express();
  app.use(express.json());
  app.use(paymentMiddleware(routes, resourceServer));
  app.post("/execute", (_req, res) => res.json({ status: "completed" }));
  const server = app.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
}

function start(mode, project) {
  const child = fork(new URL(import.meta.url).pathname, [mode, project], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  let err = "";
  child.stderr.on("data", (chunk) => {
    if (err.length < 20_000) err += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once("message", (msg) => resolve({ child, port: msg.port }));
    child.once("exit", (code) => reject(new Error(`${mode} exited (${code}) before listening:\n${err}`)));
  });
}

async function main() {
  const runs = Number(process.env.RUNS ?? 9);
  const seconds = Number(process.env.PAYWALL_BENCH_SECONDS ?? 3);
  const concurrency = Number(process.env.PAYWALL_BENCH_CONCURRENCY ?? 16);
  ensurePeers(PEERS);
  const work = workDir("bench-paywall");
  const project = buildProject(join(work, "agent"), ECHO_MANIFEST, { "echo.ts": ECHO_HANDLER });
  const servers = { ours: await start("--ours", project), peer: await start("--peer", project) };
  const loadStart = loadavg()[0];

  const deadline = Math.floor(Date.now() / 1000) + 3600;
  const bodies = Array.from({ length: 256 }, (_, i) =>
    JSON.stringify({ service_version: "1.0", job_id: `job-${i}`, task: { capability: "echo", input: { text: `hello ${i}` } }, deadline }),
  );
  const next = (i) => {
    const body = bodies[i % bodies.length];
    return {
      method: "POST",
      path: "/execute",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), accept: "application/json" },
      body,
    };
  };
  const check = (res, i) => {
    if (res.status !== 402) return `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
    if (i >= 20) return undefined;
    const header = res.headers["payment-required"];
    if (!header) return "a 402 without PAYMENT-REQUIRED";
    const required = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    if (required.x402Version !== 2 || required.accepts?.length !== NETWORKS.length || required.accepts[0].scheme !== "exact")
      return `unexpected PAYMENT-REQUIRED: ${JSON.stringify(required).slice(0, 300)}`;
    if (!required.extensions?.bazaar) return "a 402 without the bazaar extension";
    return undefined;
  };
  const windows = { ours: [], peer: [] };
  const measure = (side) => async () => {
    const { port, child } = servers[side];
    const result = await load({ port, pid: child.pid, concurrency, seconds, next, check });
    if (result.errors.length > 0) throw new Error(`${side}: ${result.errors.join("\n")}`);
    windows[side].push(result);
    return result.rps;
  };
  try {
    const rps = await pairs({ ours: measure("ours"), peer: measure("peer"), runs });
    const last = (side, key) => windows[side].slice(-runs).map((w) => w[key]);
    const perCpu = { ours: last("ours", "perServerCpuSecond"), peer: last("peer", "perServerCpuSecond") };
    perCpu.ratios = perCpu.ours.map((x, i) => x / perCpu.peer[i]);
    console.log(
      `paywall bench: ${NETWORKS.join(",")} offered; ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
        `${runs} pairs of ${seconds} s windows, ${concurrency} connections; ` +
        `p99: create-agent ${median(last("ours", "p99")).toFixed(1)} ms, @x402/express ${median(last("peer", "p99")).toFixed(1)} ms`,
    );
    report("paywall-402-per-server-cpu-second-higher-is-better", perCpu, { unit: "402/CPU-s", peer: "@x402/express" });
    report("paywall-402-per-second-higher-is-better", rps, { unit: "402/s", peer: "@x402/express" });
  } finally {
    servers.ours.child.kill("SIGKILL");
    servers.peer.child.kill("SIGKILL");
  }
}
