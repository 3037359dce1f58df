// Generation time against the number of capabilities (1, 10, 100): in-process generateCode() (the pure
// function behind `create-agent generate`) and the whole CLI command on a project, beside a peer measured in
// the same run: json-schema-to-typescript alone compiling the same input/output schemas (the floor under any
// generator that produces these types). Run: npm run build && node bench/generate.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "json-schema-to-typescript";
import { generateCode } from "../dist/generate/index.js";
import { parseManifest } from "../dist/manifest/index.js";

const root = new URL("..", import.meta.url).pathname;
const cli = join(root, "bin/create-agent.js");
const runs = Number(process.env.RUNS ?? 5);

function manifest(count) {
  const capabilities = {};
  for (let i = 0; i < count; i++) {
    capabilities[`capability-${i}`] = {
      description: `Capability number ${i}`,
      pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
      input_schema: {
        text: { type: "string", required: true, minLength: 1 },
        limit: { type: "integer", minimum: 1, default: 10 },
        mode: { type: "string", enum: ["fast", "careful"] },
        options: { type: "object", properties: { depth: { type: "integer" }, tags: { type: "array", items: { type: "string" } } } },
      },
      output_schema: { result: { type: "string" }, score: { type: "number", minimum: 0, maximum: 1 } },
    };
  }
  return JSON.stringify({ name: "bench-agent", version: "1.0.0", capabilities }, null, 2);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function time(fn) {
  const xs = [];
  await fn(); // warm-up
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    xs.push(performance.now() - start);
  }
  return median(xs);
}

const work = mkdtempSync(join(tmpdir(), "bench-generate-"));
const rows = [];
try {
  // One project to run the CLI in; its agent.json is swapped per size.
  execFileSync(process.execPath, [cli, join(work, "p"), "--yes", "--no-install", "--no-git"], { stdio: "ignore" });
  for (const count of [1, 10, 100]) {
    const text = manifest(count);
    const model = parseManifest(text, "agent.json");
    const generate = await time(() => generateCode(model));
    const peer = await time(async () => {
      for (const c of model.capabilities) {
        await compile({ ...c.inputSchema, title: `${c.typeName}Input` }, "x", { bannerComment: "", format: false });
        await compile({ ...c.outputSchema, title: `${c.typeName}Output` }, "x", { bannerComment: "", format: false });
      }
    });
    writeFileSync(join(work, "p/agent.json"), text);
    const command = await time(() => {
      rmSync(join(work, "p/src/generated"), { recursive: true, force: true }); // force a full rewrite
      execFileSync(process.execPath, [cli, "generate", "--cwd", join(work, "p")], { stdio: "ignore" });
    });
    rows.push({ count, generate, peer, command });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

console.log("capabilities  generateCode  per cap   json-schema-to-typescript  ratio   CLI generate (process)");
for (const r of rows) {
  console.log(
    `${String(r.count).padStart(12)}  ${r.generate.toFixed(0).padStart(9)} ms  ${(r.generate / r.count).toFixed(1).padStart(6)} ms  ${r.peer.toFixed(0).padStart(22)} ms  ${(r.generate / r.peer).toFixed(2).padStart(5)}  ${r.command.toFixed(0).padStart(10)} ms`,
  );
}
const [, ten, hundred] = rows;
console.log(`growth 10 -> 100 capabilities: generateCode x${(hundred.generate / ten.generate).toFixed(1)}, CLI x${(hundred.command / ten.command).toFixed(1)} (x10 is linear)`);
