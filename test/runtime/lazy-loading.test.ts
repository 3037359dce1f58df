// What a server loads, seen from a real node process running the compiled runtime: dev mode's start-up
// and GET /health load neither Ajv, viem, the payment modules nor the optional clients; its first job
// loads Ajv (to compile that capability's validators) and still no viem; production loads the payment
// check and the paid-job steps up front, and viem only when it talks to a chain; the MCP SDK loads with
// the first MCP request; the console page's code with the first browser GET /; the discovery documents'
// builders with the first document asked for; the onchain feature's entry point loads no viem.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "runtime-lazy-"));
  cpSync(join(root, "templates/runtime"), join(work, "src/runtime"), { recursive: true });
  writeFileSync(join(work, "package.json"), '{ "type": "module" }\n');
  symlinkSync(join(root, "node_modules"), join(work, "node_modules"), "dir");
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      extends: join(root, "tsconfig.json"),
      compilerOptions: { noEmit: false, noCheck: true, rootDir: "src", outDir: "out" },
      include: ["src"],
    }),
  );
  await promisify(execFile)(process.execPath, [
    join(root, "node_modules/typescript/bin/tsc"),
    "-p",
    join(work, "tsconfig.json"),
  ]);
  // ESM imports, as the loader resolves them (require() calls are read from require.cache).
  writeFileSync(
    join(work, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(join(work, "imports.txt"))}, result.url + "\\n");
  return result;
}
`,
  );
  writeFileSync(
    join(work, "register.mjs"),
    `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`,
  );
  writeFileSync(
    join(work, "serve.mjs"),
    `import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const { createApp } = await import("./out/runtime/app.js");
const { inputAjv, outputAjv } = await import("./out/runtime/ajv.js");
const text = { type: "object", additionalProperties: false, required: ["text"], properties: { text: { type: "string" } } };
const agent = { name: "lazy", version: "1.0.0", capabilities: { echo: {
  name: "echo", priceAtomic: "10000",
  declaration: { pricing: { model: "per_job", amount: "0.01", currency: "USDC" }, input_schema: { text: { type: "string", required: true } }, output_schema: { text: { type: "string" } } },
  validateInput: inputAjv.compile(text), validateOutput: outputAjv.compile(text), handler: async (input) => ({ text: input.text }) } } };
const production = process.argv[2] === "production";
const settler = { settle: async () => { throw new Error("unused"); } };
const silent = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } };
const app = createApp(agent, production
  ? { env: {}, logger: silent, devMode: false, payment: { payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", network: "base-sepolia", settler } }
  : { env: {}, logger: silent, devMode: true });
const server = await new Promise((resolve) => { const s = app.listen(0, "127.0.0.1", () => resolve(s)); });
const url = "http://127.0.0.1:" + server.address().port;
const loaded = () => [...Object.keys(createRequire(import.meta.url).cache), ...readFileSync("imports.txt", "utf8").split("\\n")];
const report = {};
await new Promise((r) => setTimeout(r, 200)); // production's background loads
report.health = (await fetch(url + "/health")).status;
report.started = loaded();
const job = { service_version: "1.0", job_id: "j", task: { capability: "echo", input: { text: "hi" } }, deadline: Math.floor(Date.now() / 1000) + 60 };
report.job = (await fetch(url + "/execute", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(job) })).status;
report.afterJob = loaded();
const rpc = { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) };
report.mcp = (await fetch(url + "/mcp", rpc)).status;
report.afterMcp = loaded();
report.page = (await fetch(url + "/", { headers: { accept: "text/html" } })).status;
report.afterPage = loaded();
server.close();
console.log(JSON.stringify(report));
`,
  );
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

type Mode = "dev" | "production";

async function serve(mode: Mode) {
  writeFileSync(join(work, "imports.txt"), "");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "./register.mjs", "serve.mjs", mode],
    { cwd: work },
  );
  return JSON.parse(stdout) as {
    health: number;
    job: number;
    started: string[];
    afterJob: string[];
    mcp: number;
    afterMcp: string[];
    page: number;
    afterPage: string[];
  };
}

type Report = Awaited<ReturnType<typeof serve>>;

/** One server run per mode, its report shared by the tests (which only read it); one run at a time. */
const reports = new Map<Mode, Report>();
async function reportOf(mode: Mode): Promise<Report> {
  if (!reports.has(mode)) reports.set(mode, await serve(mode));
  return reports.get(mode)!;
}

/** `check` on the report of each mode. */
async function inEitherMode(check: (report: Report) => void): Promise<void> {
  for (const mode of ["dev", "production"] as const) check(await reportOf(mode));
}

const has = (loaded: string[], pattern: RegExp): string[] => loaded.filter((f) => pattern.test(f));
const OPTIONAL_CLIENTS = /node_modules\/(viem|@noble|ox|ioredis|prom-client)\//;
const AJV = /node_modules\/ajv(-formats)?\//;
const MCP = /node_modules\/@modelcontextprotocol\/|runtime\/mcp\/endpoint\.js$/;
const PAYMENT_CHECK =
  /runtime\/(payments\/(evm\/(verify|secp256k1|eip712)|facilitator)|jobs\/paid)\.js$/;

const PAGE = /runtime\/console\/(page|page-script|fields|guard-script)\.js$/;
const DOC_BUILDERS = /runtime\/discovery\/(agent-card|llms|openapi)\.js$/;

describe("lazy loading", () => {
  it("dev mode: /health answers without Ajv, viem or the payment modules; a job loads Ajv only", async () => {
    const dev = await reportOf("dev");
    expect(dev.health).toBe(200);
    expect(has(dev.started, /runtime\/app\.js$/)).not.toEqual([]); // the hooks see the runtime
    expect(has(dev.started, /node_modules\/express\//)).not.toEqual([]); // and require.cache works
    expect(has(dev.started, AJV)).toEqual([]);
    expect(has(dev.started, OPTIONAL_CLIENTS)).toEqual([]);
    expect(has(dev.started, PAYMENT_CHECK)).toEqual([]);
    expect(dev.job).toBe(200);
    expect(has(dev.afterJob, AJV)).not.toEqual([]);
    expect(has(dev.afterJob, OPTIONAL_CLIENTS)).toEqual([]);
    expect(has(dev.afterJob, PAYMENT_CHECK)).toEqual([]);
  }, 60_000);

  it("the MCP SDK loads with the first MCP request, in either mode", async () => {
    await inEitherMode((report) => {
      expect(has(report.started, MCP)).toEqual([]);
      expect(has(report.afterJob, MCP)).toEqual([]);
      expect(report.mcp).toBe(200);
      expect(has(report.afterMcp, /node_modules\/@modelcontextprotocol\/sdk\//)).not.toEqual([]);
      expect(has(report.afterMcp, /runtime\/mcp\/endpoint\.js$/)).not.toEqual([]);
    });
  }, 60_000);

  it("production: the payment check and paid-job steps load at start-up; viem never does without a chain", async () => {
    const production = await reportOf("production");
    expect(production.health).toBe(200);
    expect(has(production.started, AJV)).not.toEqual([]); // every validator compiled before any job
    expect(has(production.started, /runtime\/payments\/evm\/verify\.js$/)).not.toEqual([]);
    expect(has(production.started, /runtime\/jobs\/paid\.js$/)).not.toEqual([]);
    expect(production.job).toBe(402);
    expect(has(production.afterJob, OPTIONAL_CLIENTS)).toEqual([]);
  }, 60_000);

  it("the onchain feature's entry point loads no viem: its start-up route checks are plain JSON-RPC", async () => {
    writeFileSync(join(work, "imports.txt"), "");
    await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "./register.mjs",
        "--input-type=module",
        "-e",
        'await import("./out/runtime/payments/evm/onchain/module.js")',
      ],
      { cwd: work },
    );
    const loaded = readFileSync(join(work, "imports.txt"), "utf8").split("\n");
    expect(has(loaded, /runtime\/payments\/evm\/onchain\/route-health\.js$/)).not.toEqual([]);
    expect(has(loaded, OPTIONAL_CLIENTS)).toEqual([]);
  }, 60_000);

  it("the console page's code loads with the first browser GET /; no document builder loads before a document is asked for", async () => {
    await inEitherMode((report) => {
      expect(has(report.afterMcp, PAGE)).toEqual([]);
      expect(has(report.afterJob, DOC_BUILDERS)).toEqual([]); // (MCP tools use agent-card.js)
      expect(report.page).toBe(200);
      expect(has(report.afterPage, /runtime\/console\/page\.js$/)).not.toEqual([]);
    });
  }, 60_000);
});
