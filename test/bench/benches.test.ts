// Every bench `npm run bench` runs, once each with tiny knobs: it ends and reports its ratios. Not timing
// goals (those stay in bench/, read from a full run): these keep the benches runnable. The async bench once
// waited forever for queue keys the runtime no longer wrote, and nobody saw it for several stops; a bench
// that breaks now fails here, in the change that broke it. Needs dist/ built (npm test builds it first).
import { execa } from "execa";
import { describe, expect, it } from "vitest";

/** Short windows, one pair; pools big enough that a fast machine does not drain them within a window. */
const TINY = {
  RUNS: "1",
  SCALE_RUNS: "1",
  MARGINAL_REPEAT: "1",
  LEDGER_BENCH_PAIRS: "1",
  ...Object.fromEntries(
    ["EXECUTE", "MCP", "A2A", "PAYWALL", "PAID", "SVM", "LEDGER"].map((b) => [
      `${b}_BENCH_SECONDS`,
      "0.3",
    ]),
  ),
  PAID_BENCH_JOBS: "3000",
  SVM_BENCH_JOBS: "1500",
  A2A_BENCH_JOBS: "3000",
  ASYNC_BENCH_JOBS: "20",
  ASYNC_BENCH_LATENCY_JOBS: "2",
};

/** Each bench, and the ratios it must print (`ratio <name> <value> (<low>..<high>)`). */
const BENCHES: Record<string, string[]> = {
  scaffold: ["scaffold"],
  regenerate: ["regenerate-100", "regenerate-per-capability"],
  ledger: ["ledger-redis-2x-per-cpu-second", "ledger-redis-2x-per-instance"],
  "server-start": [
    "server-start-1-capability-time-lower-is-better",
    "server-start-100-capability-time-lower-is-better",
  ],
  execute: [
    "execute-dev-requests-per-second-higher-is-better",
    "execute-dev-requests-per-server-cpu-second-higher-is-better",
    "execute-dev-p99-latency-lower-is-better",
  ],
  paid: ["paid-jobs-per-cpu-second-higher-is-better"],
  "svm-paid": ["svm-paid-jobs-per-cpu-second-higher-is-better"],
  paywall: [
    "paywall-402-per-second-higher-is-better",
    "paywall-402-per-server-cpu-second-higher-is-better",
  ],
  mcp: ["mcp-dev-tools-call-per-second-higher-is-better", "mcp-dev-p99-latency-lower-is-better"],
  a2a: ["paid-a2a-jobs-per-cpu-second-higher-is-better"],
  async: [
    "async-jobs-per-second-higher-is-better",
    "async-jobs-per-cpu-second-higher-is-better",
    "async-latency-p50-lower-is-better",
  ],
  typecheck: ["typecheck", "typecheck-edit", "typecheck-clone"],
};

describe("npm run bench, each bench once with tiny knobs", () => {
  it("runs every bench of npm run bench (none left out here)", async () => {
    const { scripts } = (await import("../../package.json", { with: { type: "json" } })).default;
    const named = [...scripts.bench.matchAll(/node bench\/([\w-]+)\.mjs/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(Object.keys(BENCHES).sort());
  });

  for (const [bench, ratios] of Object.entries(BENCHES))
    it(`${bench}: ends, reporting ${ratios.length} ratio(s)`, async () => {
      const run = await execa("node", [`bench/${bench}.mjs`], {
        env: TINY,
        timeout: 100_000,
        reject: false,
      });
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
      // Any number: with one pair, a marginal cost can come out negative (regenerate-per-capability's peer).
      for (const name of ratios)
        expect(run.stdout).toMatch(new RegExp(`^ratio ${name} -?\\d+(\\.\\d+)? \\(`, "m"));
    }, 120_000);
});
