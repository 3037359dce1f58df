// The optional services are feature folders (redis = ledger/redis/, metrics = metrics/,
// facilitator-auth = payments/facilitator-auth/, onchain = payments/evm/onchain/): a project without them, their folders deleted and
// their lines of features.ts dropped, type-checks with the project's compiler options, starts and
// serves a job; and configuration that asks for one of them refuses the start, naming the setting
// and the command that adds the feature.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger, job, listen, makeAgent, PAY_TO, post } from "./helpers.js";
import { closedUrl } from "./servers.js";
import type { RoutedNetworkConfig } from "../../templates/runtime/payments/config.js";
import { FEATURE_FOLDERS, type RuntimeCopy, runtimeWithout } from "./without-features.js";

const root = new URL("../..", import.meta.url).pathname;

let copy: RuntimeCopy;
const ABSENT = ["redis", "metrics", "facilitator-auth", "onchain"] as const;
beforeAll(() => {
  // Each is a folder of the runtime, so the copy below really lacks something.
  for (const feature of ABSENT)
    expect(existsSync(join(root, "templates/runtime", FEATURE_FOLDERS[feature])), feature).toBe(
      true,
    );
  copy = runtimeWithout(ABSENT);
});
afterAll(() => copy?.remove());

const PROD = { PAY_TO, X402_NETWORK: "base-sepolia" };
const CDP = "https://api.cdp.coinbase.com/platform/v2/x402";

type ConfigModule = typeof import("../../templates/runtime/config.js");

/** The configuration problems of each env, as resolveConfig reports them in the copy ([] when it resolves). */
async function problems(envs: Record<string, string>[]): Promise<string[][]> {
  const { ConfigError, resolveConfig } = (await copy.load("config.ts")) as ConfigModule;
  return envs.map((env) => {
    try {
      resolveConfig({ env });
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  });
}

/** The copy's configuration for production, settled through `facilitator` (x402.org's by default). */
async function productionConfig(facilitator = "https://x402.org/facilitator") {
  const { resolveConfig } = (await copy.load("config.ts")) as ConfigModule;
  return resolveConfig({ env: { ...PROD, X402_FACILITATOR_URL: facilitator } });
}

describe("a project without the redis, metrics, facilitator-auth and onchain features", () => {
  it(
    "type-checks with the project's compiler options, and carries none of their packages",
    { timeout: 120_000 },
    async () => {
      for (const feature of ABSENT)
        expect(existsSync(join(root, "templates/runtime", FEATURE_FOLDERS[feature])), feature).toBe(
          true,
        );
      const { ok, output } = await copy.typecheck();
      expect(output).toBe("");
      expect(ok).toBe(true);
      const carried = readdirSync(join(copy.dir, "src/runtime"), {
        recursive: true,
        encoding: "utf8",
      })
        .filter((file) => file.endsWith(".ts"))
        .filter((file) =>
          /["'](ioredis|prom-client|jose|viem)["']/.test(
            readFileSync(join(copy.dir, "src/runtime", file), "utf8"),
          ),
        );
      expect(carried).toEqual([]);
    },
  );

  it(
    "refuses configuration asking for an absent feature, naming the setting and the fix",
    { timeout: 60_000 },
    async () => {
      const dev = { SERVICE_DEV_MODE: "true" };
      const results = await problems([
        { ...dev, REDIS_URL: "redis://:hunter2@redis.internal:6379" },
        { ...dev, REDIS_KEY_PREFIX: "my-agent:" },
        { ...dev, METRICS_PORT: "9464" },
        { ...dev, METRICS_TOKEN: "0123456789abcdef0123" },
        { ...PROD, X402_FACILITATOR_URL: CDP, CDP_API_KEY_ID: "key-id", CDP_API_KEY_SECRET: "x" },
        { ...PROD, X402_FACILITATOR_URL: CDP },
        {
          ...PROD,
          X402_FACILITATOR_URL: "https://x402.org/facilitator",
          X402_FACILITATOR_AUTH: "cdp",
        },
        {
          ...PROD,
          X402_FACILITATOR_URL: "https://x402.org/facilitator",
          X402_RPC_URL: "https://rpc:hunter2@base-sepolia.example/v2/key",
        },
        {
          ...PROD,
          X402_RPC_URL: "https://base-sepolia.example",
          X402_SETTLER_KEY: `0x${"11".repeat(32)}`,
        },
        { ...PROD, X402_SETTLER_KEY: `0x${"11".repeat(32)}` },
      ]);
      const fix = (feature: string) =>
        `, which this project does not include: run npm run add -- ${feature}`;
      expect(results).toEqual([
        [`REDIS_URL is set (the shared payment ledger)${fix("redis")}`],
        [`REDIS_KEY_PREFIX is set (the shared payment ledger)${fix("redis")}`],
        [`METRICS_PORT is set (Prometheus metrics)${fix("metrics")}`],
        [`METRICS_TOKEN is set (Prometheus metrics)${fix("metrics")}`],
        [
          `CDP_API_KEY_ID is set (CDP API-key auth for Coinbase's facilitator)${fix("facilitator-auth")}`,
        ],
        [
          `X402_FACILITATOR_URL names api.cdp.coinbase.com (Coinbase's facilitator wants CDP API-key auth)${fix("facilitator-auth")}`,
        ],
        [
          `X402_FACILITATOR_AUTH is "cdp" (CDP API-key auth for Coinbase's facilitator)${fix("facilitator-auth")}`,
        ],
        [`X402_RPC_URL is set (EVM checks on chain and direct settlement)${fix("onchain")}`],
        [
          `X402_SETTLER_KEY is set (EVM checks on chain and direct settlement)${fix("onchain")}`,
          `X402_RPC_URL is set (EVM checks on chain and direct settlement)${fix("onchain")}`,
        ],
        [`X402_SETTLER_KEY is set (EVM checks on chain and direct settlement)${fix("onchain")}`],
      ]);
      expect(JSON.stringify(results)).not.toContain("hunter2");
    },
  );

  it("points at the redis feature where Redis would help: the in-memory ledger's line, and the queue's WORKER=off", async () => {
    const [workerOff] = await problems([{ SERVICE_DEV_MODE: "true", WORKER: "off" }]);
    expect(workerOff).toEqual([
      expect.stringContaining(
        "add the redis feature (npm run add -- redis) and set REDIS_URL to share the queue",
      ),
    ]);
    const { selectLedger } = (await copy.load(
      "ledger/select.ts",
    )) as typeof import("../../templates/runtime/ledger/select.js");
    expect(selectLedger(await productionConfig(), "a", captureLogger(), undefined).describe()).toBe(
      "payment ledger: in memory: protects this process only; with several instances add the redis feature (npm run add -- redis) and set REDIS_URL so they share one",
    );
  });

  it(
    "starts without them: production settings resolve, and a dev server answers a job",
    { timeout: 60_000 },
    async () => {
      const [prod, emptied] = await problems([
        { ...PROD, X402_FACILITATOR_URL: "https://x402.org/facilitator" },
        // dev:paid unsets a .env's settings by emptying them: empty is unset, not a request for onchain.
        {
          ...PROD,
          X402_FACILITATOR_URL: "https://x402.org/facilitator",
          X402_RPC_URL: "",
          X402_SETTLER_KEY: "",
        },
      ]);
      expect(prod).toEqual([]);
      expect(emptied).toEqual([]);
      // The start-up log's hint names the feature X402_RPC_URL needs here.
      const { FAMILIES } = (await copy.load(
        "features.ts",
      )) as typeof import("../../templates/runtime/features.js");
      const config = await productionConfig();
      const [net] = config.payment!.networks as RoutedNetworkConfig[];
      const described = FAMILIES[0]!.describeRoute(net!);
      expect(described).toContain(
        "no on-chain checks before running jobs (with the onchain feature, npm run add -- onchain, set X402_RPC_URL",
      );
      // ...and says what else it costs: a settlement not confirmed in time cannot be resolved.
      expect(described).toMatch(/resolve a settlement not confirmed in time/);
      // A facilitator that cannot be asked refuses the start; the fix it offers besides another
      // facilitator, settling directly, names the feature that needs.
      const unreachable = await productionConfig(await closedUrl());
      const [far] = unreachable.payment!.networks as RoutedNetworkConfig[];
      const { ConfigError } = (await copy.load("config.ts")) as ConfigModule;
      const refused = await FAMILIES[0]!.checkRoute!(far!, unreachable, captureLogger()).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as InstanceType<typeof ConfigError>).problems[0]).toMatch(
        /or settle directly from this server: X402_RPC_URL and X402_SETTLER_KEY \(that account pays the gas\) instead of X402_FACILITATOR_URL \(direct settlement, which this project does not include: run npm run add -- onchain\)$/,
      );
      const { createApp } = (await copy.load(
        "app.ts",
      )) as typeof import("../../templates/runtime/app.js");
      const { url, close } = await listen(
        createApp(makeAgent(), { env: { SERVICE_DEV_MODE: "true" }, logger: captureLogger() }),
      );
      try {
        const health = await fetch(`${url}/health`);
        expect(health.status).toBe(200);
        const answer = await post(url, job("echo", { text: "hi" }));
        expect(answer.status).toBe(200);
        expect(answer.body.output).toEqual({ text: "hi" });
      } finally {
        await close();
      }
    },
  );
});
