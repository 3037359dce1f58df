// `npm test`'s runner: four vitest processes side by side on CI's 2 cores, each running its files one at a
// time.
// - unit and e2e: CPU-bound (they spawn the real CLI, tsc, npm and built servers);
// - chain: mostly waiting on anvil, the Solana kit, deadlines and the x402 libraries' own confirmation loops
//   (three Solana tests wait 30 s each on @x402/svm); e2e starts its own chain (its global setup);
// - containers: mostly waiting on the docker engine and the npm registry.
// One after the other they took 27 minutes at stop 40 with the CPU busy half the time (user + sys about 30 CPU
// minutes); side by side they use both cores, and more processes only slow them all: unit two files at a
// time took 27.6 minutes instead of 22.6, chain in two processes 23.8 (stop 47). chain and unit ended last,
// together, so the two chain files that mostly wait (Solana's unconfirmed settlements, on litesvm) run in
// e2e's process, one file at a time with e2e's: their waits fill the time e2e ended early. Then unit ended
// last, ~100 s after chain (stop 47: 22.0 min in all), so four of unit's smaller folders run in chain's
// process, after or between its files (in their own vitest project, unit: nothing else changes for them).
// containers mostly waits and ends first (~250 s of ~700), so test/bench/ (every bench once with tiny knobs,
// ~100 s of CPU) runs in its process.
// With FIGURES_IN_SUITE=1 (.ci/run) the size figures (scripts/figures.mjs --no-build) run once the first of
// unit, chain and e2e ended, on the core it leaves idle (which one ends first varies by machine). chain
// prints as it runs; the others' output is printed after it, so they never interleave, and also if the
// runner is stopped (CI's `timeout`), so a hang shows where it was.
// Arguments (`npm test -- test/x.test.ts`) run plain `vitest run` with them instead.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, sep } from "node:path";

const root = join(import.meta.dirname, "..");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const args = process.argv.slice(2);
const children = [];

/** Runs vitest with `args`; resolves its exit code, its output kept when `label` is given. */
const run = (vitestArgs, label) => runNode([vitest, "run", ...vitestArgs], label);

/** Runs node with `nodeArgs`; resolves its exit code, its output kept when `label` is given. */
function runNode(nodeArgs, label) {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: root,
    // `npm test` built dist before this runner: tests must not rebuild it under the other processes' CLIs
    // (test/cli/client-project.ts buildCli).
    env: { ...process.env, CREATE_AGENT_TEST_DIST_BUILT: "1" },
    stdio: label ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  const started = Date.now();
  const entry = { label, out: [], printed: false };
  children.push({ child, entry });
  child.stdout?.on("data", (chunk) => entry.out.push(chunk));
  child.stderr?.on("data", (chunk) => entry.out.push(chunk));
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      resolve({ code: code ?? (signal ? 1 : 0), entry, seconds });
    });
  });
}

/** Prints a buffered run's output once, under its label. */
function print(entry) {
  if (!entry.label || entry.printed) return;
  entry.printed = true;
  console.log(`\n── ${entry.label} (run beside test/chain) ──`);
  process.stdout.write(Buffer.concat(entry.out));
}

if (args.length > 0) {
  process.exit((await run(args, undefined)).code);
}
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    for (const { child, entry } of children) {
      child.kill(signal);
      print(entry);
    }
    process.exit(1);
  });
}
// chain's files that mostly wait, run in e2e's process (module comment).
const waiting = [
  "test/chain/solana-unconfirmed.test.ts",
  "test/chain/solana-settle-interrupted.test.ts",
];
// unit's folders run in chain's process (module comment): about 45 s of unit's ~1,000. The rest of unit is
// named file by file (vitest's --exclude does not reach a project with its own exclude list).
const besideChain = ["test/ledger/", "test/solana/", "test/scaffold/", "test/scripts/"];
const besideContainers = ["test/bench/"];
const unitFiles = readdirSync(join(root, "test"), { recursive: true })
  .map((file) => `test/${String(file).split(sep).join("/")}`)
  .filter((file) => file.endsWith(".test.ts") && !/^test\/(e2e|chain|containers)\//.test(file))
  .filter(
    (file) => ![...besideChain, ...besideContainers].some((folder) => file.startsWith(folder)),
  );
const unit = run(["--project", "unit", ...unitFiles], "test/ unit");
const e2e = run(
  ["--project", "e2e", "--project", "chain", "test/e2e/", ...waiting],
  `test/e2e, with ${waiting.join(", ")}`,
);
const containers = run(
  ["--project", "containers", "--project", "unit", "test/containers/", ...besideContainers],
  `test/containers, with ${besideContainers.join(", ")}`,
);
const chainRun = run(
  [
    ...["--project", "chain", "--project", "unit", "test/chain/", ...besideChain],
    ...waiting.flatMap((path) => ["--exclude", path]),
  ],
  undefined,
);
// The size figures, for the log only (never failing the run), once a CPU-bound process's core is free.
const figures =
  process.env.FIGURES_IN_SUITE === "1"
    ? Promise.race([unit, e2e, chainRun]).then(() =>
        runNode([join(root, "scripts/figures.mjs"), "--no-build"], "figures"),
      )
    : undefined;
const chain = await chainRun;
const results = await Promise.all([unit, e2e, containers]);
for (const { entry } of results) print(entry);
if (figures) print((await figures).entry);
const [u, e, c] = results;
// Each process's exit code and wall time: which one a slower machine waits for.
const ended = (r) => `${r.code} after ${r.seconds} s`;
console.log(
  `suite: unit exited ${ended(u)}; chain ${ended(chain)}; e2e ${ended(e)}; containers ${ended(c)}`,
);
process.exit([u.code, chain.code, e.code, c.code].find((code) => code !== 0) ?? 0);
