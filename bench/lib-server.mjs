// What the server benches (server-start, execute, paid, paywall) share: generated projects built the
// way a user builds them, the runtime compiled alone (for in-process apps), and a peer-free keep-alive
// load generator on node:http. Each bench script says what it measures; see bench/lib.mjs for pairs
// and the ratio line.
//
// BENCH_RUNTIME=<folder>: use that copy of templates/runtime instead of the working tree's (to measure
// a before/after pair with the same scripts, e.g. a copy taken from `git show HEAD:templates/runtime`).
import { execFileSync, fork, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { manyCapabilities, root } from "./lib.mjs";

export { manyCapabilities };

export const runtimeSource = process.env.BENCH_RUNTIME || join(root, "templates/runtime");

/** A folder under the system tmp, removed on exit (whatever the way out). */
export function workDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  process.on("exit", remove);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.on(signal, () => {
      remove();
      process.exit(130);
    });
  return dir;
}

/** One capability, `echo`: {text} in, {text} out. */
export const ECHO_MANIFEST = {
  name: "bench-agent",
  version: "1.0.0",
  capabilities: {
    echo: {
      description: "Echoes its text",
      pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
      input_schema: { text: { type: "string", required: true, minLength: 1, maxLength: 100 } },
      output_schema: { text: { type: "string" } },
    },
  },
};

/** The echo handler a user would write (the generated stub also logs a line per job: not measured here). */
export const ECHO_HANDLER = `import type { EchoInput, EchoOutput } from "../generated/types.js";

export default async function echo(input: EchoInput): Promise<EchoOutput> {
  return { text: input.text };
}
`;

/**
 * A generated project, built like `npm run build` does: scaffolded by the CLI (dist/ must be built),
 * its runtime taken from `runtimeSource`, node_modules linked to the repo's (same pinned versions),
 * `handlers` (file name -> source) written over the stubs, `transform(dir)` run on the sources last.
 * Returns the project folder.
 */
export function buildProject(dir, manifest, handlers = {}, transform = undefined) {
  mkdirSync(dir, { recursive: true });
  const manifestFile = join(dir, "..", `${dir.split("/").at(-1)}-agent.json`);
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  execFileSync(
    process.execPath,
    // Every optional feature: the benches pay on Solana and may use Redis and metrics.
    [join(root, "bin/create-agent.js"), dir, "--yes", "--no-install", "--no-git", "--force", "--features", "all", "--manifest", manifestFile],
    { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, npm_config_user_agent: "" } },
  );
  if (runtimeSource !== join(root, "templates/runtime")) {
    rmSync(join(dir, "src/runtime"), { recursive: true, force: true });
    cpSync(runtimeSource, join(dir, "src/runtime"), { recursive: true });
  }
  for (const [file, source] of Object.entries(handlers)) writeFileSync(join(dir, "src/capabilities", file), source);
  transform?.(dir);
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: dir,
    stdio: "inherit",
  });
  return dir;
}

/**
 * templates/runtime (or BENCH_RUNTIME) compiled alone (emit only) into `<work>/out/runtime`, for
 * in-process apps; `work` gets a package.json saying ESM (as projects have) and node_modules linked to
 * the repo's.
 */
export function compileRuntime(work) {
  const src = join(work, "src");
  cpSync(runtimeSource, join(src, "runtime"), { recursive: true });
  writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
  // Resolve ajv, express, viem (and @types) from the repo, as the projects do through their node_modules.
  symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
  const config = join(work, "tsconfig.runtime.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(root, "tsconfig.json"),
      compilerOptions: {
        noEmit: false,
        noCheck: true,
        rootDir: src,
        outDir: join(work, "out"),
        declaration: false,
        sourceMap: false,
        incremental: false,
      },
      include: [src],
    }),
  );
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", config], { cwd: root, stdio: "inherit" });
  return join(work, "out/runtime");
}

/**
 * Starts `node <args>` (cwd, env added) and resolves once it printed `localhost:<port>` (or `ready`, for a
 * process that serves no HTTP) on stdout, with the child, its port and the ms from spawn to that line. stdout is drained afterwards (so a
 * server logging every job pays for writing its lines, as it would in a terminal or a log pipe).
 */
export function startServer(args, { cwd, env = {}, timeoutMs = 30_000, ready = /localhost:(\d+)/ } = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = ""; // kept (bounded) for the error message; warnings such as dev mode's are not news
  child.stderr.on("data", (chunk) => {
    if (err.length < 20_000) err += chunk;
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} printed no port within ${timeoutMs} ms:\n${out}${err}`));
    }, timeoutMs);
    const onData = (chunk) => {
      out += chunk;
      const match = ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.stdout.resume(); // drain from now on
      resolve({ child, port: match[1] === undefined ? undefined : Number(match[1]), ms: performance.now() - started, started });
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited (code ${code}) before listening:\n${out}${err}`));
    });
  });
}

/** Stops a child started by startServer and waits until it is gone. */
export function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGKILL");
  });
}

/** One request on `agent`; resolves with status, headers and body text. */
export function request(agent, port, { method = "GET", path = "/", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: "127.0.0.1", port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Closed-loop load: `concurrency` keep-alive connections each sending the next request as soon as the
 * last one was answered, for `seconds`. `next(i)` gives the i-th request ({method, path, headers,
 * body}); `check(res, i)` returns an error string or undefined. Resolves with requests/s, latency
 * percentiles (ms), the first errors, and (given the server's `pid`) the CPU-seconds the server used;
 * stops early (exhausted) when next() returns undefined.
 */
export async function load({ port, pid, concurrency = 16, seconds = 3, next, check }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  const errors = [];
  let sent = 0;
  let exhausted = false;
  const serverBefore = pid ? cpuSecondsOf(pid) : NaN;
  const clientBefore = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  let last = t0;
  const lane = async () => {
    while (performance.now() < until) {
      const i = sent++;
      const req = next(i);
      if (!req) return void (exhausted = true);
      const start = performance.now();
      const res = await request(agent, port, req);
      last = performance.now();
      latencies.push(last - start);
      const problem = check?.(res, i);
      if (problem && errors.length < 5) errors.push(problem);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    agent.destroy();
  }
  const serverCpu = pid ? cpuSecondsOf(pid) - serverBefore : NaN;
  const client = process.cpuUsage(clientBefore);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const elapsed = (last - t0) / 1000;
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    errors,
    exhausted,
    elapsed,
    /** CPU seconds the server process used in the window (when `pid` was given). */
    serverCpu,
    perServerCpuSecond: latencies.length / serverCpu,
    clientCpu: (client.user + client.system) / 1e6,
  };
}

/** CPU seconds (user + system, all threads) process `pid` has used so far, from /proc (Linux). */
export function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): utime and stime are fields 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(process.env.CLK_TCK ?? 100);

/** A bare Express 5 app with express.json(): GET /health, and POST /execute echoing like our echo job. */
export const EXPRESS_PEER = `import express from "express";

const app = express();
app.use(express.json());
app.get("/health", (_req, res) => {
  res.json({ name: "bench-agent", version: "1.0.0", status: "ok" });
});
app.post("/execute", (req, res) => {
  const { job_id, task } = req.body;
  res.json({
    service_version: "1.0",
    job_id,
    status: "completed",
    output: { text: task.input.text },
    completed_at: Math.floor(Date.now() / 1000),
  });
});
const server = app.listen(Number(process.env.PORT ?? 0), () => {
  console.log(\`listening on http://localhost:\${server.address().port}\`);
});
`;

/**
 * The in-process agent of the paid and ledger benches: one capability, `echo` ({text} in and out), priced
 * `priceAtomic`, its validators compiled by the runtime's own Ajv instances.
 */
export function echoAgent({ inputAjv, outputAjv }, priceAtomic) {
  const object = (text) => ({ type: "object", additionalProperties: false, required: ["text"], properties: { text } });
  return {
    name: "bench-agent",
    version: "1.0.0",
    capabilities: {
      echo: {
        name: "echo",
        declaration: {
          description: "echoes its text",
          pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
          input_schema: { text: { type: "string", required: true } },
          output_schema: { text: { type: "string" } },
        },
        priceAtomic,
        validateInput: inputAjv.compile(object({ type: "string", minLength: 1, maxLength: 100 })),
        validateOutput: outputAjv.compile(object({ type: "string" })),
        handler: async (input) => ({ text: input.text }),
      },
    },
  };
}

/**
 * Forks `script` with `args` and node flags `execArgv`, as a worker speaking IPC: it answers each message
 * {id, ...} with {id, ok, value | error}, and says {id: 0, ok, value} once ready. Resolves then with the child,
 * an ask(message) -> value, and that first value. stdout is drained (a server's log lines, as a log pipe).
 */
export function forkWorker(script, args, execArgv = []) {
  const c = fork(script, args, { stdio: ["ignore", "pipe", "pipe", "ipc"], execArgv });
  c.stdout.resume();
  let err = "";
  c.stderr.on("data", (chunk) => {
    if (err.length < 20_000) err += chunk;
  });
  const pending = new Map();
  let nextId = 1;
  c.on("message", (msg) => {
    pending.get(msg.id)?.(msg);
    pending.delete(msg.id);
  });
  c.on("exit", (code) => {
    for (const resolve of pending.values()) resolve({ ok: false, error: `exited (${code}): ${err}` });
  });
  const ask = (msg) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, (answer) => (answer.ok ? resolve(answer.value) : reject(new Error(answer.error))));
      c.send({ ...msg, id });
    });
  return new Promise((resolve, reject) => {
    pending.set(0, (answer) => (answer.ok ? resolve({ child: c, ask, value: answer.value }) : reject(new Error(answer.error))));
  });
}
