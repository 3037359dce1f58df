// `npm run typecheck` (`tsc -b`) of a fresh one-capability project against a bare Express 5 + Ajv TypeScript
// project (one src/server.ts: express.json(), an Ajv-validated POST route with ajv-formats) type-checked
// with the same compiler options and the same command, each a fresh `node tsc` process, measured in
// interleaved pairs in one run. Both resolve their packages from the repo's node_modules (the versions
// projects pin), each through a node_modules folder of its own (tsc keeps its build info in
// node_modules/.cache). The project is set up as `create-agent` leaves it after its install: src/runtime's
// declarations built once (`tsc -b src/runtime`, the scaffold's own step). Three moments of the dev loop:
//   fresh   the first typecheck of the fresh project (the peer's first, no build info): the ratio line;
//   edit    after an edit to the handler's body (the peer: the same edit to its route), both warm;
//   clone   a fresh clone's first typecheck, nothing cached (src/runtime checked and its declarations built).
// Also prints what tsc --extendedDiagnostics counts (files, types, instantiations, check time: what a heavy
// library's declarations cost, whatever the machine) and each tsc process's CPU time (user + system, read
// by a preload as it exits: on a shared machine it moves less with the load than wall time). Times: lower
// is better; the last line is `ratio typecheck <median> (<min>..<max>)`, the project's wall time over the
// peer's on the fresh project's first typecheck, per pair.
// Run: npx tsc -p tsconfig.build.json && node bench/typecheck.mjs   (RUNS=15 for more pairs;
// BENCH_RUNTIME=<folder> type-checks that copy of templates/runtime, for a before/after pair)
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import ts from "typescript";
import { join } from "node:path";
import { median, pairs, report, root } from "./lib.mjs";
import { buildProject, ECHO_HANDLER, ECHO_MANIFEST, workDir } from "./lib-server.mjs";

if (!existsSync(join(root, "dist/cli/main.js"))) {
  console.error("bench: dist/ is missing: build first (npx tsc -p tsconfig.build.json)");
  process.exit(1);
}
const tsc = join(root, "node_modules/typescript/bin/tsc");
const work = workDir("bench-typecheck");

const project = buildProject(join(work, "agent"), ECHO_MANIFEST, { "echo.ts": ECHO_HANDLER });

/** What a user writes by hand for the same job: Express 5, express.json(), an Ajv-checked body. */
const PEER_SERVER = `import express, { type Request, type Response } from "express";
import { Ajv, type JSONSchemaType } from "ajv";
import addFormatsModule from "ajv-formats";

interface EchoInput {
  text: string;
}
interface EchoOutput {
  text: string;
}

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = new Ajv({ allErrors: true });
addFormats(ajv);
const schema: JSONSchemaType<EchoInput> = {
  type: "object",
  properties: { text: { type: "string", minLength: 1, maxLength: 100 } },
  required: ["text"],
  additionalProperties: false,
};
const validate = ajv.compile(schema);

async function echo(input: EchoInput): Promise<EchoOutput> {
  return { text: input.text };
}

const app = express();
app.use(express.json());
app.post("/echo", async (req: Request, res: Response) => {
  if (!validate(req.body)) {
    res.status(400).json({ errors: validate.errors });
    return;
  }
  res.json(await echo(req.body));
});
app.listen(Number(process.env.PORT ?? 3000));
`;
const peer = join(work, "peer");
mkdirSync(join(peer, "src"), { recursive: true });
writeFileSync(join(peer, "package.json"), '{ "name": "peer", "private": true, "type": "module" }\n');
writeFileSync(join(peer, "src/server.ts"), PEER_SERVER);
// The project's compiler options, byte for byte (build info in node_modules/.cache too); its own files.
const { config } = ts.parseConfigFileTextToJson("tsconfig.json", readFileSync(join(project, "tsconfig.json"), "utf8"));
writeFileSync(
  join(peer, "tsconfig.json"),
  `${JSON.stringify({ compilerOptions: config.compilerOptions, include: ["src"] }, null, 2)}\n`,
);

/** node_modules as a folder of links to the repo's packages: each side keeps its own node_modules/.cache. */
function ownNodeModules(dir) {
  rmSync(join(dir, "node_modules"), { recursive: true, force: true });
  mkdirSync(join(dir, "node_modules"));
  for (const entry of readdirSync(join(root, "node_modules")))
    if (entry !== ".cache") symlinkSync(join(root, "node_modules", entry), join(dir, "node_modules", entry));
}
ownNodeModules(project);
ownNodeModules(peer);
const cache = (dir) => join(dir, "node_modules/.cache");

// As `create-agent` does after installing: src/runtime's declarations, built once.
const { prepareRuntimeTypes } = await import(join(root, "dist/scaffold/runtime-types.js"));
const prepared = await prepareRuntimeTypes(project);
if (!prepared.ok) throw new Error(`bench: tsc -b src/runtime failed in ${project}: ${JSON.stringify(prepared)}`);
const runtimeCache = join(work, "runtime-cache");
cpSync(join(cache(project), "create-agent"), runtimeCache, { recursive: true });

/** Loaded into each tsc process: prints the process's own CPU time (user + system) as it exits. */
const cpuProbe = join(work, "cpu-probe.cjs");
writeFileSync(
  cpuProbe,
  'process.on("exit", () => { const u = process.cpuUsage(); process.stdout.write(`\\nCPU ms: ${(u.user + u.system) / 1000}\\n`); });\n',
);

/**
 * `tsc -b --extendedDiagnostics` in `dir` (a fresh process): wall ms, CPU ms and tsc's own counts, summed
 * over the projects it built (`Aggregate` lines when it built more than one).
 */
function typecheck(dir) {
  const started = performance.now();
  let out;
  try {
    out = execFileSync(process.execPath, ["--require", cpuProbe, tsc, "-b", "--extendedDiagnostics"], {
      cwd: dir,
      encoding: "utf8",
    });
  } catch (err) {
    throw new Error(`tsc -b failed in ${dir}:\n${err.stdout ?? ""}${err.stderr ?? ""}`);
  }
  const ms = performance.now() - started;
  const field = (name) => {
    const all = [...out.matchAll(new RegExp(`^${name}:\\s+([\\d.]+)`, "gm"))].map((m) => Number(m[1]));
    const aggregate = new RegExp(`^Aggregate ${name}:\\s+([\\d.]+)`, "m").exec(out);
    if (aggregate) return Number(aggregate[1]);
    if (all.length === 0) throw new Error(`tsc printed no "${name}" in ${dir}`);
    return all.reduce((a, b) => a + b, 0);
  };
  return {
    ms,
    files: field("Files"),
    types: field("Types"),
    instantiations: field("Instantiations"),
    checkMs: field("Check time") * 1000,
    cpuMs: field("CPU ms"),
  };
}

/** Each moment: how both sides are set up before each run, measured in pairs. */
const handler = join(project, "src/capabilities/echo.ts");
const peerServer = join(peer, "src/server.ts");
const edit = (file, i) => {
  const text = readFileSync(file, "utf8").replace(/text: (`edit \d+ \$\{)?input\.text(\})?(`)?/, "text: `edit " + i + " ${input.text}`");
  writeFileSync(file, text);
};
const moments = {
  fresh: {
    title: "first typecheck of a fresh project",
    ours: () => {
      rmSync(cache(project), { recursive: true, force: true });
      cpSync(runtimeCache, join(cache(project), "create-agent"), { recursive: true });
    },
    peer: () => rmSync(cache(peer), { recursive: true, force: true }),
  },
  edit: {
    title: "after an edit to the handler (the peer's route), caches warm",
    ours: (i) => edit(handler, i),
    peer: (i) => edit(peerServer, i),
  },
  clone: {
    title: "a fresh clone's first typecheck, nothing cached",
    ours: () => rmSync(cache(project), { recursive: true, force: true }),
    peer: () => rmSync(cache(peer), { recursive: true, force: true }),
  },
};

const results = {};
for (const [name, moment] of Object.entries(moments)) {
  const seen = { ours: [], peer: [] };
  const measure = (side, dir) => (i) => {
    moment[side](i);
    const run = typecheck(dir);
    seen[side].push(run);
    return run.ms;
  };
  const result = await pairs({ ours: measure("ours", project), peer: measure("peer", peer) });
  results[name] = { result, seen };
  const last = (side) => seen[side].at(-1);
  const checkMs = (side) => median(seen[side].slice(1).map((r) => r.checkMs)).toFixed(0);
  console.log(`\n${name}: ${moment.title}`);
  for (const [label, side] of [
    ["project (1 capability)", "ours"],
    ["express 5 + ajv", "peer"],
  ])
    console.log(
      `${label}: ${last(side).files} files, ${last(side).types} types, ${last(side).instantiations} instantiations; tsc check time median ${checkMs(side)} ms`,
    );
  console.log(
    `files x${(last("ours").files / last("peer").files).toFixed(2)}, types x${(last("ours").types / last("peer").types).toFixed(2)} (create-agent over the peer)`,
  );
  const n = result.ratios.length;
  const cpu = { ours: [], peer: [], ratios: [] };
  for (let i = 0; i < n; i++) {
    const [a, b] = [seen.ours.at(-n + i).cpuMs, seen.peer.at(-n + i).cpuMs];
    cpu.ours.push(a);
    cpu.peer.push(b);
    cpu.ratios.push(a / b);
  }
  report(`typecheck-${name}-cpu`, cpu, { peer: "express 5 + ajv" });
  if (name !== "fresh") report(`typecheck-${name}`, result, { peer: "express 5 + ajv" });
}
console.log("");
report("typecheck", results.fresh.result, { peer: "express 5 + ajv" });
