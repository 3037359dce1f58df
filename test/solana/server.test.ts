// A server offering Solana only (no PAY_TO, no EVM network), settling directly on the kit: the official
// client pays; payments for another network, in an x402 version or shape we do not take, or without a Solana
// transaction are refused before anything runs, each saying what is wrong.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { encodeBase64Json } from "../../templates/runtime/payments/x402.js";
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
import { withDiscovery } from "../runtime/discovery-fixture.js";
import { type SolanaAccount, type SolanaKit, startSolanaKit } from "./kit.js";

let kit: SolanaKit;
let server: Running;
let agent: TestAgent;
let payer: SolanaAccount;
let payTo: string;

/** A Solana-only server's settings: PAY_TO_SOLANA, `feePayer` settling directly on the kit's RPC. */
const solanaOnly = (
  feePayer: SolanaAccount,
  payee = payTo,
  rpcUrl = kit.rpcUrl,
): Record<string, string> => ({
  X402_NETWORK: "solana-devnet",
  PAY_TO_SOLANA: payee,
  SOLANA_FEE_PAYER_KEY: feePayer.keygenJson,
  X402_RPC_URL_SOLANA_DEVNET: rpcUrl,
});

beforeAll(async () => {
  kit = await startSolanaKit();
  const feePayer = await kit.newAccount();
  payer = await kit.fundedPayer(1_000_000n);
  payTo = await kit.payee();
  agent = makeAgent();
  server = await listen(
    createApp(agent, {
      devMode: false,
      env: solanaOnly(feePayer),
      logger: captureLogger(),
    }),
  );
});
afterAll(async () => {
  await server?.close();
  await kit?.close();
});

const soon = () => ({ deadline: Math.floor(Date.now() / 1000) + 30 });

async function signed(body: unknown) {
  const res = await post(server.url, body);
  expect(res.status).toBe(402);
  const required = unb64(res.headers.get("payment-required")!);
  const client = new x402Client().register(
    kit.network as `${string}:${string}`,
    new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
  );
  return client.createPaymentPayload(required);
}

describe("a Solana-only server", () => {
  it("takes the official client's payment with no EVM settings at all", async () => {
    const body = job("echo", { text: "sol" }, soon());
    // One offer, in both x402 versions: the v1 body names the network by its v1 name.
    const unpaid = await post(server.url, body);
    expect(unpaid.body.accepts.map((a: { network: string }) => a.network)).toEqual([
      "solana-devnet",
    ]);
    expect(unb64(unpaid.headers.get("payment-required")!).accepts).toHaveLength(1);
    const payment = await signed(body);
    const res = await post(server.url, body, { "PAYMENT-SIGNATURE": encodeBase64Json(payment) });
    expect(res.status, res.text).toBe(200);
    expect(await kit.usdcBalance(payTo)).toBe(10_000n);
  });

  it("refuses, before running anything, a payment for another network, in x402 v3, v1 on mainnet's name, or without a transaction", async () => {
    const body = job("echo", { text: "no" }, soon());
    const payment = await signed(body);
    const runs = agent.calls.echo ?? 0;
    const cases: Array<[unknown, RegExp]> = [
      [
        {
          ...payment,
          accepted: { ...payment.accepted, network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" },
        },
        /payment is for network "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" but this service takes payments on "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"/,
      ],
      [{ ...payment, x402Version: 3 }, /unsupported x402Version 3 \(supported: 1, 2\)/],
      [
        { x402Version: 1, scheme: "exact", network: "solana", payload: payment.payload },
        /payment is for network "solana" but this service takes payments on "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" \(solana-devnet\)/,
      ],
      [
        { x402Version: 1, scheme: "upto", network: "solana-devnet", payload: payment.payload },
        /unsupported payment scheme "upto"/,
      ],
      [{ ...payment, payload: {} }, /has no payload.transaction/],
      [
        { ...payment, payload: { transaction: "AAAA" } },
        /payload.transaction is not a Solana transaction/,
      ],
      [
        { ...payment, accepted: { ...payment.accepted, amount: "1" } },
        /accepted requirement does not match this capability's offer: amount 1/,
      ],
    ];
    for (const [sent, why] of cases) {
      const res = await post(server.url, body, { "PAYMENT-SIGNATURE": encodeBase64Json(sent) });
      expect(res.status, res.text).toBe(402);
      expect(res.body.error).toMatch(why);
    }
    expect(agent.calls.echo ?? 0).toBe(runs);
    expect(await kit.usdcBalance(payTo)).toBe(10_000n);
  });

  it("a job due too late for Solana gets a 402 with no offer that says why", async () => {
    const res = await post(server.url, job("echo", { text: "far" }));
    expect(res.status).toBe(402);
    const required = unb64(res.headers.get("payment-required")!);
    expect(required.accepts).toEqual([]);
    expect(required.error).toMatch(
      /not payable on solana:EtWT.*Solana pays only for jobs due within 30 s/,
    );
    expect(res.body.error).toBe(required.error);
  });

  it("an MCP tool call with the default deadline (45 s) gets no offer, and the PaymentRequired says why", async () => {
    const client = new Client({ name: "solana-only-mcp", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      const result = await client.callTool({ name: "echo", arguments: { text: "far" } });
      expect(result.isError).toBe(true);
      const required = result.structuredContent as { accepts: unknown[]; error: string };
      expect(required.accepts).toEqual([]);
      expect(required.error).toMatch(
        /not payable on solana:EtWT.*deadline is 45 s away.*Solana pays only for jobs due within 30 s/,
      );
    } finally {
      await client.close();
    }
  });

  it("/llms.txt tells an assistant to send an MCP deadline Solana can be paid for", async () => {
    const env = solanaOnly(await kit.newAccount());
    const own = await listen(
      createApp(withDiscovery(makeAgent()), { devMode: false, env, logger: captureLogger() }),
    );
    try {
      const res = await fetch(`${own.url}/llms.txt`);
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).toContain(
        "pays only for jobs due within 30 s: send `params._meta.deadline` at most 30 s away",
      );
    } finally {
      await own.close();
    }
  });

  it("start-up warns that MCP's default deadline cannot be paid on Solana, naming the setting to change", async () => {
    const env = solanaOnly(await kit.newAccount());
    const warned = (extra: Record<string, string>) => {
      const logger = captureLogger();
      createApp(makeAgent(), { devMode: false, env: { ...env, ...extra }, logger });
      return logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
    };
    expect(warned({}).join("\n")).toMatch(
      /mcp: a call that sends no deadline of its own gets one 45 s away \(MCP_DEADLINE_SECONDS\), but solana:EtWT\S* pays only for jobs due within 30 s.*Set MCP_DEADLINE_SECONDS=30 or less/,
    );
    expect(warned({ MCP_DEADLINE_SECONDS: "30" }).join("\n")).not.toMatch(/MCP_DEADLINE_SECONDS/);
  });
});

describe("a direct Solana route whose RPC URL holds a user, password and API key", () => {
  it("settles through it (Basic authorization), and no answer or log line shows them", async () => {
    const feePayer = await kit.newAccount();
    const payee = await kit.payee();
    const logger = captureLogger();
    const rpc = `${kit.rpcUrl.replace("http://", "http://bob:s0lanaPW@")}/?api-key=solKEY123`;
    const own = await listen(
      createApp(makeAgent(), {
        devMode: false,
        env: solanaOnly(feePayer, payee, rpc),
        logger,
      }),
    );
    try {
      const body = job("echo", { text: "basic" }, soon());
      const unpaid = await post(own.url, body);
      const required = unb64(unpaid.headers.get("payment-required")!);
      const client = new x402Client().register(
        kit.network as `${string}:${string}`,
        new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
      );
      const payment = await client.createPaymentPayload(required);
      const res = await post(own.url, body, { "PAYMENT-SIGNATURE": encodeBase64Json(payment) });
      const everything = [unpaid.text, res.text, JSON.stringify(logger.lines)].join("\n");
      expect(everything).not.toMatch(/bob|s0lanaPW|solKEY123/);
      expect(res.status, res.text).toBe(200);
      expect(await kit.usdcBalance(payee)).toBe(10_000n);
    } finally {
      await own.close();
    }
  });
});
