// Paid A2A jobs per server CPU-second, two turns each, settlement replaced by success (as in bench/paid.mjs),
// against the bare @a2a-js/sdk: the same two turns answered by its DefaultRequestHandler (in-memory task store,
// the SDK's own JSON-RPC Express handler) with an executor that only verifies the same payload.
//   A job, on either side: turn 1, JSON-RPC SendMessage (A2A 1.0, A2A-Extensions naming a2a-x402) with a
//   DataPart {capability: "echo", input: {text}} -> a task in input-required whose status message metadata has
//   `x402.payment.status: "payment-required"` and `x402.payment.required` (an x402 v2 PaymentRequired); turn 2,
//   the same taskId, metadata `x402.payment.status: "payment-submitted"` and `x402.payment.payload` (an x402 v2
//   payload over the offer's first entry, a distinct EIP-3009 authorization signed before measuring) ->
//   completed, the output as a DataPart artifact, `x402.payment.receipts`.
//   ours: one app process (templates/runtime compiled alone, production mode, in-memory ledger, the default
//         logger, a settler that costs nothing), its POST /a2a (the a2a feature): the offer of the HTTP 402,
//         the payload matched to the offer stored with the task, verified (signature, payee, amount, window),
//         reserved in the ledger, the input validated, the handler run (an echo), "settled", marked spent.
//   peer: one process, the SDK alone (express + jsonRpcHandler + DefaultRequestHandler + InMemoryTaskStore),
//         its executor answering turn 1 with a fixed offer and turn 2 by checking the payload exactly as the
//         floor of bench/paid.mjs does (viem's recoverTypedDataAddress, payee, amount, validBefore), then the
//         same completed task. No ledger, no validation, no logging, no deadline.
// Per core: each side's figure is paid jobs (two requests each) divided by the CPU-seconds (user + system) of
// its server process alone over the window (from /proc), so the load generator's CPU counts for neither.
// Higher is better; target ours/peer >= 0.7. Each window starts on a fresh app (and a fresh peer task store).
// Run: node bench/a2a.mjs (needs the a2a feature in templates/runtime). Knobs: RUNS (9 pairs),
// A2A_BENCH_SECONDS (3), A2A_BENCH_JOBS (pool of signed authorizations, 4000), A2A_BENCH_CONCURRENCY (16).
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import http from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median, pairs, report, root } from "./lib.mjs";
import { compileRuntime, cpuSecondsOf, echoAgent, forkWorker, request, runtimeSource, workDir } from "./lib-server.mjs";
import { DOMAIN, PAY_TO, PAYER_KEY, PRICE, TYPES } from "./eip3009.mjs";

const X402_EXTENSION_URI = "https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2";
const A2A_PATH = "/a2a";
/** The offer's entry: what the payer signs for (the same on both sides). */
const ACCEPTED = {
  scheme: "exact",
  network: "eip155:84532",
  amount: PRICE,
  asset: DOMAIN.verifyingContract,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: DOMAIN.name, version: DOMAIN.version },
};

/** Listens on 127.0.0.1:0, serving whatever `current()` is; IPC {id, type: "reset" | "exit"} -> {id, ok}. */
async function serve(build) {
  process.on("disconnect", () => process.exit(0));
  let current = await build();
  const server = http.createServer((req, res) => current(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.on("message", async (msg) => {
    if (msg.type === "exit") process.exit(0);
    if (msg.type === "reset") current = await build();
    process.send({ id: msg.id, ok: true });
  });
  process.send({ id: 0, ok: true, value: server.address().port });
}

// ---- ours: the compiled runtime's app, production, a settler that costs nothing ----
async function worker(runtimeDir) {
  const load = (file) => import(pathToFileURL(join(runtimeDir, file)).href);
  const { createApp } = await load("app.js");
  const { inputAjv, outputAjv } = await load("ajv.js");
  const transaction = `0x${"ab".repeat(32)}`;
  const settler = { settle: async (p) => ({ transaction, network: p.network, payer: p.payer }) };
  const agent = echoAgent({ inputAjv, outputAjv }, PRICE);
  await serve(() =>
    // MAX_JOBS_PER_PAYER on (each job takes a payer slot) but above the lanes of one payer: none refused.
    createApp(agent, { env: {}, devMode: false, payment: { payTo: PAY_TO, network: "base-sepolia", settler, maxJobsPerPayer: 1000 } }),
  );
}

// ---- peer: the SDK alone, an executor that only verifies the payload ----
async function peer() {
  const { AgentCard, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } = await import("@a2a-js/sdk");
  const { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } = await import("@a2a-js/sdk/server");
  const { jsonRpcHandler, UserBuilder } = await import("@a2a-js/sdk/server/express");
  const { recoverTypedDataAddress } = await import("viem/utils");
  const express = (await import("express")).default;
  const card = AgentCard.fromJSON({
    name: "bench-agent",
    description: "echoes its text",
    supportedInterfaces: [{ url: `http://127.0.0.1${A2A_PATH}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    version: "1.0.0",
    capabilities: { extensions: [{ uri: X402_EXTENSION_URI, description: "x402", required: true }] },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills: [{ id: "echo", name: "echo", description: "echoes its text", tags: ["echo"] }],
  });
  const offer = { x402Version: 2, resource: { url: `http://127.0.0.1${A2A_PATH}` }, accepts: [ACCEPTED] };
  const status = (taskId, contextId, state, metadata) =>
    AgentEvent.statusUpdate(
      TaskStatusUpdateEvent.fromJSON({
        taskId,
        contextId,
        status: {
          state,
          message: { messageId: randomUUID(), role: "ROLE_AGENT", taskId, contextId, parts: [{ text: state }], metadata },
        },
      }),
    );
  /** The floor of bench/paid.mjs: the signer recovered, payee, amount and time window checked. */
  const verify = async (payment) => {
    const { signature, authorization: a } = payment.payload;
    const signer = await recoverTypedDataAddress({
      domain: DOMAIN,
      types: TYPES,
      primaryType: "TransferWithAuthorization",
      message: { ...a, value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore) },
      signature,
    });
    const now = Math.floor(Date.now() / 1000);
    if (signer !== a.from || a.to !== PAY_TO || a.value !== PRICE || Number(a.validBefore) <= now)
      throw new Error("payment refused");
    return signer;
  };
  const executor = {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      const meta = ctx.userMessage.metadata ?? {};
      if (!ctx.task) {
        bus.publish(AgentEvent.task(Task.fromJSON({ id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED" } })));
        bus.publish(
          status(taskId, contextId, "TASK_STATE_INPUT_REQUIRED", {
            "x402.payment.status": "payment-required",
            "x402.payment.required": offer,
          }),
        );
      } else {
        const payer = await verify(meta["x402.payment.payload"]);
        const input = ctx.task.history?.[0]?.parts?.[0]?.content?.value?.input ?? { text: "hello" };
        bus.publish(AgentEvent.task({ ...ctx.task, status: { ...ctx.task.status, state: 2 } })); // WORKING
        bus.publish(
          AgentEvent.artifactUpdate(
            TaskArtifactUpdateEvent.fromJSON({
              taskId,
              contextId,
              artifact: { artifactId: randomUUID(), parts: [{ data: { text: input.text } }] },
            }),
          ),
        );
        const receipt = { success: true, transaction: `0x${"ab".repeat(32)}`, network: ACCEPTED.network, payer };
        bus.publish(
          status(taskId, contextId, "TASK_STATE_COMPLETED", {
            "x402.payment.status": "payment-completed",
            "x402.payment.receipts": [receipt],
          }),
        );
      }
      bus.finished();
    },
    async cancelTask() {},
  };
  await serve(() => {
    const app = express();
    const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
    app.use(A2A_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    return app;
  });
}

// ---- the load generator: closed loop, `concurrency` lanes, each job two turns ----

const HEADERS = { "content-type": "application/json", "a2a-version": "1.0", "a2a-extensions": X402_EXTENSION_URI };

function sendMessage(message) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } });
  return {
    method: "POST",
    path: A2A_PATH,
    body,
    headers: { ...HEADERS, "content-length": String(Buffer.byteLength(body)) },
  };
}

const turn1 = () =>
  sendMessage({
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts: [{ data: { capability: "echo", input: { text: "hello" } } }],
  });

const STATE = (res) => JSON.parse(res.body).result?.task?.status;

/** One paid job: turn 1 for the offer, turn 2 paying it with `signed`; a problem string, or undefined. */
async function job(agent, port, signed) {
  const first = await request(agent, port, turn1());
  const task = first.status === 200 ? JSON.parse(first.body).result?.task : undefined;
  const required = task?.status?.message?.metadata?.["x402.payment.required"];
  if (task?.status?.state !== "TASK_STATE_INPUT_REQUIRED" || !required)
    return `turn 1: HTTP ${first.status}: ${first.body.slice(0, 300)}`;
  const payload = {
    x402Version: 2,
    resource: required.resource,
    accepted: required.accepts[0],
    payload: { signature: signed.signature, authorization: signed.message },
  };
  const second = await request(
    agent,
    port,
    sendMessage({
      messageId: randomUUID(),
      role: "ROLE_USER",
      taskId: task.id,
      contextId: task.contextId,
      parts: [{ data: { capability: "echo", input: { text: "hello" } } }],
      metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
    }),
  );
  const state = second.status === 200 ? STATE(second) : undefined;
  if (state?.state !== "TASK_STATE_COMPLETED") return `turn 2: HTTP ${second.status}: ${second.body.slice(0, 300)}`;
  return undefined;
}

/** Paid jobs for `seconds` on `port`; jobs per CPU-second of process `pid`. */
async function loadJobs({ port, pid, concurrency, seconds, pool, from }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const errors = [];
  let done = 0;
  let next = from;
  let exhausted = false;
  const cpuBefore = cpuSecondsOf(pid);
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const lane = async () => {
    while (performance.now() < until) {
      const signed = pool[next++];
      if (!signed) return void (exhausted = true);
      const problem = await job(agent, port, signed);
      if (problem && errors.length < 5) errors.push(problem);
      else done++;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    agent.destroy();
  }
  const cpu = cpuSecondsOf(pid) - cpuBefore;
  const wall = (performance.now() - t0) / 1000;
  return { done, used: next - from, errors, exhausted, cpu, perCpu: done / cpu, perSecond: done / wall };
}

async function main() {
  if (!existsSync(join(runtimeSource, "a2a"))) {
    console.error(`bench a2a: ${runtimeSource} has no a2a/ (the A2A transport): nothing to measure`);
    process.exit(1);
  }
  const runs = Number(process.env.RUNS ?? 9);
  const seconds = Number(process.env.A2A_BENCH_SECONDS ?? 3);
  const poolSize = Number(process.env.A2A_BENCH_JOBS ?? 4000);
  const concurrency = Number(process.env.A2A_BENCH_CONCURRENCY ?? 16);
  const work = workDir("bench-a2a");

  let started = performance.now();
  const runtimeDir = compileRuntime(work);
  console.error(`bench: runtime compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // Every authorization signed before anything is measured; each is used once, ours and the peer's apart.
  started = performance.now();
  const { privateKeyToAccount } = await import("viem/accounts");
  const payer = privateKeyToAccount(PAYER_KEY);
  const validBefore = String(Math.floor(Date.now() / 1000) + 3600);
  const sign = async () => {
    const message = { from: payer.address, to: PAY_TO, value: PRICE, validAfter: "0", validBefore, nonce: `0x${randomBytes(32).toString("hex")}` };
    const signature = await payer.signTypedData({
      domain: DOMAIN,
      types: TYPES,
      primaryType: "TransferWithAuthorization",
      message: { ...message, value: BigInt(PRICE), validAfter: 0n, validBefore: BigInt(validBefore) },
    });
    return { message, signature };
  };
  const pool = [];
  for (let i = 0; i < poolSize; i++) pool.push(await sign());
  const signSeconds = (performance.now() - started) / 1000;

  const script = new URL(import.meta.url).pathname;
  const ours = await forkWorker(script, ["--worker", runtimeDir]);
  const theirs = await forkWorker(script, ["--peer", root]);
  const loadStart = loadavg()[0];
  const rows = { ours: [], peer: [] };
  try {
    const side = (name, server) => async () => {
      await server.ask({ type: "reset" }); // fresh ledger / task store: the pool is reused across windows only
      const result = await loadJobs({ port: server.value, pid: server.child.pid, concurrency, seconds, pool, from: 0 });
      if (result.errors.length > 0) throw new Error(`${name}: paid A2A jobs failed:\n${result.errors.join("\n")}`);
      if (result.exhausted) throw new Error("the signed pool ran out within a window: raise A2A_BENCH_JOBS");
      rows[name].push(result);
      return result.perCpu;
    };
    const result = await pairs({ ours: side("ours", ours), peer: side("peer", theirs), runs });
    const last = (name, key) => rows[name].slice(-runs).map((r) => r[key]);
    console.log(
      `a2a bench: ${availableParallelism()} cores, load average ${loadStart.toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end; ` +
        `${runs} pairs of ${seconds} s windows, ${concurrency} connections; ${poolSize} authorizations signed in ${signSeconds.toFixed(1)} s`,
    );
    console.log(
      `wall: create-agent median ${median(last("ours", "perSecond")).toFixed(0)} paid A2A jobs/s (server CPU ${median(last("ours", "cpu")).toFixed(2)} s per window), ` +
        `bare SDK median ${median(last("peer", "perSecond")).toFixed(0)}/s (server CPU ${median(last("peer", "cpu")).toFixed(2)} s)`,
    );
    report("paid-a2a-jobs-per-cpu-second-higher-is-better", result, { unit: "/CPU-s", peer: "@a2a-js/sdk DefaultRequestHandler" });
  } finally {
    ours.child.kill("SIGKILL");
    theirs.child.kill("SIGKILL");
  }
}

// Last, once every constant above is initialised: the server, the peer, or the bench itself.
const modes = { "--worker": worker, "--peer": peer };
if (modes[process.argv[2]]) await modes[process.argv[2]](process.argv[3]);
else await main();
