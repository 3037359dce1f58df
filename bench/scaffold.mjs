// Scaffolding speed, without install: create-agent against create-vite (vanilla-ts), both run the same way
// (a fresh `node` process into a fresh folder), interleaved, in the same script. Reports medians and the ratio.
// Run: npm run bench   (builds first). RUNS=20 npm run bench for more samples.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const runs = Number(process.env.RUNS ?? 10);
const tools = {
  "create-agent": (dir) => [join(root, "bin/create-agent.js"), dir, "--yes", "--no-install", "--no-git"],
  "create-vite": (dir) => [join(root, "node_modules/create-vite/index.js"), dir, "--template", "vanilla-ts", "--no-interactive", "--no-immediate"],
};

const work = mkdtempSync(join(tmpdir(), "bench-scaffold-"));
const times = Object.fromEntries(Object.keys(tools).map((name) => [name, []]));
try {
  for (let i = 0; i < runs + 1; i++) {
    for (const [name, args] of Object.entries(tools)) {
      // Relative folder names, run from the work folder: create-vite treats even "/abs" targets as relative.
      const dir = `${name}-${i}`;
      const start = process.hrtime.bigint();
      execFileSync(process.execPath, args(dir), { cwd: work, stdio: "ignore", env: { ...process.env, npm_config_user_agent: "" } });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (i > 0) times[name].push(ms); // the first round warms the file system cache
      rmSync(join(work, dir), { recursive: true, force: true });
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, xs] of Object.entries(times)) {
  console.log(`${name.padEnd(13)} median ${median(xs).toFixed(0)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, ${xs.length} runs)`);
}
console.log(`ratio create-agent / create-vite: ${(median(times["create-agent"]) / median(times["create-vite"])).toFixed(2)}`);
