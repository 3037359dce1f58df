// `npm test`'s runner: five vitest processes side by side on CI's 2 cores.
// - unit: CPU-bound (it spawns the real CLI, tsc, npm and built servers), two files at a time
//   (--maxWorkers=2): one at a time it was the last to finish, with a core idle once e2e had ended;
// - chain, in two processes with a chain each (its global setup): mostly waiting on anvil, the Solana kit,
//   deadlines and the x402 libraries' own confirmation loops (three Solana tests wait 30 s each on
//   @x402/svm); one process was the other last to finish (~20 min, stop 46). Its files run one at a time in
//   each (one facilitator key per chain);
// - e2e: CPU-bound, one file at a time; it starts its own chain (its global setup);
// - containers: mostly waiting on the docker engine and the npm registry.
// One after the other they took 27 minutes at stop 40 with the CPU busy half the time (user + sys about 30 CPU
// minutes); side by side they use both cores. The first chain process prints as it runs; the others' output
// is printed after it, so they never interleave, and also if the runner is stopped (CI's `timeout`), so a
// hang shows where it was.
// Arguments (`npm test -- test/x.test.ts`) run plain `vitest run` with them instead.
import { spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const args = process.argv.slice(2);
const children = [];

/** Runs vitest with `args`; resolves its exit code, its output kept when `label` is given. */
function run(vitestArgs, label) {
  const child = spawn(process.execPath, [vitest, "run", ...vitestArgs], {
    cwd: root,
    // `npm test` built dist before this runner: tests must not rebuild it under the other processes' CLIs
    // (test/cli/client-project.ts buildCli).
    env: { ...process.env, CREATE_AGENT_TEST_DIST_BUILT: "1" },
    stdio: label ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  const entry = { label, out: [], printed: false };
  children.push({ child, entry });
  child.stdout?.on("data", (chunk) => entry.out.push(chunk));
  child.stderr?.on("data", (chunk) => entry.out.push(chunk));
  return new Promise((resolve) => {
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), entry }));
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
// The second chain process: the files that wait longest (Solana's confirmation loops, the hostile servers'
// deadlines, the client's paying projects), about half of chain's time.
const slowChain = ["test/chain/solana", "test/chain/hostile.test.ts", "test/chain/client.test.ts"];
const buffered = [
  run(["--project", "unit", "--maxWorkers=2"], "test/ unit"),
  run(["--project", "chain", ...slowChain], "test/chain (Solana, hostile, client)"),
  run(["--project", "e2e"], "test/e2e"),
  run(["--project", "containers"], "test/containers"),
];
const chain = await run(
  ["--project", "chain", ...slowChain.flatMap((path) => ["--exclude", `${path}*`])],
  undefined,
);
const results = await Promise.all(buffered);
for (const { entry } of results) print(entry);
const [u, c2, e, c] = results;
console.log(
  `suite: unit exited ${u.code}; chain ${chain.code} and ${c2.code}; e2e ${e.code}; containers ${c.code}`,
);
process.exit([u.code, chain.code, c2.code, e.code, c.code].find((code) => code !== 0) ?? 0);
