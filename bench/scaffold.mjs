// Scaffolding speed, without install: `create-agent my-agent --yes --no-install --no-git` (one capability,
// the starter) against create-vite 9.3.0's vanilla-ts template, each a fresh `node` process writing a fresh
// folder, measured in interleaved pairs in one run (the order alternates, so drift favours neither).
// create-vite is a peer installed by the bench itself into bench/.peers (never part of the tool's install).
// Times: lower is better. The last line is `ratio scaffold <median> (<min>..<max>)`, create-agent's time
// over create-vite's, per pair.
// Run: npx tsc -p tsconfig.build.json && node bench/scaffold.mjs   (RUNS=20 for more pairs)
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePeers, pairs, report, root, timed } from "./lib.mjs";

const cli = join(root, "bin/create-agent.js");
if (!existsSync(join(root, "dist/cli/main.js"))) {
  console.error("bench: dist/ is missing: build first (npx tsc -p tsconfig.build.json)");
  process.exit(1);
}
const peer = ensurePeers({ "create-vite": "9.3.0" });
const createVite = peer.path("create-vite", "index.js");

const tools = {
  ours: (dir) => [cli, dir, "--yes", "--no-install", "--no-git"],
  peer: (dir) => [
    createVite,
    dir,
    "--template",
    "vanilla-ts",
    "--no-interactive",
    "--no-immediate",
  ],
};

const work = mkdtempSync(join(tmpdir(), "bench-scaffold-"));
let made = 0;
/** One scaffold by a fresh node process, in ms; the folder is removed afterwards (not timed). */
async function scaffold(side) {
  // A relative folder, run from the work folder: create-vite treats even "/abs" targets as relative.
  const dir = `${side}-${made++}`;
  const ms = await timed(() =>
    execFileSync(process.execPath, tools[side](dir), {
      cwd: work,
      stdio: "ignore",
      // No package manager's user agent (npm run bench sets one): both tools then assume npm.
      env: { ...process.env, npm_config_user_agent: "" },
    }),
  );
  if (!existsSync(join(work, dir, "package.json"))) throw new Error(`${side}: no project written`);
  rmSync(join(work, dir), { recursive: true, force: true });
  return ms;
}

let result;
try {
  // Two warm-up rounds: the file system cache, and create-agent's own tarball cache (first run after a build).
  result = await pairs({ ours: () => scaffold("ours"), peer: () => scaffold("peer"), warmup: 2 });
} finally {
  rmSync(work, { recursive: true, force: true });
}
report("scaffold", result, { peer: "create-vite 9.3.0 (vanilla-ts)" });
