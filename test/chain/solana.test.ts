// Solana next to an EVM network in one offer: the shared anvil (Base Sepolia) and the Solana kit (a real
// Solana runtime, LiteSVM, behind a loopback JSON-RPC endpoint, USDC at devnet's address). The official
// @x402/fetch + @x402/svm client pays on Solana, settled through a facilitator (the reference x402Facilitator
// with the SVM scheme; the first facilitator listed knows only EVM, so Solana goes to the second) and
// directly (SOLANA_FEE_PAYER_KEY: this server co-signs and sends). USDC moves on Solana only.
import { x402Client } from "@x402/core/client";
import { wrapFetchWithPayment, x402Client as FetchClient } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { checkRoutes } from "../../templates/runtime/payments/routes.js";
import { encodeBase64Json } from "../../templates/runtime/payments/x402.js";
import { captureLogger, job, logText, makeAgent, post, unb64 } from "../runtime/helpers.js";
import {
  type SolanaAccount,
  type SolanaKit,
  startSvmFacilitator,
  type SvmFacilitator,
} from "../solana/kit.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { withDiscovery } from "../runtime/discovery-fixture.js";
import { runCall } from "../cli/call-helpers.js";
import { buildCli } from "../cli/client-project.js";
import { FACILITATOR_KEY, PAYEE } from "./accounts.js";
import {
  settlementRoutes,
  type SolanaServer,
  type SolanaServers,
  startSolanaServers,
} from "./solana-servers.js";
import { usdcBalance } from "./usdc.js";
import { expectPaidAnswer } from "../runtime/answers.js";

const base = inject("chain");
const PRICE = 10_000n;
let kit: SolanaKit;
let facilitator: SvmFacilitator;
let baseUsdc: `0x${string}`;
let payTo: string;
let payer: SolanaAccount;
let feePayer: SolanaAccount;

type Server = SolanaServer;
let servers: SolanaServers;
let viaFacilitator: Server;
let direct: Server;
const start = (env: Record<string, string>): Promise<Server> => servers.start(env);

beforeAll(async () => {
  servers = await startSolanaServers(() => withDiscovery(makeAgent()));
  ({ kit, facilitator, baseUsdc, payTo, feePayer, viaFacilitator, direct } = servers);
  payer = await kit.fundedPayer(1_000_000n);
}, 120_000);

afterAll(async () => {
  await servers?.close();
});

const soon = (extra: Record<string, unknown> = {}) => ({
  deadline: Math.floor(Date.now() / 1000) + 30,
  ...extra,
});

const paymentRequired = (server: Server, body: unknown) => servers.required(server, body);

/** The official client's payment for the Solana offer of `required`, as a PAYMENT-SIGNATURE value. */
async function solanaPayment(
  required: { accepts: Array<{ network: string }> },
  override: Record<string, unknown> = {},
) {
  const client = new x402Client().register(
    kit.network as `${string}:${string}`,
    new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
  );
  const offer = required.accepts.find((a) => a.network === kit.network)!;
  const payload = await client.createPaymentPayload({
    ...(required as Parameters<typeof client.createPaymentPayload>[0]),
    accepts: [{ ...offer, ...override } as never],
  });
  return { payload, header: encodeBase64Json(payload) };
}

const balances = () => servers.balances(payer.address);

const routes = settlementRoutes(() => servers);

describe.each(routes)("Solana next to Base Sepolia, settled %s", (_, server, expectedFeePayer) => {
  it("one 402 offers Base Sepolia then Solana devnet, the Solana offer naming its fee payer", async () => {
    const { required, body } = await paymentRequired(server(), job("echo", { text: "x" }, soon()));
    expect(
      required.accepts.map((a: Record<string, unknown>) => [a.network, a.asset, a.amount]),
    ).toEqual([
      ["eip155:84532", baseUsdc, "10000"],
      [kit.network, kit.mint, "10000"],
    ]);
    expect(required.accepts[1]).toMatchObject({ payTo, extra: { feePayer: expectedFeePayer() } });
    // x402 v1 clients are offered both, by their v1 names (solana-v1.test.ts pays them).
    expect(body.accepts.map((a: { network: string }) => a.network)).toEqual([
      "base-sepolia",
      "solana-devnet",
    ]);
  });

  it("the official @x402/fetch + @x402/svm client pays 0.01 USDC on Solana; nothing moves on Base Sepolia", async () => {
    const before = await balances();
    const runs = server().agent.calls.echo ?? 0;
    const paying = wrapFetchWithPayment(
      fetch,
      new FetchClient().register(
        kit.network as `${string}:${string}`,
        new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
      ),
    );
    const res = await paying(`${server().running.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(job("echo", { text: "sol" }, soon())),
    });
    const text = await res.text();
    expectPaidAnswer(res, text, { text: "sol" }, kit.network, payer.address);
    expect(await balances()).toEqual({
      payTo: before.payTo + PRICE,
      payer: before.payer - PRICE,
      basePayee: before.basePayee,
    });
    expect(server().agent.calls.echo).toBe(runs + 1);
  });

  it("the same payment again for another job is refused with no second transfer; an identical retry gets the cached result", async () => {
    const body = job("echo", { text: "once" }, soon());
    const { required } = await paymentRequired(server(), body);
    const { header } = await solanaPayment(required);
    const before = await balances();
    const runs = server().agent.calls.echo ?? 0;

    const first = await post(server().running.url, body, { "PAYMENT-SIGNATURE": header });
    const firstText = first.text;
    expect(first.status, firstText).toBe(200);
    const again = await post(server().running.url, body, { "PAYMENT-SIGNATURE": header });
    expect(again.status).toBe(200);
    expect(again.text).toBe(firstText);

    const other = await post(server().running.url, job("echo", { text: "other" }, soon()), {
      "PAYMENT-SIGNATURE": header,
    });
    expect(other.status).toBe(402);
    expect(other.body.error).toMatch(/already used/);

    expect(server().agent.calls.echo).toBe(runs + 1);
    expect(await balances()).toMatchObject({
      payTo: before.payTo + PRICE,
      payer: before.payer - PRICE,
    });
  });

  it("an underpayment is refused before the handler runs, and nothing moves", async () => {
    const body = job("echo", { text: "short" }, soon());
    const { required } = await paymentRequired(server(), body);
    const offer = required.accepts.find((a: { network: string }) => a.network === kit.network);
    // A transfer of 0.009999 presented as payment of the 0.01 offer.
    const { payload } = await solanaPayment(required, { amount: (PRICE - 1n).toString() });
    const header = encodeBase64Json({ ...payload, accepted: offer });
    const before = await balances();
    const runs = server().agent.calls.echo ?? 0;
    const res = await post(server().running.url, body, { "PAYMENT-SIGNATURE": header });
    expect(res.status).toBe(402);
    expect(res.body.error_type).toBe("payment");
    expect(server().agent.calls.echo ?? 0).toBe(runs);
    expect(await balances()).toEqual(before);
  });

  it("a job due in 300 s is not offered Solana, and a Solana payment for it is refused before it runs, naming the limit", async () => {
    const far = job("echo", { text: "far" }, { deadline: Math.floor(Date.now() / 1000) + 300 });
    const res = await post(server().running.url, far);
    expect(res.status).toBe(402);
    const required = unb64(res.headers.get("payment-required")!);
    expect(required.accepts.map((a: { network: string }) => a.network)).toEqual(["eip155:84532"]);
    expect(required.error).toMatch(
      /not payable on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1: .*within 30 s/,
    );
    expect(res.body.error).toMatch(/within 30 s/);

    // A payment made from a near job's offer, sent for the far one.
    const { required: near } = await paymentRequired(server(), job("echo", { text: "x" }, soon()));
    const { header } = await solanaPayment(near);
    const before = await balances();
    const runs = server().agent.calls.echo ?? 0;
    const paid = await post(server().running.url, far, { "PAYMENT-SIGNATURE": header });
    expect(paid.status).toBe(402);
    const refused = paid.body;
    expect(refused.error_type).toBe("payment");
    expect(refused.error).toMatch(/Solana pays only for jobs due within 30 s/);
    expect(server().agent.calls.echo ?? 0).toBe(runs);
    expect(await balances()).toEqual(before);
  });
});

describe("Solana on two instances sharing one Redis ledger", () => {
  let redis: RedisServer;
  const instances: Server[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    for (let i = 0; i < 2; i++)
      instances.push(
        await start({
          X402_FACILITATOR_URL: base.facilitatorUrl,
          SOLANA_FEE_PAYER_KEY: feePayer.secretKey,
          REDIS_URL: redis.url,
          REDIS_KEY_PREFIX: "solana-instances:",
        }),
      );
  }, 60_000);
  afterAll(async () => {
    for (const s of instances) await s.running.close();
    await redis?.stop();
  });

  it("one Solana payment sent to both at once runs one handler and moves one transfer", async () => {
    const body = job("echo", { text: "both" }, soon());
    const { required } = await paymentRequired(instances[0]!, body);
    const { header } = await solanaPayment(required);
    const before = await balances();
    const runs = () => instances.reduce((n, s) => n + (s.agent.calls.echo ?? 0), 0);
    const runsBefore = runs();
    const answers = await Promise.all(
      [0, 1, 0, 1].map((i) =>
        post(instances[i]!.running.url, body, { "PAYMENT-SIGNATURE": header }),
      ),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // Every answer is the one result, or a refusal saying the payment is in use.
    for (const a of answers)
      if (a.status !== 200) expect(a.body.error, a.text).toMatch(/in use|already used/);
    expect(new Set(ok.map((a) => a.text)).size).toBe(1);
    expect(runs()).toBe(runsBefore + 1);
    expect(await balances()).toMatchObject({
      payTo: before.payTo + PRICE,
      payer: before.payer - PRICE,
    });
  });
});

describe("Solana in start-up checks and discovery", () => {
  it("the kit's facilitator can serve an EVM chain too: one /supported lists both", async () => {
    const both = await startSvmFacilitator(kit, {
      evm: { rpcUrl: base.rpcUrl, privateKey: FACILITATOR_KEY },
    });
    try {
      const supported = (await (await fetch(`${both.url}/supported`)).json()) as {
        kinds: Array<{ x402Version: number; network: string }>;
      };
      const v2 = supported.kinds.filter((k: { x402Version: number }) => k.x402Version === 2);
      expect(v2.map((k: { network: string }) => k.network)).toEqual(
        expect.arrayContaining(["eip155:84532", kit.network]),
      );
    } finally {
      await both.stop();
    }
  });

  it("start-up refuses Solana when no facilitator lists it and no fee payer key is set, and passes with the second facilitator", async () => {
    const env = {
      X402_NETWORKS: "base-sepolia,solana-devnet",
      PAY_TO: PAYEE,
      PAY_TO_SOLANA: payTo,
      X402_RPC_URL: base.rpcUrl,
    };
    const only = resolveConfig({
      devMode: false,
      env: { ...env, X402_FACILITATOR_URL: base.facilitatorUrl },
    });
    const error = await checkRoutes(only, captureLogger()).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toMatch(
      /^no x402 facilitator in X402_FACILITATOR_URL settles x402 v2 "exact" payments on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1 \(solana-devnet\): .*SOLANA_FEE_PAYER_KEY and X402_RPC_URL_SOLANA_DEVNET/,
    );
    const both = resolveConfig({
      devMode: false,
      env: { ...env, X402_FACILITATOR_URL: `${base.facilitatorUrl},${facilitator.url}` },
    });
    const logger = captureLogger();
    await checkRoutes(both, logger);
    expect(logText(logger)).toContain(`"fee_payer":"${facilitator.feePayer}"`);
  });

  it("the agent card, OpenAPI x-x402 and /llms.txt list the Solana network with its mint and payee", async () => {
    const url = viaFacilitator.running.url;
    const card = await (await fetch(`${url}/.well-known/agent-card.json`)).json();
    const x402 = JSON.stringify(card);
    expect(x402).toContain(
      `{"network":"${kit.network}","networkV1":"solana-devnet","asset":"${kit.mint}","payTo":"${payTo}"}`,
    );
    const openapi = await (await fetch(`${url}/openapi.json`)).json();
    expect(JSON.stringify(openapi)).toContain(
      `{"network":"${kit.network}","asset":"${kit.mint}","payTo":"${payTo}"}`,
    );
    const llms = await (await fetch(`${url}/llms.txt`)).text();
    expect(llms).toContain(`"${kit.network}"`);
    expect(llms).toMatch(/Solana is offered only for jobs due within 30 s/);
  });
});

describe("create-agent call against this server on Solana", () => {
  it("pays 0.01 USDC on Solana with --network solana-devnet: the server co-signs, the payee gains the price once, the handler runs once", async () => {
    await buildCli();
    const buyer = await kit.fundedPayer(1_000_000n);
    const before = await balances();
    const runs = direct.agent.calls.echo ?? 0;
    const r = await runCall(
      [direct.running.url, "echo", "--input", "text=from call", "--network", "solana-devnet"],
      { env: { SOLANA_PAYER_KEY: buyer.secretKey, X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "from call" });
    expect(r.stderr).toContain(`paid 0.01 USDC on ${kit.network}`);
    expect(await kit.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);
    expect(await kit.usdcBalance(payTo)).toBe(before.payTo + PRICE);
    expect(await usdcBalance(base.rpcUrl, baseUsdc, PAYEE)).toBe(before.basePayee);
    expect(direct.agent.calls.echo).toBe(runs + 1);
  }, 120_000);
});
