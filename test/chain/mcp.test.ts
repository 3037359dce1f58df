// A paid MCP tool call on a real chain: anvil with Circle's USDC, the reference x402 facilitator, the
// official MCP SDK client, and a PaymentPayload made by the official x402 client code (@x402/core's
// client with @x402/evm's exact scheme) from the tool's PaymentRequired. Balances are read back from
// the chain: the payee gets the price once, an identical retry is answered from the ledger, the same
// authorization cannot pay for a POST /execute job, and a crashing handler moves nothing.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { generatePrivateKey, privateKeyToAddress, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  captureLogger,
  countedCapability,
  echoAgent,
  listen,
  type Running,
} from "../runtime/helpers.js";
import { freshPayer, nonceUsed, usdcBalance } from "./usdc.js";

const { rpcUrl, asset, facilitatorUrl } = inject("chain");
const PRICE = 10_000n; // 0.01 USDC
const payTo = privateKeyToAddress(generatePrivateKey());
const runs: Record<string, number> = {};

const agent = echoAgent("mcp-chain", "paid MCP tools on chain", PRICE, runs, {
  crash: countedCapability("crash", PRICE, runs, async () => {
    throw new Error("handler crashed");
  }),
});

let server: Running;
let mcp: Client;
let payer: PrivateKeyAccount;
const logger = captureLogger();
const balances = async () => ({
  payer: await usdcBalance(rpcUrl, asset, payer.address),
  payee: await usdcBalance(rpcUrl, asset, payTo),
});

beforeAll(async () => {
  payer = await freshPayer(rpcUrl, asset, 1_000_000n);
  const app = createApp(agent, {
    devMode: false,
    env: {},
    logger,
    payment: { payTo, network: "base-sepolia", asset, facilitatorUrl },
  });
  server = await listen(app);
  mcp = new Client({ name: "mcp-chain-test", version: "1.0.0" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  await mcp.listTools(); // the client checks every result against the tools' output schemas
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

/** The official x402 client's PaymentPayload for a tool's PaymentRequired (a local token: no spend caps). */
async function pay(required: unknown) {
  const client = new x402Client()
    .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer)))
    .setSpendControls(false);
  return client.createPaymentPayload(required as Parameters<typeof client.createPaymentPayload>[0]);
}

async function paymentRequired(name: string, args: Record<string, unknown>) {
  const unpaid = await mcp.callTool({ name, arguments: args });
  expect(unpaid.isError).toBe(true);
  return unpaid.structuredContent;
}

describe("a paid MCP tool call", () => {
  it("charges the price once, returns the output with the settlement, and caches it for a retry", async () => {
    const before = await balances();
    const args = { text: "paid" };
    const payment = await pay(await paymentRequired("echo", args));
    const paid = await mcp.callTool({
      name: "echo",
      arguments: args,
      _meta: { "x402/payment": payment },
    });
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toEqual({ text: "echo: paid" });
    const receipt = (paid._meta as Record<string, any>)["x402/payment-response"];
    expect(receipt).toMatchObject({ success: true, network: "eip155:84532" });
    expect(receipt.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    const after = await balances();
    expect(after.payee - before.payee).toBe(PRICE);
    expect(before.payer - after.payer).toBe(PRICE);
    expect(runs.echo).toBe(1);

    // The same _meta and arguments again: the cached result, no second run or transfer.
    const again = await mcp.callTool({
      name: "echo",
      arguments: args,
      _meta: { "x402/payment": payment },
    });
    expect(again.structuredContent).toEqual(paid.structuredContent);
    expect((again._meta as Record<string, any>)["x402/payment-response"]).toEqual(receipt);
    expect(runs.echo).toBe(1);
    expect(await balances()).toEqual(after);

    // The same authorization for other arguments (as a tool call, or a POST /execute job): refused,
    // nothing run. The identical request as a POST /execute job: the cached answer and receipt.
    const other = await mcp.callTool({
      name: "echo",
      arguments: { text: "something else" },
      _meta: { "x402/payment": payment },
    });
    expect(other.isError).toBe(true);
    expect(other.structuredContent).toMatchObject({ error_type: "payment" });
    expect((other.structuredContent as { error: string }).error).toMatch(/already used/);
    const viaHttp = (input: unknown) =>
      fetch(`${server.url}/execute`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(payment)).toString("base64"),
        },
        body: JSON.stringify({
          service_version: "1.0",
          job_id: "http-job",
          task: { capability: "echo", input },
          deadline: Date.now() / 1000 + 60,
        }),
      });
    const changed = await viaHttp({ text: "something else" });
    expect(changed.status).toBe(402);
    expect(((await changed.json()) as { error: string }).error).toMatch(/already used/);
    const identical = await viaHttp(args);
    expect(identical.status).toBe(200);
    expect(await identical.json()).toMatchObject({
      job_id: "http-job",
      output: { text: "echo: paid" },
    });
    const header = identical.headers.get("payment-response")!;
    expect(JSON.parse(Buffer.from(header, "base64").toString())).toMatchObject(receipt);
    expect(runs.echo).toBe(1);
    expect(await balances()).toEqual(after);
  });

  it("charges nothing when the handler crashes", async () => {
    const before = await balances();
    const payment = await pay(await paymentRequired("crash", { text: "x" }));
    const result = await mcp.callTool({
      name: "crash",
      arguments: { text: "x" },
      _meta: { "x402/payment": payment },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: "failed", error_type: "internal" });
    expect(runs.crash).toBe(1);
    expect(await balances()).toEqual(before);
    const { from, nonce } = (payment.payload as any).authorization;
    expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(false);
  });
});
