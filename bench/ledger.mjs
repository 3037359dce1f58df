// Paid jobs per second with a zero-cost settler: two instances sharing one Redis ledger (REDIS_URL)
// against one instance on the in-memory ledger, per instance, interleaved in one run.
//   A = one instance, memory ledger: jobs/s.
//   B = two instances, one Redis, the load split evenly: jobs/s per instance (total / 2).
// Every job is a real paid job: a distinct EIP-3009 authorization (signed before measuring, verified
// by the server's offline signature check), reserved, run, "settled" by a settler that costs
// nothing, and marked spent in the ledger. Each measurement starts on a fresh ledger (a rebuilt app
// for memory, a new key prefix for Redis), so the pre-signed pool is reused across measurements
// but never twice within one ledger. Because this may run on a 2-core machine (two instances,
// redis-server and the load generator share the cores), it also reports jobs per server CPU-second.
// It also traces (Redis MONITOR, outside the measured windows) the Redis round trips of a paid job.
// Prints the ratios last: `ratio <name> <median> (<min>..<max>)`, median of the per-pair ratios.
// Run: node bench/ledger.mjs (needs redis-server: Debian's redis-server package).
// Knobs: LEDGER_BENCH_PAIRS (7), LEDGER_BENCH_SECONDS (4 per measurement), LEDGER_BENCH_JOBS
// (4000 pre-signed authorizations), LEDGER_BENCH_CONCURRENCY (16 in flight per instance).
import { execFile, fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createServer } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { echoAgent } from "./lib-server.mjs";
import { DOMAIN, PAY_TO, PAYER_KEY, PRICE } from "./eip3009.mjs";

const root = new URL("..", import.meta.url).pathname;

let interrupted = false; // by a signal: errors from the work being torn down are not news

if (process.argv[2] === "--worker") await worker(process.argv[3]);
else
  await main().catch((err) => {
    if (interrupted) return;
    console.error(err);
    process.exitCode = 1;
  });

// ---------------------------------------------------------------------------------------------
// Worker: one app instance on 127.0.0.1, port 0; memory ledger, or Redis when REDIS_URL is set.
// Talks to the parent over IPC: {id, type: "reset" | "cpu"} -> {id, ok, value | error}.
// ---------------------------------------------------------------------------------------------
async function worker(runtimeDir) {
  process.on("disconnect", () => process.exit(0)); // the parent is gone: never linger
  const load = (file) => import(pathToFileURL(join(runtimeDir, file)).href);
  const { createApp, runtimeOf } = await load("app.js");
  const { inputAjv, outputAjv } = await load("ajv.js");

  const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
  const transaction = `0x${"ab".repeat(32)}`;
  const settler = { settle: async (p) => ({ transaction, network: p.network, payer: p.payer }) };
  const agent = echoAgent({ inputAjv, outputAjv }, PRICE);

  let current;
  /** A fresh app, hence a fresh ledger: in memory, or on Redis under a new key prefix. */
  async function rebuild(prefix) {
    const env = process.env.REDIS_URL
      ? { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: prefix }
      : {};
    // MAX_JOBS_PER_PAYER on (each job takes a payer slot) but above the lanes of one payer: none refused.
    const app = createApp(agent, {
      env,
      logger: silent,
      devMode: false,
      payment: { payTo: PAY_TO, network: "base-sepolia", settler, maxJobsPerPayer: 1000 },
    });
    if (!(await runtimeOf(app).ledger.ping())) throw new Error("the ledger does not answer");
    const old = current;
    current = app;
    if (old) await runtimeOf(old).ledger.close();
    return runtimeOf(app).ledger.describe();
  }

  await rebuild("bench-ledger-0:");
  const server = http.createServer((req, res) => current(req, res));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));

  process.on("message", async (msg) => {
    try {
      let value;
      if (msg.type === "reset") value = await rebuild(msg.prefix);
      else if (msg.type === "cpu") {
        const { user, system } = process.cpuUsage();
        value = (user + system) / 1e6;
      } else throw new Error(`unknown request ${msg.type}`);
      process.send({ id: msg.id, ok: true, value });
    } catch (err) {
      process.send({ id: msg.id, ok: false, error: String(err?.stack ?? err) });
    }
  });
  process.send({ id: 0, ok: true, value: server.address().port });
}

// ---------------------------------------------------------------------------------------------
// Parent: compile the runtime, start redis-server and three workers, sign, measure, report.
// ---------------------------------------------------------------------------------------------
async function main() {
  const PAIRS = Number(process.env.LEDGER_BENCH_PAIRS ?? 7);
  const SECONDS = Number(process.env.LEDGER_BENCH_SECONDS ?? 4);
  const POOL = Number(process.env.LEDGER_BENCH_JOBS ?? 4000);
  const CONCURRENCY = Number(process.env.LEDGER_BENCH_CONCURRENCY ?? 16);
  const WATCHDOG_SECONDS = 280; // a hard bound on the whole run; the jobs' deadlines are far beyond it

  // Every process started here (ChildProcess objects, plus redis-server's own pid), stopped on
  // any way out: the end, an error, Ctrl-C, the watchdog.
  const children = [];
  const clients = []; // Redis connections of this process: they would reconnect forever
  const work = join(root, ".tmp", `bench-ledger-${process.pid}`); // .tmp/ is gitignored
  const redisDir = mkdtempSync(join(tmpdir(), "bench-ledger-redis-"));
  const running = (c) => c.exitCode === null && c.signalCode === null;
  /** Last resort, synchronous (also on process exit): SIGKILL whatever is left, remove the folders. */
  const killNow = () => {
    for (const c of [...children].reverse()) {
      try {
        // A bare pid (redis-server's) only while its parent still runs: never a pid reused since.
        if (c.parent ? running(c.parent) : running(c)) process.kill(c.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(work, { recursive: true, force: true });
    rmSync(redisDir, { recursive: true, force: true });
  };
  /** Workers SIGKILLed, redis-server SIGTERMed through its `timeout` wrapper; waits (up to 3 s) until all are reaped. */
  let stopping;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const client of clients) client.disconnect();
      const live = children.filter((c) => !c.parent && running(c));
      const gone = live.map((c) => new Promise((resolve) => c.once("exit", resolve)));
      for (const c of live) c.kill(c.isRedis ? "SIGTERM" : "SIGKILL");
      await Promise.race([Promise.all(gone), new Promise((r) => setTimeout(r, 3000).unref())]);
      killNow();
    })());
  process.on("exit", killNow);
  for (const [signal, number] of [
    ["SIGINT", 2],
    ["SIGTERM", 15],
    ["SIGHUP", 1],
  ])
    process.on(signal, () => {
      interrupted = true;
      void stopAll().finally(() => process.exit(128 + number));
    });
  const watchdog = setTimeout(() => {
    console.error(`bench/ledger.mjs: still running after ${WATCHDOG_SECONDS} s; stopping`);
    void stopAll().finally(() => process.exit(1));
  }, WATCHDOG_SECONDS * 1000);
  watchdog.unref();

  const loadStart = loadavg()[0].toFixed(2);
  try {
    // 1. The runtime, compiled once (emit only: type errors are `npm run typecheck`'s job).
    let started = performance.now();
    mkdirSync(work, { recursive: true });
    writeFileSync(
      join(work, "tsconfig.json"),
      JSON.stringify({
        extends: "../../tsconfig.json",
        compilerOptions: {
          noEmit: false,
          noCheck: true,
          rootDir: "../../templates/runtime",
          outDir: "./runtime",
          declaration: false,
          sourceMap: false,
          incremental: false,
        },
        include: ["../../templates/runtime"],
      }),
    );
    await new Promise((resolve, reject) => {
      const tsc = execFile(
        process.execPath,
        [join(root, "node_modules/typescript/bin/tsc"), "-p", join(work, "tsconfig.json")],
        { cwd: root },
        (err, stdout, stderr) =>
          err
            ? reject(new Error(`compiling templates/runtime failed:\n${stdout}${stderr}`))
            : resolve(),
      );
      children.push(tsc);
    });
    const runtimeDir = join(work, "runtime");
    const compileSeconds = (performance.now() - started) / 1000;

    // 2. redis-server (no persistence, bounded life) and the three instances.
    const redis = await startRedis(redisDir, children);
    const { Redis } = await import("ioredis");
    const admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    clients.push(admin);
    admin.on("error", () => {});
    await admin.connect();
    const spawnWorker = (env) => startWorker(runtimeDir, env, children);
    const [memory, red1, red2] = await Promise.all([
      spawnWorker({}),
      spawnWorker({ REDIS_URL: redis.url }),
      spawnWorker({ REDIS_URL: redis.url }),
    ]);

    // 3. Every authorization signed before anything is measured.
    started = performance.now();
    const { privateKeyToAccount } = await import("viem/accounts");
    const { TRANSFER_WITH_AUTHORIZATION } = await import(
      pathToFileURL(join(runtimeDir, "payments/x402.js")).href
    );
    const payer = privateKeyToAccount(PAYER_KEY);
    const now = Math.floor(Date.now() / 1000);
    const validBefore = String(now + 600);
    const deadline = now + 540; // validBefore must cover deadline + 15 s
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
    for (let i = 0; i < POOL; i++) {
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve)); // let Ctrl-C in
      const authorization = {
        from: payer.address,
        to: PAY_TO,
        value: PRICE,
        validAfter: "0",
        validBefore,
        nonce: `0x${randomBytes(32).toString("hex")}`,
      };
      const signature = await payer.signTypedData({
        domain: DOMAIN,
        types: TRANSFER_WITH_AUTHORIZATION,
        primaryType: "TransferWithAuthorization",
        message: {
          ...authorization,
          value: BigInt(authorization.value),
          validAfter: 0n,
          validBefore: BigInt(validBefore),
        },
      });
      const payment = {
        x402Version: 2,
        resource: { url: "http://127.0.0.1/execute" },
        accepted,
        payload: { signature, authorization },
      };
      const body = Buffer.from(
        JSON.stringify({
          service_version: "1.0",
          job_id: `bench-${i}`,
          task: { capability: "echo", input: { text: "hello" } },
          deadline,
        }),
      );
      requests.push({
        body,
        headers: {
          "content-type": "application/json",
          "content-length": String(body.length),
          "payment-signature": Buffer.from(JSON.stringify(payment)).toString("base64"),
        },
      });
    }
    const signSeconds = (performance.now() - started) / 1000;
    const evens = requests.filter((_, i) => i % 2 === 0);
    const odds = requests.filter((_, i) => i % 2 === 1);

    // 4. Measurements.
    let generation = 0;
    /** CPU seconds redis-server has used so far. */
    const redisCpu = async () => {
      const info = await admin.info("cpu");
      const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
      return field("used_cpu_user") + field("used_cpu_sys");
    };

    async function measure(mode, seconds) {
      generation += 1;
      const prefix = `bench-ledger-${generation}:`;
      const instances =
        mode === "A"
          ? [{ w: memory, pool: requests }]
          : [
              { w: red1, pool: evens },
              { w: red2, pool: odds },
            ];
      const ledgers = await Promise.all(instances.map((x) => x.w.ask({ type: "reset", prefix })));
      for (const described of ledgers)
        // the ledger each side is meant to measure, and no other
        if (/Redis/.test(described) !== (mode === "B"))
          throw new Error(`${mode}: wrong ledger: ${described}`);
      const redisBefore = await redisCpu();
      const cpuBefore = await Promise.all(instances.map((x) => x.w.ask({ type: "cpu" })));
      const loadBefore = process.cpuUsage();

      const t0 = performance.now();
      const until = t0 + seconds * 1000;
      let last = t0;
      const results = await Promise.all(
        instances.map(async ({ w, pool }) => {
          const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
          const r = { ok: 0, errors: [], exhausted: false };
          let next = 0;
          const lane = async () => {
            while (performance.now() < until) {
              const k = next++;
              if (k >= pool.length) return void (r.exhausted = true);
              const res = await send(agent, w.port, pool[k]);
              last = performance.now();
              if (res.status === 200) {
                if (r.ok++ === 0 && JSON.parse(res.body).status !== "completed")
                  r.errors.push(`200 without a completed job: ${res.body.slice(0, 300)}`);
              } else r.errors.push(`HTTP ${res.status}: ${res.body.slice(0, 300)}`);
            }
          };
          try {
            await Promise.all(Array.from({ length: CONCURRENCY }, lane));
          } finally {
            agent.destroy();
          }
          return r;
        }),
      );
      const elapsed = (last - t0) / 1000;
      const cpuAfter = await Promise.all(instances.map((x) => x.w.ask({ type: "cpu" })));
      const loadCpu = process.cpuUsage(loadBefore);
      const redisAfter = await redisCpu();

      const errors = results.flatMap((r) => r.errors);
      const jobs = results.reduce((sum, r) => sum + r.ok, 0);
      if (errors.length > 0)
        throw new Error(
          `${mode}: ${errors.length} of ${jobs + errors.length} paid jobs were not answered 200; first: ${errors[0]}`,
        );
      const serverCpu = cpuAfter.reduce((sum, c, i) => sum + c - cpuBefore[i], 0);
      return {
        mode,
        jobs,
        elapsed,
        perInstance: jobs / elapsed / instances.length,
        serverCpu,
        perCpu: jobs / serverCpu,
        redisCpu: redisAfter - redisBefore,
        loadCpu: (loadCpu.user + loadCpu.system) / 1e6,
        exhausted: results.some((r) => r.exhausted),
      };
    }

    // Warm-up: both sides, one full window each, discarded (JIT, connections, Redis scripts).
    await measure("A", SECONDS);
    await measure("B", SECONDS);

    const pairs = [];
    for (let i = 0; i < PAIRS; i++) {
      const order = i % 2 === 0 ? ["A", "B"] : ["B", "A"];
      const got = {};
      for (const mode of order) got[mode] = await measure(mode, SECONDS);
      pairs.push({ order: order.join(","), a: got.A, b: got.B });
    }

    // Redis traffic of one paid job, traced with MONITOR (outside the measured windows): commands
    // the instances send (round trips) apart from those their Lua scripts run inside Redis.
    const TRACED = 100;
    await Promise.all(
      [red1, red2].map((w) => w.ask({ type: "reset", prefix: "bench-ledger-trace:" })),
    );
    const monitor = await admin.duplicate().monitor();
    clients.push(monitor);
    const sent = {};
    const inScripts = {};
    monitor.on("monitor", (_time, args, source) => {
      const name = String(args[0]).toUpperCase();
      const tally = source === "lua" ? inScripts : sent;
      tally[name] = (tally[name] ?? 0) + 1;
    });
    const tracers = [red1, red2].map((w) => ({ w, agent: new http.Agent({ keepAlive: true }) }));
    for (let i = 0; i < TRACED; i++) {
      const { w, agent } = tracers[i % 2];
      const res = await send(agent, w.port, requests[i]);
      if (res.status !== 200)
        throw new Error(`trace: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    }
    for (const t of tracers) t.agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last MONITOR lines
    monitor.disconnect();
    await admin.quit().catch(() => admin.disconnect());
    const perJob = (tally) => {
      const total = Object.values(tally).reduce((sum, n) => sum + n, 0);
      const parts = Object.entries(tally).map(([name, n]) => `${name} ${(n / TRACED).toFixed(2)}`);
      return `${(total / TRACED).toFixed(2)} (${parts.join(", ")})`;
    };

    // 5. Report.
    const f = (x, d = 0) => x.toFixed(d);
    const pad = (s, n) => String(s).padStart(n);
    console.log(
      `ledger bench: ${availableParallelism()} cores, load average ${loadStart} at start, ${loadavg()[0].toFixed(2)} at end, ` +
        `${PAIRS} pairs of ${SECONDS} s windows, ${CONCURRENCY} in flight per instance, ` +
        `${POOL} authorizations signed in ${f(signSeconds, 1)} s, runtime compiled in ${f(compileSeconds, 1)} s`,
    );
    console.log(
      "A: 1 instance, memory ledger.  B: 2 instances, one Redis; per instance = total / 2.  " +
        "CPU-s: server processes only (redis-server shown apart).",
    );
    console.log(
      "pair order  A jobs/s  B jobs/s/inst  ratio   A jobs/CPU-s  B jobs/CPU-s  ratio   " +
        "A srv CPU  B srv CPU  redis CPU  loadgen A/B  B incl. redis",
    );
    for (const [i, { order, a, b }] of pairs.entries()) {
      console.log(
        [
          pad(i + 1, 4),
          pad(order, 5),
          pad(f(a.perInstance) + (a.exhausted ? "*" : ""), 9),
          pad(f(b.perInstance) + (b.exhausted ? "*" : ""), 14),
          pad(f(b.perInstance / a.perInstance, 2), 6),
          pad(f(a.perCpu), 13),
          pad(f(b.perCpu), 13),
          pad(f(b.perCpu / a.perCpu, 2), 6),
          pad(`${f(a.serverCpu, 2)} s`, 10),
          pad(`${f(b.serverCpu, 2)} s`, 10),
          pad(`${f(b.redisCpu, 2)} s`, 10),
          pad(`${f(a.loadCpu, 1)}/${f(b.loadCpu, 1)} s`, 12),
          pad(f(b.jobs / (b.serverCpu + b.redisCpu)), 14),
        ].join(" "),
      );
    }
    console.log(
      `Redis per paid job (MONITOR over ${TRACED} jobs): round trips ${perJob(sent)}; ` +
        `commands run inside its scripts ${perJob(inScripts)}`,
    );
    if (pairs.some((p) => p.a.exhausted || p.b.exhausted))
      console.log(
        "* the pre-signed pool ran out before the window ended: raise LEDGER_BENCH_JOBS for a full window",
      );
    const summary = (xs) => {
      const sorted = [...xs].sort((x, y) => x - y);
      const mid = sorted.length / 2;
      const median =
        sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
      return `${median.toFixed(2)} (${sorted[0].toFixed(2)}..${sorted.at(-1).toFixed(2)})`;
    };
    console.log(
      `ratio ledger-redis-2x-per-cpu-second ${summary(pairs.map((p) => p.b.perCpu / p.a.perCpu))}`,
    );
    console.log(
      `ratio ledger-redis-2x-per-instance ${summary(pairs.map((p) => p.b.perInstance / p.a.perInstance))}`,
    );
  } finally {
    clearTimeout(watchdog);
    await stopAll();
  }
}

/** One paid job; resolves with the status and (text) body. */
function send(agent, port, { body, headers }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: "127.0.0.1", port, method: "POST", path: "/execute", headers },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Forks a worker; resolves once it listens, with its port and an IPC ask(). */
function startWorker(runtimeDir, env, children) {
  const child = fork(new URL(import.meta.url).pathname, ["--worker", runtimeDir], {
    env: { ...process.env, REDIS_URL: "", ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  children.push(child);
  const pending = new Map();
  let nextId = 1;
  let dead;
  child.on("message", (msg) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(new Error(`worker: ${msg.error}`));
  });
  child.on("exit", (code, signal) => {
    dead = new Error(`a worker exited (code ${code}, signal ${signal})`);
    for (const p of pending.values()) p.reject(dead);
    pending.clear();
  });
  const ask = (msg) =>
    new Promise((resolve, reject) => {
      if (dead) return reject(dead);
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...msg, id });
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("a worker did not start within 30 s")), 30_000);
    pending.set(0, {
      resolve: (port) => {
        clearTimeout(timer);
        resolve({ port, ask, child });
      },
      reject: (err) => {
        clearTimeout(timer);
        reject(err);
      },
    });
  });
}

function findOnPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      if (dir) {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

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

/** redis-server on 127.0.0.1 and a free port, no persistence, its life bounded by `timeout`. */
async function startRedis(dir, children) {
  const binary = findOnPath("redis-server") ?? "/usr/bin/redis-server";
  const port = await freePort();
  const args = [
    ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dir],
    ...["--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""],
  ];
  const timeout = findOnPath("timeout");
  const child = timeout
    ? spawn(timeout, ["--kill-after=5", "300", binary, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.isRedis = true; // stopped with SIGTERM: `timeout` passes it on and reaps redis-server
  children.push(child);
  let output = "";
  let ready = false; // then its output is only drained
  const pid = await new Promise((resolve, reject) => {
    const early = (code) =>
      fail(
        `exited early (code ${code}${code === 127 ? ": not installed? apt-get install redis-server" : ""})`,
      );
    const fail = (why) => {
      clearTimeout(timer);
      child.off("exit", early);
      reject(new Error(`redis-server (${binary}, port ${port}) ${why}\n${output}`));
    };
    const timer = setTimeout(() => fail("was not ready within 10 s"), 10_000);
    child.once("error", (err) =>
      fail(`could not start: ${err.message} (install Debian's redis-server)`),
    );
    child.once("exit", early);
    child.stderr.on("data", (chunk) => {
      if (!ready) output += chunk;
    });
    child.stdout.on("data", (chunk) => {
      if (ready) return;
      output += chunk;
      // Log lines start with "<pid>:<role>", e.g. "4242:M 01 Jan 2025 ... Ready to accept connections tcp".
      const match = /^(\d+):\w .*Ready to accept connections/m.exec(output);
      if (match) {
        ready = true;
        clearTimeout(timer);
        child.off("exit", early);
        resolve(Number(match[1]));
      }
    });
  });
  // redis-server itself (timeout's child), for the last-resort SIGKILL.
  if (pid !== child.pid) children.push({ pid, parent: child });
  return { url: `redis://127.0.0.1:${port}`, pid };
}
