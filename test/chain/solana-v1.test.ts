// Solana for x402 v1 clients: the v1 body lists solana-devnet (its v1 name) next to Base Sepolia, and the
// official v1 client (`x402-fetch` 1.2.0 with the `x402` package's Solana signer, RPC pointed at the kit) pays
// on it, X-PAYMENT in and X-PAYMENT-RESPONSE out, settled through the reference facilitator (its v1 Solana
// scheme, which registerExactSvmScheme adds) and directly (@x402/svm's ExactSvmSchemeV1 in this process).
// The same setup as solana.test.ts: the shared anvil (Base Sepolia) and the Solana kit (LiteSVM behind a
// loopback JSON-RPC, USDC at devnet's address).
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as FacilitatorSvmScheme } from "@x402/svm/exact/facilitator";
import { createSolanaRpc, devnet } from "@solana/kit";
import { createPaymentHeader } from "x402/client";
import { createSigner, decodeXPaymentResponse, wrapFetchWithPayment } from "x402-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { checkRoutes } from "../../templates/runtime/payments/routes.js";
import { encodeBase64Json } from "../../templates/runtime/payments/x402.js";
import { captureLogger, job, listen, logText, makeAgent, post, unb64 } from "../runtime/helpers.js";
import { type SolanaAccount, type SolanaKit } from "../solana/kit.js";
import { serveFacilitator } from "./facilitator.js";
import {
  settlementRoutes,
  type SolanaServer,
  type SolanaServers,
  startSolanaServers,
} from "./solana-servers.js";

const PRICE = 10_000n;
let kit: SolanaKit;
let baseUsdc: `0x${string}`;
let payTo: string;

type Server = SolanaServer;
let servers: SolanaServers;

beforeAll(async () => {
  servers = await startSolanaServers();
  ({ kit, baseUsdc, payTo } = servers);
}, 120_000);

afterAll(async () => {
  await servers?.close();
});

const soon = () => ({ deadline: Math.floor(Date.now() / 1000) + 30 });

type V1Requirement = Record<string, unknown> & { network: string };

/** The v1 body of a 402 for this job (the facilitator route learns its fee payer at start). */
async function v1Accepts(server: Server, body: unknown): Promise<V1Requirement[]> {
  for (let i = 0; ; i++) {
    const res = await post(server.running.url, body);
    expect(res.status).toBe(402);
    const accepts = res.body.accepts as V1Requirement[];
    if (accepts.some((a) => a.network === "solana-devnet") || i >= 50) return accepts;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The official v1 client's X-PAYMENT for the solana-devnet entry of the v1 body. */
async function v1Payment(payer: SolanaAccount, accepts: V1Requirement[]): Promise<string> {
  const signer = await createSigner("solana-devnet", payer.secretKey);
  const requirement = accepts.find((a) => a.network === "solana-devnet")!;
  return createPaymentHeader(signer, 1, requirement as never, {
    svmConfig: { rpcUrl: kit.rpcUrl },
  });
}

const balances = (payer: SolanaAccount) => servers.balances(payer.address);

const routes = settlementRoutes(() => servers);

describe.each(routes)("Solana for x402 v1 clients, settled %s", (_, server, expectedFeePayer) => {
  it("the v1 body lists Base Sepolia then solana-devnet (its v1 name) with the fee payer; a far job's leaves Solana out", async () => {
    const accepts = await v1Accepts(server(), job("echo", { text: "x" }, soon()));
    expect(accepts.map((a) => [a.network, a.asset, a.maxAmountRequired])).toEqual([
      ["base-sepolia", baseUsdc, "10000"],
      ["solana-devnet", kit.mint, "10000"],
    ]);
    expect(accepts[1]).toMatchObject({
      scheme: "exact",
      payTo,
      extra: { feePayer: expectedFeePayer() },
    });

    const far = await post(
      server().running.url,
      job("echo", { text: "far" }, { deadline: Math.floor(Date.now() / 1000) + 300 }),
    );
    expect(far.status).toBe(402);
    expect(far.body.accepts.map((a: V1Requirement) => a.network)).toEqual(["base-sepolia"]);
    expect(far.body.error).toMatch(/not payable on solana:EtWT.*within 30 s/);
  });

  it("x402-fetch 1.2.0 (x402 v1, X-PAYMENT) pays 0.01 USDC on Solana: X-PAYMENT-RESPONSE names solana-devnet, one run, nothing moves on Base Sepolia", async () => {
    const payer = await kit.fundedPayer(1_000_000n);
    const before = await balances(payer);
    const runs = server().agent.calls.echo ?? 0;
    const paying = wrapFetchWithPayment(
      fetch,
      await createSigner("solana-devnet", payer.secretKey),
      undefined,
      undefined,
      { svmConfig: { rpcUrl: kit.rpcUrl } },
    );
    const res = await paying(`${server().running.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job("echo", { text: "v1 sol" }, soon())),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text).output).toEqual({ text: "v1 sol" });
    expect(res.headers.get("payment-response")).toBeNull();
    expect(decodeXPaymentResponse(res.headers.get("x-payment-response")!)).toMatchObject({
      success: true,
      network: "solana-devnet",
      payer: payer.address,
    });
    expect(await balances(payer)).toEqual({
      payTo: before.payTo + PRICE,
      payer: before.payer - PRICE,
      basePayee: before.basePayee,
    });
    expect(server().agent.calls.echo).toBe(runs + 1);
  });

  it("a v1 payment used again is refused, for another job and carried as x402 v2 alike; one transfer", async () => {
    const payer = await kit.fundedPayer(1_000_000n);
    const body = job("echo", { text: "once" }, soon());
    const header = await v1Payment(payer, await v1Accepts(server(), body));
    const before = await balances(payer);
    const runs = server().agent.calls.echo ?? 0;

    const first = await post(server().running.url, body, { "X-PAYMENT": header });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get("x-payment-response")).not.toBeNull();

    const other = await post(server().running.url, job("echo", { text: "other" }, soon()), {
      "X-PAYMENT": header,
    });
    expect(other.status).toBe(402);
    expect(other.body.error).toMatch(/already used/);

    // The same transaction in x402 v2's shape: one transaction is one payment, whichever version carries it.
    const res402 = await post(server().running.url, job("echo", { text: "v2" }, soon()));
    const offer = unb64(res402.headers.get("payment-required")!).accepts.find(
      (a: { network: string }) => a.network === kit.network,
    );
    const v1 = unb64(header);
    const asV2 = encodeBase64Json({ x402Version: 2, accepted: offer, payload: v1.payload });
    const again = await post(server().running.url, job("echo", { text: "v2" }, soon()), {
      "PAYMENT-SIGNATURE": asV2,
    });
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/already used/);

    expect(server().agent.calls.echo).toBe(runs + 1);
    expect(await balances(payer)).toMatchObject({
      payTo: before.payTo + PRICE,
      payer: before.payer - PRICE,
    });
  });

  it("a v1 Solana payment for a job due in 300 s is refused before it runs, naming the limit", async () => {
    const payer = await kit.fundedPayer(1_000_000n);
    const header = await v1Payment(
      payer,
      await v1Accepts(server(), job("echo", { text: "x" }, soon())),
    );
    const before = await balances(payer);
    const runs = server().agent.calls.echo ?? 0;
    const far = job("echo", { text: "far" }, { deadline: Math.floor(Date.now() / 1000) + 300 });
    const res = await post(server().running.url, far, { "X-PAYMENT": header });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/Solana pays only for jobs due within 30 s/);
    expect(server().agent.calls.echo ?? 0).toBe(runs);
    expect(await balances(payer)).toEqual(before);
  });
});

describe("a facilitator that lists Solana for x402 v2 only", () => {
  it("start-up warns that v1 payments on solana-devnet will be refused, and one is refused before it runs", async () => {
    // The reference facilitator with the v2 Solana scheme alone (registerExactSvmScheme adds v1 too).
    const v2Only = new x402Facilitator();
    const signer = await kit.newAccount();
    v2Only.register(
      kit.network as `${string}:${string}`,
      new FacilitatorSvmScheme(
        toFacilitatorSvmSigner(signer.signer, {
          [kit.network]: createSolanaRpc(devnet(kit.rpcUrl)),
        }),
      ),
    );
    const served = await serveFacilitator(v2Only);
    const env = {
      X402_NETWORK: "solana-devnet",
      X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl,
      PAY_TO_SOLANA: payTo,
      X402_FACILITATOR_URL: served.url,
    };
    const logger = captureLogger();
    await checkRoutes(resolveConfig({ devMode: false, env }), logger);
    const agent = makeAgent();
    const running = await listen(
      createApp(agent, { devMode: false, env, logger: captureLogger() }),
    );
    try {
      const payer = await kit.fundedPayer(1_000_000n);
      const body = job("echo", { text: "v1" }, soon());
      const header = await v1Payment(payer, await v1Accepts({ running, agent }, body));
      expect(logText(logger)).toMatch(
        /no x402 facilitator in X402_FACILITATOR_URL lists x402 v1 "exact" on solana-devnet: payments from v1 clients \(X-PAYMENT\) on solana:EtWT\w+ will be refused/,
      );
      const res = await post(running.url, body, { "X-PAYMENT": header });
      expect(res.status).toBe(402);
      expect(res.body.error).toMatch(
        /no configured x402 facilitator settles x402 v1 "exact" payments on solana:EtWT\w+ \(solana-devnet\)/,
      );
      expect(agent.calls.echo ?? 0).toBe(0);
      expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n);
    } finally {
      await running.close();
      await served.stop();
    }
  });
});
