import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**", "test/chain/**", "test/containers/**"],
          // Many tests spawn the real CLI several times: a hang guard, not a timing goal (2 noisy cores).
          testTimeout: 30_000,
        },
      },
      {
        // Tests against a real EVM chain (anvil) with Circle's USDC and a real x402 facilitator,
        // started once per run by the global setup.
        test: {
          name: "chain",
          include: ["test/chain/**/*.test.ts"],
          globalSetup: ["test/chain/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          globalSetup: ["test/chain/global-setup.ts", "test/e2e/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        // The generated Dockerfile and compose.yaml in a real container engine (docker, set up by .ci/run):
        // one image per run, built by the global setup from a clean clone of a created project.
        test: {
          name: "containers",
          include: ["test/containers/**/*.test.ts"],
          globalSetup: ["test/containers/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
