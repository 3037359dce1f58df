// npm run bench's async bench, once with tiny knobs: it ends and reports its three ratios. Not a timing
// goal (those stay in bench/): it keeps the bench runnable. It once waited forever for queue keys the
// runtime no longer writes (dev mode's queue moved to its own keys), and nobody saw it for several stops.
import { execa } from "execa";
import { describe, expect, it } from "vitest";

describe("bench/async.mjs", () => {
  it("ends, reporting throughput, per-CPU and latency ratios against bare BullMQ", async () => {
    const run = await execa("node", ["bench/async.mjs"], {
      env: { RUNS: "1", ASYNC_BENCH_JOBS: "20", ASYNC_BENCH_LATENCY_JOBS: "2" },
      timeout: 100_000,
      reject: false,
    });
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    for (const name of ["async-jobs-per-second", "async-jobs-per-cpu-second", "async-latency-p50"])
      expect(run.stdout).toMatch(new RegExp(`^ratio ${name}-(higher|lower)-is-better \\d`, "m"));
  }, 120_000);
});
