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
// PAYWALL_BENCH_NETWORKS (base-sepolia,arbitrum-sepolia,solana-devnet: two EVM networks and Solana, as
// issue 17 measures): the networks both sides offer in one 402, comma-separated (e.g. base-sepolia alone).
// Solana on our side: PAY_TO_SOLANA and a fee payer key (SOLANA_FEE_PAYER_KEY, made for the run) with an
// RPC URL that is never called (no payment arrives); on the peer's, @x402/svm's exact server scheme and a
// facilitator stub whose /supported names the fee payer. Jobs are sent due in 20 s, so Solana is offered.
import { fork } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensurePeers, median, pairs, report } from "./lib.mjs";
import { buildProject, ECHO_HANDLER, ECHO_MANIFEST, load, workDir } from "./lib-server.mjs";

const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PEERS = { "@x402/express": "2.27.0", "@x402/evm": "2.27.0", "@x402/svm": "2.27.0" };
const NETWORKS = (process.env.PAYWALL_BENCH_NETWORKS ?? "base-sepolia,arbitrum-sepolia,solana-devnet").split(",");
/** CAIP-2 ids of the networks both sides offer (the peer takes CAIP-2 ids only). */
const CAIP2 = {
  "base-sepolia": "eip155:84532",
  base: "eip155:8453",
  "arbitrum-sepolia": "eip155:421614",
  arbitrum: "eip155:42161",
  polygon: "eip155:137",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
};
const isSolana = (caip2) => caip2.startsWith("solana:");

/** A fresh ed25519 key as Solana writes it: base58 of seed + public key (64 bytes), and the address. */
function solanaKey() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
  const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return { secret: base58(Buffer.concat([seed, pub])), address: base58(pub) };
}
function base58(bytes) {
  const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  let n = BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = alphabet[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

if (process.argv[2] === "--ours") await ours(process.argv[3], JSON.parse(process.argv[4]));
else if (process.argv[2] === "--peer") await peer(process.argv[3], JSON.parse(process.argv[4]));
else await main();

async function ours(project, solana) {
  process.on("disconnect", () => process.exit(0));
  const { agent } = await import(pathToFileURL(join(project, "dist/generated/registry.js")).href);
  const { createApp } = await import(pathToFileURL(join(project, "dist/runtime/app.js")).href);
  const settler = {
    settle: async () => {
      throw new Error("nothing is paid in this bench");
    },
  };
  const app = createApp(agent, {
    // Solana's route: this server as fee payer; its RPC is never called, as no payment arrives.
    env: Object.fromEntries(
      NETWORKS.filter((n) => isSolana(CAIP2[n] ?? n)).map((n) => [
        `X402_RPC_URL_${n.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`,
        "http://127.0.0.1:9",
      ]),
    ),
    devMode: false,
    payment: {
      payTo: PAY_TO,
      networks: NETWORKS,
      settler,
      payToSolana: solana.payTo,
      solanaFeePayerKey: solana.feePayerKey,
    },
  });
  const server = app.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
}

async function peer(project, solana) {
  process.on("disconnect", () => process.exit(0));
  const peers = ensurePeers(PEERS);
  const { paymentMiddleware, x402ResourceServer } = await peers.import("@x402/express");
  const { ExactEvmScheme } = await import(pathToFileURL(peers.path("@x402/evm/dist/esm/exact/server/index.mjs")).href);
  const { ExactSvmScheme } = await import(pathToFileURL(peers.path("@x402/svm/dist/esm/exact/server/index.mjs")).href);
  const { declareDiscoveryExtension } = await import(
    pathToFileURL(peers.path("@x402/extensions/dist/esm/bazaar/index.mjs")).href
  );
  // The same Express ours runs on (the repo's express 5.3.0).
  const { default: express } = await import(pathToFileURL(join(project, "node_modules/express/index.js")).href);
  const networks = NETWORKS.map((n) => CAIP2[n] ?? n);
  const network = networks[0];
  const facilitator = {
    getSupported: async () => ({
      kinds: networks.map((n) => ({
        x402Version: 2,
        scheme: "exact",
        network: n,
        ...(isSolana(n) ? { extra: { feePayer: solana.feePayer } } : {}),
      })),
      extensions: [],
      signers: {},
    }),
    verify: async () => ({ isValid: false, invalidReason: "bench" }),
    settle: async () => ({ success: false, errorReason: "bench", transaction: "", network }),
  };
  const resourceServer = new x402ResourceServer(facilitator);
  for (const n of networks) resourceServer.register(n, isSolana(n) ? new ExactSvmScheme() : new ExactEvmScheme());
  const deadline = Math.floor(Date.now() / 1000) + 300;
  const routes = {
    "POST /execute": {
      accepts: networks.map((n) => ({ scheme: "exact", price: "$0.01", network: n, payTo: isSolana(n) ? solana.payTo : PAY_TO })),
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

function start(mode, project, solana) {
  const child = fork(new URL(import.meta.url).pathname, [mode, project, JSON.stringify(solana)], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
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
  const payee = solanaKey();
  const feePayer = solanaKey();
  const solana = { payTo: payee.address, feePayerKey: feePayer.secret, feePayer: feePayer.address };
  const servers = { ours: await start("--ours", project, solana), peer: await start("--peer", project, solana) };
  const loadStart = loadavg()[0];

  // Due in 20 s, sent as it is due: a job Solana can pay for (due within 30 s).
  const next = (i) => {
    const deadline = Math.floor(Date.now() / 1000) + 20;
    const body = JSON.stringify({ service_version: "1.0", job_id: `job-${i % 256}`, task: { capability: "echo", input: { text: `hello ${i % 256}` } }, deadline });
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
