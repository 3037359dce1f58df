// Regeneration speed: `create-agent generate` as a CLI process (a fresh `node` each time) in a project whose
// handlers already exist, src/generated/ removed before each run so every generated file is written, against
// openapi-typescript 7.13.0 as a CLI process on an OpenAPI 3.1 document holding the same schemas (each
// capability's input and output schema under components.schemas), measured in interleaved pairs in one run.
// openapi-typescript is a peer installed by the bench itself into bench/.peers (never part of the tool's
// install). Times: lower is better.
//
// Printed: a scaling table (1, 10, 100 and 1,000 capabilities), then two rows, each ending with its ratio
// line, create-agent's figure over the peer's, per pair:
//   ratio regenerate-100 ...             the whole command at 100 capabilities (200 schemas)
//   ratio regenerate-per-capability ...  the cost of one more capability: (time at 200 - time at 100) / 100,
//                                        each time the best of MARGINAL_REPEAT (3) runs
// Run: npx tsc -p tsconfig.build.json && node bench/regenerate.mjs   (RUNS=20 for more pairs)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensurePeers, manyCapabilities, median, pairs, report, root, timed } from "./lib.mjs";

const cli = join(root, "bin/create-agent.js");
if (!existsSync(join(root, "dist/cli/main.js"))) {
  console.error("bench: dist/ is missing: build first (npx tsc -p tsconfig.build.json)");
  process.exit(1);
}
const PEER_VERSION = "7.13.0";
const peer = ensurePeers({ "openapi-typescript": PEER_VERSION });
const peerCli = peer.path("openapi-typescript", "bin", "cli.js");
const { parseManifest } = await import(pathToFileURL(join(root, "dist/manifest/index.js")).href);

/** The same input and output schemas as an OpenAPI 3.1 document, for openapi-typescript. */
function openapi(text) {
  const model = parseManifest(text, "agent.json");
  const schemas = {};
  for (const c of model.capabilities) {
    schemas[`${c.typeName}Input`] = c.inputSchema;
    schemas[`${c.typeName}Output`] = c.outputSchema;
  }
  const doc = {
    openapi: "3.1.0",
    info: { title: "bench", version: "1.0.0" },
    paths: {},
    components: { schemas },
  };
  return JSON.stringify(doc, null, 2);
}

const work = mkdtempSync(join(tmpdir(), "bench-regenerate-"));
const run = (args, cwd) => execFileSync(process.execPath, args, { cwd, stdio: "ignore" });

/** A project with `count` capabilities whose handlers exist, and the peer's input for the same schemas. */
const sizes = new Map();
function prepare(count) {
  if (sizes.has(count)) return sizes.get(count);
  const project = join(work, `project-${count}`);
  run([cli, project, "--yes", "--no-install", "--no-git"], work);
  const text = JSON.stringify(manyCapabilities(count), null, 2);
  writeFileSync(join(project, "agent.json"), text);
  run([cli, "generate", "--cwd", project], work); // creates the handlers; not timed
  const spec = join(work, `openapi-${count}.json`);
  writeFileSync(spec, openapi(text));
  const size = { project, spec, out: join(work, `peer-${count}`) };
  mkdirSync(size.out, { recursive: true });
  sizes.set(count, size);
  return size;
}

/** One regeneration by create-agent, in ms: every generated file written again. */
async function ours(count) {
  const { project } = prepare(count);
  rmSync(join(project, "src/generated"), { recursive: true, force: true });
  const ms = await timed(() => run([cli, "generate", "--cwd", project], project));
  if (!existsSync(join(project, "src/generated/types.ts")))
    throw new Error("create-agent wrote no types");
  return ms;
}

/** One run of openapi-typescript on the same schemas, in ms. */
async function theirs(count) {
  const { spec, out } = prepare(count);
  const target = join(out, "schema.d.ts");
  rmSync(target, { force: true });
  const ms = await timed(() => run([peerCli, spec, "--output", target], out));
  if (!existsSync(target)) throw new Error("openapi-typescript wrote nothing");
  return ms;
}

const peerName = `openapi-typescript ${PEER_VERSION}`;
try {
  for (const count of [1, 10, 100, 200, 1000]) prepare(count);

  // Scaling: median of a few interleaved runs per size.
  const scaleRuns = Number(process.env.SCALE_RUNS ?? 3);
  console.log(`regenerate (CLI process), median of ${scaleRuns} runs per size`);
  console.log("capabilities   create-agent   per capability   openapi-typescript   per capability");
  for (const count of [1, 10, 100, 1000]) {
    const scaled = await pairs({
      ours: () => ours(count),
      peer: () => theirs(count),
      runs: scaleRuns,
    });
    const a = median(scaled.ours);
    const b = median(scaled.peer);
    console.log(
      `${String(count).padStart(12)}   ${a.toFixed(0).padStart(9)} ms   ${(a / count).toFixed(2).padStart(11)} ms   ${b.toFixed(0).padStart(15)} ms   ${(b / count).toFixed(2).padStart(11)} ms`,
    );
  }

  const whole = await pairs({ ours: () => ours(100), peer: () => theirs(100) });
  report("regenerate-100", whole, { peer: peerName });

  // The cost of one more capability: (time at 200 - time at 100) / 100, both sides measured alike. A
  // difference of two noisy times is noisier than either: each time is the best of a few runs.
  const repeat = Number(process.env.MARGINAL_REPEAT ?? 3);
  const best = async (measure, count) => {
    let min = Infinity;
    for (let i = 0; i < repeat; i++) min = Math.min(min, await measure(count));
    return min;
  };
  const marginal = async (measure) =>
    ((await best(measure, 200)) - (await best(measure, 100))) / 100;
  const more = await pairs({ ours: () => marginal(ours), peer: () => marginal(theirs) });
  report("regenerate-per-capability", more, { peer: peerName });
} finally {
  rmSync(work, { recursive: true, force: true });
}
