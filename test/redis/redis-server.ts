// Starts a throwaway redis-server for tests: 127.0.0.1, a free port, no persistence.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { freePort } from "../runtime/servers.js";

export interface RedisServer {
  /** redis://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The redis-server process (changes on restart). */
  readonly pid: number;
  /** Kills it (SIGTERM, SIGKILL after 2 s) and waits until it is gone. */
  stop(): Promise<void>;
  /** stop(), then a fresh (empty) server on the same port. */
  restart(): Promise<void>;
}

/** Longest life of one redis-server, even if the test run is killed before its teardown. */
const MAX_LIFE_SECONDS = 900;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

function redisBinary(): string {
  const binary = executable("/usr/bin/redis-server")
    ? "/usr/bin/redis-server"
    : findOnPath("redis-server");
  if (!binary) {
    throw new Error(
      "redis-server not found (not at /usr/bin/redis-server, not on PATH): the Redis ledger tests need it; " +
        "install Debian's redis-server package (apt-get install redis-server)",
    );
  }
  return binary;
}

interface Running {
  pid: number;
  stop(): Promise<void>;
}

async function spawnRedis(binary: string, port: number): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "ledger-redis-"));
  const args = [
    ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dir],
    ...["--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""],
  ];
  // `timeout` bounds redis-server's life even if the test process dies without cleaning up.
  const timeout = findOnPath("timeout");
  const child: ChildProcess = timeout
    ? spawn(timeout, ["--kill-after=5", String(MAX_LIFE_SECONDS), binary, ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => rmSync(dir, { recursive: true, force: true }));

  let pid = 0;
  // SIGTERM goes to redis-server itself; SIGKILL to it and to its `timeout` wrapper.
  const kill = (signal: NodeJS.Signals) => {
    for (const target of signal === "SIGKILL" ? [pid, child.pid] : [pid || child.pid]) {
      try {
        if (target) process.kill(target, signal);
      } catch {
        // already gone
      }
    }
  };
  // If the test process ends without stop() (a crash, a forgotten teardown), take redis with it.
  const killOnExit = () => kill("SIGKILL");
  process.once("exit", killOnExit);
  void exited.then(() => process.off("exit", killOnExit));
  child.unref(); // and never let it keep the test runner alive

  let output = "";
  pid = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error("redis-server was not ready within 10 s")),
      10_000,
    );
    function fail(error: Error) {
      clearTimeout(timer);
      kill("SIGKILL");
      reject(new Error(`${error.message} (${binary} on port ${port})\n${output}`));
    }
    const early = (code: number | null) =>
      fail(new Error(`redis-server exited early (code ${code})`));
    child.once("error", fail);
    child.once("exit", early);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      // Log lines start with "<pid>:<role>", e.g. "4242:M 01 Jan 2025 ... Ready to accept connections tcp".
      const ready = /^(\d+):\w .*Ready to accept connections/m.exec(output);
      if (ready) {
        clearTimeout(timer);
        child.off("exit", early);
        resolve(Number(ready[1]));
      }
    });
  });
  output = ""; // stop buffering; the listener stays and keeps draining the pipe
  for (const pipe of [child.stdout, child.stderr])
    (pipe as unknown as { unref?: () => void }).unref?.();

  return {
    pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      kill("SIGTERM");
      const hard = setTimeout(() => kill("SIGKILL"), 2000);
      await exited;
      clearTimeout(hard);
    },
  };
}

export async function startRedis(): Promise<RedisServer> {
  const binary = redisBinary();
  const port = await freePort();
  let running = await spawnRedis(binary, port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return running.pid;
    },
    stop: () => running.stop(),
    async restart() {
      await running.stop();
      running = await spawnRedis(binary, port);
    },
  };
}
