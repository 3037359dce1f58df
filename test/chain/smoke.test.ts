// `create-agent smoke` against a production server on a real chain (anvil with Circle's USDC at Base
// Sepolia's address, the reference facilitator), the real CLI in a child process: it passes when the
// deployment matches the seller's configuration (from the project's .env or flags), fails naming the
// field that differs, pays one job with --pay, and never signs on a mainnet without --mainnet.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { AppOptions } from "../../templates/runtime/config.js";
import { callAgent, type CountingServer, runCli, startCounted } from "../cli/call-helpers.js";
import { only, withDiscovery } from "../runtime/discovery-fixture.js";
import { PAYEE } from "./accounts.js";
import { BASE_SEPOLIA_USDC, ensureBaseSepoliaUsdc, mintUsdc, usdcBalance } from "./usdc.js";
import { buildCli } from "../cli/client-project.js";

const { rpcUrl, facilitatorUrl } = inject("chain");
const PRICE = 10_000n; // echo's price: 0.01 USDC
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const balance = (address: Hex) => usdcBalance(rpcUrl, BASE_SEPOLIA_USDC, address);

const payment = (network: string): AppOptions["payment"] => ({
  payTo: PAYEE,
  network,
  facilitatorUrl,
});

/** call's echo agent, with discovery documents (the runtime tests' fixture: the card and /openapi.json served). */
const agent = () => withDiscovery(only(callAgent(), "echo"));

let server: CountingServer;
let mainnet: CountingServer;
let project: string;

beforeAll(async () => {
  await buildCli();
  await ensureBaseSepoliaUsdc(rpcUrl);
  server = await startCounted(agent(), { devMode: false, payment: payment("base-sepolia") });
  // A server whose 402 offers Base mainnet, correctly configured otherwise.
  mainnet = await startCounted(agent(), { devMode: false, payment: payment("base") });
  // The seller's project: its .env says what the deployment should offer.
  project = await mkdtemp(join(tmpdir(), "smoke-"));
  await writeFile(join(project, ".env"), `PAY_TO=${PAYEE}\nX402_NETWORK=base-sepolia\n`);
});
afterAll(async () => {
  await server?.close();
  await mainnet?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

const smoke = (args: string[], env: Record<string, string> = {}) =>
  runCli("smoke", args, { cwd: project, env });

async function fundedPayer(usdc: bigint): Promise<{ key: Hex; address: Hex }> {
  const key = generatePrivateKey();
  const address = privateKeyToAddress(key);
  await mintUsdc(rpcUrl, BASE_SEPOLIA_USDC, address, usdc);
  return { key, address };
}

describe("create-agent smoke", () => {
  it("passes against a deployment that matches the project's .env, one line per check", async () => {
    const r = await smoke([server.url]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    for (const check of ["/health", "agent card", "/openapi.json", "402 offer network"])
      expect(r.stdout).toMatch(new RegExp(`^ok +${check.replace(/[./]/g, "\\$&")}: `, "m"));
    expect(r.stdout).toContain(`payTo: ${PAYEE} (PAY_TO (.env))`);
    expect(r.stdout).toContain("amount: 10000 (GET /about: 0.01 USDC)");
    expect(r.stdout).toContain("smoke: every check passed");
    expect(server.paidExecutes()).toBe(0);
  });

  it("fails naming the payee when PAY_TO differs from what the seller expects", async () => {
    const r = await smoke([server.url], { PAY_TO: OTHER });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `^FAIL +402 offer base-sepolia \\(eip155:84532\\) v2 payTo: ${PAYEE}, expected ${OTHER} \\(PAY_TO \\(the environment\\)\\)$`,
        "m",
      ),
    );
    const flag = await smoke([server.url, "--pay-to", OTHER]);
    expect(flag.exitCode).toBe(1);
    expect(flag.stdout).toContain(`payTo: ${PAYEE}, expected ${OTHER} (--pay-to)`);
  });

  it("--settings reads the settings the deployment runs with (.env.production) instead of .env", async () => {
    await writeFile(
      join(project, ".env.production"),
      `PAY_TO=${OTHER}\nX402_NETWORK=base-sepolia\n`,
    );
    const r = await smoke([server.url, "--settings", ".env.production"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain(`payTo: ${PAYEE}, expected ${OTHER} (PAY_TO (.env.production))`);
    const missing = await smoke([server.url, "--settings", ".env.prod"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("--settings .env.prod: no such file");
    expect(server.paidExecutes()).toBe(0);
  });

  it("fails naming the network when the deployment offers another one", async () => {
    const r = await smoke([server.url, "--network", "base"]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL +402 offer network: base-sepolia \(eip155:84532\), expected base \(eip155:8453\) \(--network\)$/m,
    );
  });

  it("--pay runs one paid job: the payee gains the price once", async () => {
    const payer = await fundedPayer(1_000_000n);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const paidBefore = server.paidExecutes();
    const r = await smoke([server.url, "--pay"], { X402_PAYER_KEY: payer.key });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^ok +paid job: echo paid 0\.01 USDC on eip155:84532, transaction 0x[0-9a-f]{64}$/m,
    );
    expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
    expect(await balance(payer.address)).toBe(payerBefore - PRICE);
    expect(server.paidExecutes()).toBe(paidBefore + 1);
    expect(r.stdout + r.stderr).not.toContain(payer.key.slice(2));
  });

  it("--pay on a mainnet offer without --mainnet: refused before anything is signed", async () => {
    const payer = await fundedPayer(1_000_000n);
    const payerBefore = await balance(payer.address);
    const r = await smoke([mainnet.url, "--pay", "--network", "base"], {
      X402_PAYER_KEY: payer.key,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL +paid job: base \(eip155:8453\) is not a testnet: .*pass --mainnet to pay it; nothing was signed$/m,
    );
    expect(mainnet.paidExecutes()).toBe(0);
    expect(await balance(payer.address)).toBe(payerBefore);
  });

  it("--pay is not attempted when a check failed", async () => {
    const payer = await fundedPayer(1_000_000n);
    const paidBefore = server.paidExecutes();
    const r = await smoke([server.url, "--pay", "--pay-to", OTHER], { X402_PAYER_KEY: payer.key });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/^FAIL +paid job: not attempted: 1 check\(s\) failed/m);
    expect(server.paidExecutes()).toBe(paidBefore);
  });
});
