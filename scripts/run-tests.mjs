// `npm test`'s runner: the container tests (test/containers: a docker build and compose, mostly waiting
// on the engine and the npm registry) run in a second vitest process beside the rest of the suite (unit,
// chain, e2e), which vitest runs one file at a time on a 2-core machine. Side by side, the whole suite
// stays within CI's 25 minutes. The containers' output is printed when they end, so the two never
// interleave. Arguments (`npm test -- test/x.test.ts`) run plain `vitest run` with them instead.
import { spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const args = process.argv.slice(2);

/** Runs vitest with `args`; resolves its exit code, its output kept when `quiet`. */
function run(vitestArgs, quiet) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [vitest, "run", ...vitestArgs], {
      cwd: root,
      stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    const out = [];
    child.stdout?.on("data", (chunk) => out.push(chunk));
    child.stderr?.on("data", (chunk) => out.push(chunk));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }));
  });
}

if (args.length > 0) {
  process.exit((await run(args, false)).code);
}
const containers = run(["--project", "containers"], true);
const rest = await run(["--project", "unit", "--project", "chain", "--project", "e2e"], false);
const boxed = await containers;
console.log("\n── test/containers (run beside the rest) ──");
process.stdout.write(Buffer.concat(boxed.out));
console.log(`suite: unit, chain and e2e exited ${rest.code}; containers exited ${boxed.code}`);
process.exit(rest.code !== 0 ? rest.code : boxed.code);
