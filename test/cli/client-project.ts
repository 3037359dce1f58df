// Helpers for the `create-agent client` tests (test/cli/client.test.ts, test/chain/client.test.ts): the real
// CLI, a fresh strict TypeScript project to compile and run a generated client in, and an HTTP proxy that
// drops an answer the way a flaky network does.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { expect } from "vitest";
import { closeServer, listenLocal } from "../runtime/servers.js";

export const ROOT = join(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/create-agent.js");
const TSC = join(ROOT, "node_modules/.bin/tsc");

/**
 * Builds dist/ for bin/create-agent.js, without deleting it first (`npm run build` would). tsc writes every
 * file even when someone else's work in progress elsewhere in src/ has a type error, hence no reject.
 * Not under `npm test`, which built dist before any test (scripts/run-tests.mjs says so in the environment):
 * there tests run in parallel processes, and rewriting dist under another's running CLI breaks it.
 */
export async function buildCli(): Promise<void> {
  if (process.env.CREATE_AGENT_TEST_DIST_BUILT === "1") return;
  await execa("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: ROOT, reject: false });
}

/** Runs the built CLI; never throws on a non-zero exit. */
export function runCli(args: string[], cwd = ROOT) {
  return execa("node", [CLI, ...args], {
    cwd,
    reject: false,
    stdin: "ignore",
    env: { npm_config_user_agent: "" },
  });
}

export async function makeTemp(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `create-agent-${prefix}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * How the fresh project is compiled:
 * - "node": a Node project (@types/node, DOM lib), with skipLibCheck false: every declaration file the
 *   client pulls in is checked too;
 * - "bare": only what the client's install line installs: no @types/node. skipLibCheck stays on, because
 *   @x402/core's own declarations name Node's Buffer (which is not the client's doing).
 */
export type ProjectKind = "node" | "bare";

export interface TsProject {
  dir: string;
  write(file: string, text: string): Promise<void>;
  /** tsc over every .ts file in src/; `ok` is its exit code 0, `output` its diagnostics. */
  compile(): Promise<{ ok: boolean; output: string }>;
  /** node dist/<script>.js (after compile), with only the given environment (plus PATH). */
  run(
    script: string,
    args?: string[],
    env?: Record<string, string>,
  ): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }>;
}

/**
 * A temp project: package.json (type module), a strict tsconfig, node_modules linked to this repo's; with
 * `packages`, node_modules holds only those (each linked to the repo's copy), as a project that installed
 * exactly them.
 */
export async function tsProject(
  dir: string,
  kind: ProjectKind,
  packages?: string[],
): Promise<TsProject> {
  await mkdir(join(dir, "src"), { recursive: true });
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "client-user", private: true, type: "module" }, null, 2),
  );
  const compilerOptions = {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022", "DOM"],
    types: kind === "node" ? ["node"] : [],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    verbatimModuleSyntax: true,
    skipLibCheck: kind === "bare",
    rootDir: "src",
    outDir: "dist",
  };
  await writeFile(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions, include: ["src"] }, null, 2),
  );
  if (packages === undefined)
    await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  for (const name of packages ?? []) {
    const link = join(dir, "node_modules", name);
    await mkdir(dirname(link), { recursive: true });
    await symlink(join(ROOT, "node_modules", name), link, "dir");
  }
  return {
    dir,
    write: (file, text) => writeFile(join(dir, "src", file), text),
    async compile() {
      const r = await execa(TSC, ["-p", "tsconfig.json", "--pretty", "false"], {
        cwd: dir,
        reject: false,
      });
      return { ok: r.exitCode === 0, output: `${r.stdout}${r.stderr}` };
    },
    async run(script, args = [], env = {}) {
      const r = await execa("node", [join(dir, "dist", script), ...args], {
        cwd: dir,
        reject: false,
        extendEnv: false,
        env: { PATH: process.env.PATH ?? "", ...env },
        timeout: 60_000,
      });
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    },
  };
}

export interface ProxiedRequest {
  method: string;
  path: string;
  /** The PAYMENT-SIGNATURE (or X-PAYMENT) header, if the request carried one. */
  payment: string | undefined;
  body: string;
  /** The upstream status, or "dropped" when the proxy cut the caller off. */
  outcome: number | "dropped";
  /** The upstream status, also of an answer the proxy then dropped (undefined before it came). */
  upstream?: number;
}

/**
 * When to cut the caller's connection, for the first request that carries a payment:
 * - "after-answer": the service ran and settled the job; its answer is then lost on the way back;
 * - "while-running": at once, while the service is still running the job.
 */
export type DropMode = "after-answer" | "while-running" | "never";

export interface DropProxy {
  url: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/** Polls (GET /jobs/...) met by an outage: answered 503, or their connection reset, for `ms` from the first. */
export interface PollOutage {
  as: 503 | "reset";
  ms: number;
}

/**
 * An HTTP proxy in front of `target` that loses the answer to the first paid request; with `outage`, also
 * the polls of an async job for a while (a deploy or restart of the service).
 */
export async function dropProxy(
  target: string,
  mode: DropMode,
  outage?: PollOutage,
): Promise<DropProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  let dropped = mode === "never";
  let firstPoll: number | undefined;
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (outage && req.method === "GET" && req.url?.startsWith("/jobs/")) {
      firstPoll ??= Date.now();
      if (Date.now() - firstPoll < outage.ms) {
        const outcome = outage.as === "reset" ? "dropped" : 503;
        requests.push({ method: "GET", path: req.url, payment: undefined, body: "", outcome });
        if (outage.as === "reset") return void req.socket.destroy();
        res.writeHead(503, { "content-type": "text/html" });
        return void res.end("<html><body>503 Service Unavailable</body></html>");
      }
    }
    const header = req.headers["payment-signature"] ?? req.headers["x-payment"];
    const entry: ProxiedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      payment: Array.isArray(header) ? header[0] : header,
      body: body.toString("utf8"),
      outcome: "dropped",
    };
    requests.push(entry);
    const drop = entry.payment !== undefined && !dropped;
    if (drop) dropped = true;
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      async (answer) => {
        const data = await readBody(answer);
        entry.upstream = answer.statusCode ?? 0;
        if (drop) {
          if (mode === "after-answer") req.socket.destroy();
          return;
        }
        entry.outcome = answer.statusCode ?? 0;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(data);
      },
    );
    forwarded.on("error", () => req.socket.destroy());
    forwarded.end(body);
    if (drop && mode === "while-running") req.socket.destroy();
  });
  return { url: await listenLocal(server), requests, close: () => closeServer(server) };
}

async function readBody(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A temp "node" project holding the client `create-agent client <source>` generates as src/<file> and
 * `script` as src/pay.ts, compiled (the test fails here when either does not).
 */
export async function payingProject(
  prefix: string,
  source: string,
  file: string,
  script: string,
): Promise<{ project: TsProject; remove(): Promise<void> }> {
  const temp = await makeTemp(prefix);
  const project = await tsProject(temp.dir, "node");
  const r = await runCli(["client", source, "-o", join(temp.dir, "src", file)]);
  expect(r.exitCode, r.stderr).toBe(0);
  await project.write("pay.ts", script);
  const compiled = await project.compile();
  expect(compiled.ok, compiled.output).toBe(true);
  return { project, remove: temp.remove };
}

/**
 * What the generated client's pay.js prints when it refuses to pay a 0.01 USDC echo above `maxPrice`
 * (nothing signed).
 */
export const priceRefusal = (maxPrice: string) => ({
  ok: false,
  errorType: "price",
  status: 402,
  message: `echo failed: price (HTTP 402): refused to pay: the service asks 0.01 USDC, more than ${maxPrice} USDC (maxPrice); nothing was signed`,
});
