#!/usr/bin/env node
// Prints issue 27's figures (size of what a project carries and loads, import circles, family branches, long
// functions and files, duplication, install sizes), each with its goal and how it was measured, for a project
// made by this clone's CLI (`create-agent my-agent --yes` in a temporary folder). Informative only: it exits 0
// whatever the figures are (CI runs it after the tests so a regression shows in the log of the change).
//
//   node scripts/figures.mjs                  everything (about a minute: scaffold + install, production install)
//   node scripts/figures.mjs --no-prod-install   skip the `npm ci --omit=dev` copy (the slow row)
//   node scripts/figures.mjs --quick          no install: skips the rows that need one (loaded lines, sizes)
//   --no-build     do not run `npm run build` first (dist/ is already current)
//   --keep         keep the temporary folder (its path is printed)
//   --first-command   also time the README's first command on a clean clone with an empty npm cache (~30 s)
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { branchHits, fileLines, functionsOver, importGraph, listTs } from "./figures-measure.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = new Set(process.argv.slice(2));
const quick = args.has("--quick");
const prodInstall = !quick && !args.has("--no-prod-install");
const started = Date.now();
const rows = [];
const notes = [];

/** One row of the table: the measure, its value, the goal, and how it was measured. */
function row(measure, value, goal, how) {
  rows.push({ measure, value, goal, how });
}
const fmt = (n) => n.toLocaleString("en-US");
const relPosix = (from, to) => relative(from, to).split(sep).join("/");

function run(cmd, argv, cwd, extra = {}) {
  const result = spawnSync(cmd, argv, { cwd, encoding: "utf8", ...extra });
  if (result.status !== 0) {
    throw new Error(
      `${cmd} ${argv.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** Bytes under a folder, as du counts them (apparent size would hide the block overhead of many small files). */
function duMegabytes(dir) {
  const out = run("du", ["-sk", dir], root);
  return Math.round(Number(out.split(/\s/)[0]) / 1024);
}

const work = mkdtempSync(join(tmpdir(), "create-agent-figures-"));

async function main() {
  if (!args.has("--no-build")) run("npm", ["run", "build"], root);
  const createArgs = ["my-agent", "--yes", ...(quick ? ["--no-install", "--no-git"] : [])];
  run(process.execPath, [join(root, "bin", "create-agent.js"), ...createArgs], work);
  const project = join(work, "my-agent");
  const runtime = join(project, "src", "runtime");
  const projectTs = join(project, "node_modules", "typescript");
  const tsFrom = existsSync(projectTs) ? projectTs : join(root, "node_modules", "typescript");
  const ts = createRequire(import.meta.url)(tsFrom);
  notes.push(
    `project: create-agent ${createArgs.join(" ")} (this clone's bin/create-agent.js)` +
      `; TypeScript ${ts.version} from ${existsSync(projectTs) ? "the project" : "this clone (no project install)"}`,
  );

  // 1. What a project carries.
  const runtimeFiles = listTs(runtime);
  const carried = runtimeFiles.reduce((sum, f) => sum + fileLines(f), 0);
  row(
    "runtime lines carried by a default project",
    `${fmt(carried)} in ${runtimeFiles.length} files`,
    "<= 7,000",
    "wc -l of the project's src/runtime/**/*.ts",
  );

  // 2. What it loads in production.
  if (quick)
    row(
      "runtime lines loaded by a default project in production",
      "skipped (--quick: no install)",
      "<= 5,500",
      "-",
    );
  else {
    const loaded = await loadedInProduction(project);
    row(
      "runtime lines loaded by a default project in production",
      `${fmt(loaded.lines)} in ${loaded.files} files (${fmt(loaded.startLines)} at start-up)`,
      "<= 5,500",
      "npm run build; NODE_ENV=production node --import <load hook> dist/server.js (PAY_TO, X402_NETWORK=base-sepolia, " +
        "X402_FACILITATOR_URL = a local stub answering GET /supported); after GET /health, GET /about and an unpaid " +
        "POST /execute (402): wc -l of the src/runtime .ts file of every dist/runtime .js file the ESM loader loaded",
    );
  }

  // 3. Import circles and folders importing each other.
  const graph = importGraph(ts, runtimeFiles, runtime);
  row(
    "import circles in the runtime / folder pairs importing both ways",
    `${graph.circles.length} / ${graph.subfolderPairs.length} (${graph.folderPairs.length} with the top level)`,
    "0 / 0",
    "static value imports and re-exports between src/runtime files (not `import type`, not imports binding only types, " +
      "not lazy import()), parsed with TypeScript; circles = strongly connected groups of files; a folder pair = two " +
      "folders each importing the other (first figure: subfolders; in brackets: the top level `.` counted as one too)",
  );
  notes.push(`circles counting import type and lazy import() as well: ${graph.withTypesAndLazy}`);
  for (const circle of graph.circles) notes.push(`circle: ${circle.join(" -> ")}`);
  for (const [a, b] of graph.folderPairs) notes.push(`both ways: ${a} <-> ${b}`);

  // 4. Family branches outside the family folders.
  const hits = branchHits(runtimeFiles, runtime);
  row(
    "family branches outside family folders",
    `${hits.length} in ${new Set(hits.map((h) => h.file)).size} files`,
    "0",
    'grep of src/runtime for isSolana( isEvm( family ===/!== "svm"/"evm" startsWith("solana" startsWith("eip155" ' +
      "outside payments/evm/, payments/svm/, features.ts and a payments/famil*.ts registry",
  );
  for (const h of hits) notes.push(`family branch: ${h.file}:${h.line}: ${h.text}`);

  // 5. Long functions and files.
  const sources = [
    ...runtimeFiles.map((f) => ({ file: f, label: `runtime/${relPosix(runtime, f)}` })),
    ...listTs(join(root, "src")).map((f) => ({ file: f, label: relPosix(root, f) })),
    ...listTs(join(root, "templates", "client")).map((f) => ({
      file: f,
      label: relPosix(root, f),
    })),
  ];
  const long = sources.flatMap(({ file, label }) =>
    functionsOver(ts, file, 60).map((fn) => ({ ...fn, label })),
  );
  row(
    "functions over 60 lines (runtime + src + client, own lines)",
    `${long.length}`,
    "<= 10",
    "project's src/runtime + this clone's src/ and templates/client/, parsed with TypeScript: every function, method, " +
      "arrow and accessor, its lines from its first token to its last minus the lines of the functions nested in it",
  );
  for (const fn of long.sort((a, b) => b.own - a.own))
    notes.push(`long function: ${fn.own} ${fn.label}:${fn.line} ${fn.name}`);
  const excluded = (label) => PORTS.some((re) => re.test(label));
  const bigFiles = sources
    .map(({ file, label }) => ({ label, lines: fileLines(file) }))
    .filter((f) => f.lines > 300 && !excluded(f.label))
    .sort((a, b) => b.lines - a.lines);
  row(
    "files over 300 lines outside generated/golden data and the oracle-checked ports",
    `${bigFiles.length}`,
    "<= 4",
    "wc -l, same files as the functions (no generated or golden file is among them); oracle-checked ports left out: " +
      "runtime secp256k1.ts and keccak.ts (checked against @noble), src/generate/print/* (prettier), " +
      "src/generate/type-text.ts (json-schema-to-typescript), src/generate/template-render.ts (Handlebars), " +
      "src/upgrade/merge3.ts (git merge-file)",
  );
  for (const f of bigFiles) notes.push(`long file: ${f.lines} ${f.label}`);

  // 6. Duplicates.
  row(
    "`duplicates` pairs in src + templates / in test",
    duplicatePairs(),
    "<= 8 / <= 30",
    "`duplicates --most 200 --seconds 60` on a copy of src/ and templates/ together, then on test/ (its first line: the count)",
  );

  // 7. Install sizes.
  if (quick)
    row(
      "default project node_modules / production install",
      "skipped (--quick: no install)",
      "<= 150 MB / <= 60 MB",
      "-",
    );
  else {
    const full = duMegabytes(join(project, "node_modules"));
    let prod = "skipped (--no-prod-install)";
    if (prodInstall) {
      const copy = join(work, "prod");
      cpSync(project, copy, {
        recursive: true,
        filter: (src) => !src.includes(`${sep}node_modules`) && !src.includes(`${sep}.git`),
      });
      run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline"], copy);
      prod = `${fmt(duMegabytes(join(copy, "node_modules")))} MB`;
    }
    row(
      "default project node_modules / production install",
      `${fmt(full)} MB / ${prod}`,
      "<= 150 MB / <= 60 MB",
      "du -sk of the project's node_modules (as create-agent installed it); then npm ci --omit=dev in a copy of the " +
        "project without node_modules, du -sk of its node_modules",
    );
  }
  firstCommand();

  print();
}

/**
 * The README's first command, as on a fresh machine: a clean clone of this repository's HEAD and an empty npm
 * cache (the registry is the only source), timed from `npm ci --omit=dev` to the installed project.
 */
function firstCommand() {
  const measure = "README's first command on a fresh machine";
  const how =
    "--first-command: git clone of HEAD, npm_config_cache = an empty folder, " +
    "time `npm ci --omit=dev && node bin/create-agent.js ../my-agent --yes` (load average printed beside it)";
  if (!args.has("--first-command"))
    return row(measure, "skipped (pass --first-command)", "<= 40 s", how);
  const clone = join(work, "clone");
  run("git", ["clone", "-q", root, clone], root);
  const env = { ...process.env, npm_config_cache: join(work, "empty-npm-cache") };
  const load = loadavg()[0].toFixed(2);
  const t0 = Date.now();
  run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund"], clone, { env });
  run(process.execPath, ["bin/create-agent.js", join(work, "first-agent"), "--yes"], clone, {
    env,
  });
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  row(measure, `${seconds} s (load average ${load} at start)`, "<= 40 s", how);
}

/** Ports checked against an oracle (left out of the long-file count, as the issue says). */
const PORTS = [
  /(^|\/)secp256k1\.ts$/,
  /(^|\/)keccak\.ts$/,
  /^src\/generate\/print\//,
  /^src\/generate\/type-text\.ts$/,
  /^src\/generate\/template-render\.ts$/,
  /^src\/upgrade\/merge3\.ts$/,
];

function print() {
  const widths = [0, 1, 2].map((i) =>
    Math.max(...rows.map((r) => [r.measure, r.value, r.goal][i].length)),
  );
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  console.log(line(["measure", "value", "goal"].map((c, i) => c.padEnd(widths[i]))));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) console.log(line([r.measure, r.value, r.goal]));
  console.log("\nHow each was measured:");
  for (const r of rows) console.log(`- ${r.measure}: ${r.how}`);
  console.log("\nDetails:");
  for (const n of notes) console.log(`  ${n}`);
  console.log(`\n(figures took ${Math.round((Date.now() - started) / 1000)} s)`);
}

function duplicatePairs() {
  const found = spawnSync("duplicates", ["--help"], { encoding: "utf8" });
  if (found.error || found.status !== 0) return "skipped (no `duplicates` command on this machine)";
  const count = (dir, label) => {
    const out = run("duplicates", ["--repo", dir, "--most", "200", "--seconds", "60"], root);
    const first = out.split("\n")[0] ?? "";
    notes.push(`duplicates in ${label}: ${first}`);
    if (/^no duplicates/.test(first)) return "0";
    const m = /(\d+)\s+pairs?/.exec(first);
    return m ? m[1] : "?";
  };
  const copy = join(work, "dup");
  cpSync(join(root, "src"), join(copy, "src"), { recursive: true });
  cpSync(join(root, "templates"), join(copy, "templates"), { recursive: true });
  return `${count(copy, "src + templates")} / ${count(join(root, "test"), "test")}`;
}

/** Starts the project's built server in production behind a module-load hook; what it loaded. */
async function loadedInProduction(project) {
  run("npm", ["run", "build"], project);
  const log = join(work, "loaded.txt");
  const hook = join(work, "load-hook.mjs");
  // Runs on the loader's thread: append every module URL the ESM loader loads to $FIGURES_LOADED.
  writeFileSync(
    join(work, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export async function load(url, context, nextLoad) {
  if (url.startsWith("file:")) appendFileSync(process.env.FIGURES_LOADED, url + "\\n");
  return nextLoad(url, context);
}
`,
  );
  writeFileSync(
    hook,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(work, "hooks.mjs")).href)});\n`,
  );
  const stub = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/supported") {
      res.end(
        JSON.stringify({
          kinds: [
            { x402Version: 2, scheme: "exact", network: "eip155:84532" },
            { x402Version: 1, scheme: "exact", network: "base-sepolia" },
          ],
          extensions: [],
          signers: {},
        }),
      );
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise((resolve) => stub.listen(0, "127.0.0.1", resolve));
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    PAY_TO: "0x000000000000000000000000000000000000dEaD",
    X402_NETWORK: "base-sepolia",
    X402_FACILITATOR_URL: `http://127.0.0.1:${stub.address().port}`,
    FIGURES_LOADED: log,
  };
  const child = spawn(process.execPath, ["--import", pathToFileURL(hook).href, "dist/server.js"], {
    cwd: project,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor(base, child, () => output);
    const startFiles = loadedRuntime(project, log);
    await fetch(`${base}/about`).then((r) => r.text());
    const job = {
      service_version: "1.0",
      job_id: "figures",
      task: { capability: "summarize", input: { text: "hello" } },
      deadline: Math.floor(Date.now() / 1000) + 60,
    };
    const paid = await fetch(`${base}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job),
    });
    await paid.text();
    if (paid.status !== 402) notes.push(`unpaid POST /execute answered ${paid.status}, not 402`);
    await new Promise((r) => setTimeout(r, 300));
    const files = loadedRuntime(project, log);
    const sum = (list) => list.reduce((n, f) => n + fileLines(f), 0);
    const lines = sum(files);
    const byFolder = new Map();
    for (const f of files) {
      const folder = dirname(relPosix(join(project, "src", "runtime"), f));
      byFolder.set(folder, (byFolder.get(folder) ?? 0) + fileLines(f));
    }
    notes.push(
      `loaded by folder: ${[...byFolder]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    return { lines, files: files.length, startLines: sum(startFiles) };
  } finally {
    child.kill("SIGKILL");
    stub.close();
  }
}

/** The src/runtime/*.ts files whose dist/runtime/*.js the loader has loaded so far. */
function loadedRuntime(project, log) {
  const dist = join(project, "dist", "runtime");
  const urls = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
  const files = new Set();
  for (const url of urls) {
    const path = fileURLToPath(url);
    if (!path.startsWith(dist + sep) || !path.endsWith(".js")) continue;
    const source = join(project, "src", "runtime", relative(dist, path).replace(/\.js$/, ".ts"));
    if (existsSync(source)) files.add(source);
  }
  return [...files];
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(base, child, output) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the project's server exited:\n${output()}`);
    try {
      const res = await fetch(`${base}/health`);
      await res.text();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the project's server did not answer /health in 30 s:\n${output()}`);
}

try {
  await main();
} catch (err) {
  console.error(`figures: ${err instanceof Error ? err.stack : err}`);
  process.exitCode = 1;
} finally {
  if (args.has("--keep")) console.log(`(kept ${work})`);
  else rmSync(work, { recursive: true, force: true });
}
