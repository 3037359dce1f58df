// Two EVM networks in one offer, on two real chains: the shared anvil (Base Sepolia, 84532) and a second
// anvil started once here as Arbitrum Sepolia (421614), each with Circle's FiatTokenV2_2 at that network's
// real USDC address. One server offers both; the official @x402/fetch + @x402/evm client pays on each;
// USDC moves on that chain only, settled directly by the server's settler key through that network's RPC.
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import { noMetrics } from "../../templates/runtime/ops/metrics.js";
import { createRouteHealth } from "../../templates/runtime/payments/route-health.js";
import {
  captureLogger,
  job,
  listen,
  makeAgent,
  post,
  unb64,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";
import { startAnvil, type Anvil } from "./anvil.js";
import { deployUsdc, ensureBaseSepoliaUsdc, freshPayer, mintUsdc, usdcBalance } from "./usdc.js";
import { expectPaidAnswer } from "../runtime/answers.js";

const base = inject("chain");
const ARB = KNOWN_NETWORKS["arbitrum-sepolia"];
let arb: Anvil;
let baseUsdc: `0x${string}`;
let agent: TestAgent;
let server: Running;
let payer: PrivateKeyAccount;

const env = () => ({
  X402_NETWORKS: "base-sepolia,arbitrum-sepolia",
  X402_SETTLER_KEY: SETTLER_KEY,
  X402_RPC_URL: base.rpcUrl,
  X402_RPC_URL_ARBITRUM_SEPOLIA: arb.rpcUrl,
});

beforeAll(async () => {
  arb = await startAnvil({ chainId: ARB.chainId });
  baseUsdc = await ensureBaseSepoliaUsdc(base.rpcUrl);
  await deployUsdc(arb.rpcUrl, { name: ARB.assetName, version: ARB.assetVersion, at: ARB.asset });
  // One payer key funded on both chains (the same address holds 1 USDC on each).
  payer = await freshPayer(base.rpcUrl, baseUsdc, 1_000_000n);
  await mintUsdc(arb.rpcUrl, ARB.asset, payer.address, 1_000_000n);
  agent = makeAgent();
  server = await listen(
    createApp(agent, {
      devMode: false,
      payment: { payTo: PAYEE },
      env: env(),
      logger: captureLogger(),
    }),
  );
}, 120_000);
afterAll(async () => {
  await server?.close();
  await arb?.stop();
});

/** What each chain says `who` holds. */
const balances = async (who: `0x${string}`) => ({
  base: await usdcBalance(base.rpcUrl, baseUsdc, who),
  arb: await usdcBalance(arb.rpcUrl, ARB.asset, who),
});

/** The official client, able to pay only on `network`. */
const payingOn = (network: string) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register(
      network as `${string}:${string}`,
      new ExactEvmScheme(toClientEvmSigner(payer)),
    ),
  );

async function payJob(network: string, text: string) {
  const res = await payingOn(network)(`${server.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(job("echo", { text })),
  });
  return { res, text: await res.text() };
}

describe("two EVM chains in one offer", () => {
  it("the 402 offers Base Sepolia then Arbitrum Sepolia, each with its own USDC", async () => {
    const res = await post(server.url, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    const accepts = unb64(res.headers.get("payment-required")!).accepts;
    expect(accepts.map((a: Record<string, unknown>) => [a.network, a.asset, a.amount])).toEqual([
      ["eip155:84532", baseUsdc, "10000"],
      ["eip155:421614", ARB.asset, "10000"],
    ]);
  });

  it("the official client pays on Arbitrum Sepolia: USDC moves there, not on Base Sepolia", async () => {
    const payerBefore = await balances(payer.address);
    const payeeBefore = await balances(PAYEE);
    const runs = agent.calls.echo ?? 0;
    const { res, text } = await payJob(ARB.caip2, "arb");
    expectPaidAnswer(res, text, { text: "arb" }, ARB.caip2, payer.address);
    expect(await balances(payer.address)).toEqual({
      base: payerBefore.base,
      arb: payerBefore.arb - 10_000n,
    });
    expect(await balances(PAYEE)).toEqual({
      base: payeeBefore.base,
      arb: payeeBefore.arb + 10_000n,
    });
    expect(agent.calls.echo).toBe(runs + 1);
  });

  it("the official client pays on Base Sepolia: USDC moves there, not on Arbitrum Sepolia", async () => {
    const payerBefore = await balances(payer.address);
    const payeeBefore = await balances(PAYEE);
    const { res, text } = await payJob("eip155:84532", "base");
    expect(res.status, text).toBe(200);
    expect(unb64(res.headers.get("payment-response")!).network).toBe("eip155:84532");
    expect(await balances(payer.address)).toEqual({
      base: payerBefore.base - 10_000n,
      arb: payerBefore.arb,
    });
    expect(await balances(PAYEE)).toEqual({
      base: payeeBefore.base + 10_000n,
      arb: payeeBefore.arb,
    });
  });

  it("startup refuses a network whose RPC serves another chain, naming its setting", async () => {
    const checkAtStart = (env: Record<string, string>) => {
      const config = resolveConfig({ devMode: false, payment: { payTo: PAYEE }, env });
      if (config.devMode) throw new Error("production expected");
      return createRouteHealth(config.payment, {
        logger: captureLogger(),
        metrics: noMetrics,
      })!.checkAtStart();
    };
    await expect(
      checkAtStart({ ...env(), X402_RPC_URL_ARBITRUM_SEPOLIA: base.rpcUrl }),
    ).rejects.toThrow(
      /X402_RPC_URL_ARBITRUM_SEPOLIA \(else X402_RPC_URL\) at \S+ serves chain 84532, but X402_NETWORKS lists arbitrum-sepolia \(eip155:421614\), chain 421614: point X402_RPC_URL_ARBITRUM_SEPOLIA at a node of chain 421614/,
    );
    await expect(checkAtStart(env())).resolves.toBeUndefined();
    // With a facilitator the RPC only serves on-chain checks, and is checked all the same.
    const { X402_SETTLER_KEY: _direct, ...checksOnly } = env();
    await expect(
      checkAtStart({
        ...checksOnly,
        X402_FACILITATOR_URL: base.facilitatorUrl,
        X402_RPC_URL_ARBITRUM_SEPOLIA: base.rpcUrl,
      }),
    ).rejects.toThrow(
      /X402_RPC_URL_ARBITRUM_SEPOLIA \(else X402_RPC_URL\) at \S+ serves chain 84532, but X402_NETWORKS lists arbitrum-sepolia \(eip155:421614\).*paid jobs are checked on chain through it/,
    );
  });
});
