// `npm run typecheck` of a fresh one-capability project (`tsc --noEmit` with its own tsconfig.json: src/ and
// test/) against a bare Express 5 + Ajv TypeScript project type-checked with the very same tsconfig.json (one
// src/server.ts: express.json(), an Ajv-validated POST route with ajv-formats), each a fresh `node tsc`
// process, measured in interleaved pairs in one run. Both resolve their packages from the repo's
// node_modules (the versions projects pin). Also prints what tsc --extendedDiagnostics counts for each
// (files, types, instantiations, check time): the files and types are what a heavy library's declarations
// cost, whatever the machine. Also the CPU time (user + system) each tsc process used, read by a preload
// as it exits: on a shared machine it moves less with the load than wall time. Times: lower is better;
// the last line is `ratio typecheck <median> (<min>..<max>)`, the project's wall time over the peer's,
// per pair.
// Run: npx tsc -p tsconfig.build.json && node bench/typecheck.mjs   (RUNS=15 for more pairs;
// BENCH_RUNTIME=<folder> type-checks that copy of templates/runtime, for a before/after pair)
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
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
cpSync(join(project, "tsconfig.json"), join(peer, "tsconfig.json")); // the same tsconfig, byte for byte
writeFileSync(join(peer, "package.json"), '{ "name": "peer", "private": true, "type": "module" }\n');
writeFileSync(join(peer, "src/server.ts"), PEER_SERVER);
execFileSync("ln", ["-s", join(root, "node_modules"), join(peer, "node_modules")]);

/** Loaded into each tsc process: prints the process's own CPU time (user + system) as it exits. */
const cpuProbe = join(work, "cpu-probe.cjs");
writeFileSync(
  cpuProbe,
  'process.on("exit", () => { const u = process.cpuUsage(); process.stdout.write(`\\nCPU ms: ${(u.user + u.system) / 1000}\\n`); });\n',
);

/** tsc --noEmit --extendedDiagnostics in `dir` (a fresh process): wall ms, CPU ms and tsc's own counts. */
function typecheck(dir) {
  const started = performance.now();
  let out;
  try {
    out = execFileSync(
      process.execPath,
      ["--require", cpuProbe, tsc, "--noEmit", "--extendedDiagnostics"],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
  } catch (err) {
    throw new Error(`tsc --noEmit failed in ${dir}:\n${err.stdout ?? ""}${err.stderr ?? ""}`);
  }
  const ms = performance.now() - started;
  const field = (name) => {
    const match = new RegExp(`^${name}:\\s+([\\d.]+)`, "m").exec(out);
    if (!match) throw new Error(`tsc printed no "${name}" in ${dir}`);
    return Number(match[1]);
  };
  return {
    ms,
    files: field("Files"),
    types: field("Types"),
    instantiations: field("Instantiations"),
    checkMs: field("Check time") * 1000,
    totalMs: field("Total time") * 1000,
    cpuMs: field("CPU ms"),
  };
}

const seen = { ours: [], peer: [] };
const result = await pairs({
  ours: () => {
    const run = typecheck(project);
    seen.ours.push(run);
    return run.ms;
  },
  peer: () => {
    const run = typecheck(peer);
    seen.peer.push(run);
    return run.ms;
  },
});

const [ours, theirs] = [seen.ours.at(-1), seen.peer.at(-1)];
for (const [name, side] of [
  ["project (1 capability)", "ours"],
  ["express 5 + ajv", "peer"],
]) {
  const run = seen[side].at(-1);
  const checkMs = median(seen[side].slice(1).map((r) => r.checkMs));
  console.log(
    `${name}: ${run.files} files, ${run.types} types, ${run.instantiations} instantiations; tsc check time median ${checkMs.toFixed(0)} ms`,
  );
}
console.log(
  `files x${(ours.files / theirs.files).toFixed(2)}, types x${(ours.types / theirs.types).toFixed(2)} (create-agent over the peer)`,
);
const totals = { ours: [], peer: [], ratios: [] };
const cpu = { ours: [], peer: [], ratios: [] };
for (let i = 0; i < result.ratios.length; i++) {
  const [a, b] = [seen.ours.at(-result.ratios.length + i), seen.peer.at(-result.ratios.length + i)];
  totals.ours.push(a.totalMs);
  totals.peer.push(b.totalMs);
  totals.ratios.push(a.totalMs / b.totalMs);
  cpu.ours.push(a.cpuMs);
  cpu.peer.push(b.cpuMs);
  cpu.ratios.push(a.cpuMs / b.cpuMs);
}
report("typecheck-tsc-total-time", totals, { peer: "express 5 + ajv" });
report("typecheck-cpu", cpu, { peer: "express 5 + ajv" });
report("typecheck", result, { peer: "express 5 + ajv" });
