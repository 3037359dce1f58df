// Lost answers are recoverable: the x402 payment-identifier extension on a real chain (anvil with Circle's
// USDC, the reference x402 facilitator). Every 402 declares the extension (checked with @x402/extensions'
// own validators); a payment carrying an id (put there by the package's own client helper) whose answer
// was lost gets that answer back, receipt included, even once the payment no longer passes verification;
// the same id with another payment is refused with 409; a resend while the first request runs is never
// run; the answer is shared by every instance on one Redis; MCP's _meta["x402/payment"] works the same, and
// a resend over the other transport (MCP <-> POST /execute) gets the same answer.
// Money is read back from the chain: the payer's and payee's USDC and the authorization's nonce.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  isPaymentIdentifierExtension,
  isPaymentIdentifierRequired,
  validatePaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import type { Ledger } from "../../templates/runtime/ledger/ledger.js";
import { createRedisLedger } from "../../templates/runtime/ledger/redis/redis.js";
import {
  b64,
  captureLogger,
  job,
  listen,
  makeAgent,
  nowSeconds,
  post,
  signAuthorization,
  unb64,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { dropProxy } from "./call-proxy.js";
import { asset, chainId, client, domain, facilitatorUrl, rpcUrl } from "./context.js";
import { freshPayer, nonceUsed, usdcBalance } from "./usdc.js";

const PRICE = 10_000n; // echo's and slow's price: 0.01 USDC
const payTo = privateKeyToAddress(generatePrivateKey());
const balance = (address: Hex) => usdcBalance(rpcUrl, asset, address);
const sleepUntil = (unixSeconds: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, unixSeconds * 1000 - Date.now())));

const start = async (
  agent: TestAgent,
  options: { ledger?: Ledger; env?: Record<string, string> } = {},
) =>
  listen(
    createApp(agent, {
      devMode: false,
      env: options.env ?? {},
      logger: captureLogger(),
      ...(options.ledger && { ledger: options.ledger }),
      payment: { payTo, network: "base-sepolia", asset, facilitatorUrl },
    }),
  );

/** The PAYMENT-REQUIRED of an unpaid POST /execute: what a v2 client pays from. */
async function offer(url: string, capability = "echo", input: unknown = { text: "how?" }) {
  const res = await post(url, job(capability, input));
  expect(res.status).toBe(402);
  return unb64(res.headers.get("payment-required")!);
}

/**
 * A v2 PaymentPayload for `required`, its authorization valid until `validBefore`, with the id
 * appended as the package's client helper appends it (to the declaration the 402 sent).
 */
async function payload(payer: PrivateKeyAccount, required: any, validBefore: number, id: string) {
  const signed = await signAuthorization(payer, {
    to: payTo,
    value: String(PRICE),
    domain,
    validBefore: String(validBefore),
  });
  const extensions = appendPaymentIdentifierToExtensions(structuredClone(required.extensions), id);
  return {
    x402Version: 2,
    resource: required.resource,
    accepted: required.accepts[0],
    payload: signed,
    extensions: extensions as Record<string, any>,
  };
}

/** What a payer and the payee hold now. */
const money = async (payer: PrivateKeyAccount) => ({
  payer: await balance(payer.address),
  payee: await balance(payTo),
});

/** The receipt of a 200: PAYMENT-RESPONSE decoded; its transaction mined successfully on the chain. */
async function receiptOf(res: { headers: Headers }) {
  const receipt = unb64(res.headers.get("payment-response")!);
  expect(receipt).toMatchObject({ success: true, network: `eip155:${chainId}` });
  const mined = await client.getTransactionReceipt({ hash: receipt.transaction });
  expect(mined.status).toBe("success");
  return receipt;
}

describe("the 402 declares payment-identifier", () => {
  it("in the PAYMENT-REQUIRED header, as @x402/extensions validates it: an id welcome, not required", async () => {
    const app = await start(makeAgent());
    try {
      const declared = (await offer(app.url)).extensions?.["payment-identifier"];
      expect(isPaymentIdentifierExtension(declared)).toBe(true);
      expect(validatePaymentIdentifier(declared)).toEqual({ valid: true });
      expect(isPaymentIdentifierRequired(declared)).toBe(false);
    } finally {
      await app.close();
    }
  });
});

describe("POST /execute with a payment id", () => {
  let agent: TestAgent;
  let app: Running;
  beforeAll(async () => {
    agent = makeAgent();
    app = await start(agent);
  });
  afterAll(() => app?.close());

  it("an answer lost after settlement: the resend gets it back with its receipt, past the payment's verification window; charged once", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const before = await money(payer);
    const t0 = nowSeconds();
    // Due in 3 s; the authorization lasts just past deadline + 15 s of settlement, so a resend sent
    // 6 s later would no longer pass verification ("expires too early").
    const body = job("echo", { text: "lost" }, { deadline: t0 + 3 });
    const id = generatePaymentId();
    const paid = await payload(payer, await offer(app.url), t0 + 20, id);
    const header = { "payment-signature": b64(paid) };

    const proxy = await dropProxy(app.url, "after-answer");
    try {
      await expect(post(proxy.url, body, header)).rejects.toThrow();
      expect(proxy.dropped).toBe(1);
    } finally {
      await proxy.close();
    }
    expect(agent.calls.echo).toBe(1);
    expect(await nonceUsed(rpcUrl, asset, payer.address, paid.payload.authorization.nonce)).toBe(
      true,
    );

    await sleepUntil(t0 + 6);
    const resent = await post(app.url, body, header);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({ job_id: body.job_id, output: { text: "lost" } });
    const receipt = await receiptOf(resent);
    expect(receipt.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    // Byte for byte the same answer again.
    const again = await post(app.url, body, header);
    expect(again.text).toBe(resent.text);
    expect(again.headers.get("payment-response")).toBe(resent.headers.get("payment-response"));

    expect(agent.calls.echo).toBe(1);
    const after = await money(payer);
    expect(after.payee - before.payee).toBe(PRICE);
    expect(before.payer - after.payer).toBe(PRICE);

    // The same id with another payment (a new authorization), or the same payment for another
    // request: 409, nothing run, nothing moved.
    const other = await freshPayer(rpcUrl, asset, PRICE);
    const otherPaid = await payload(other, await offer(app.url), nowSeconds() + 300, id);
    const conflict = await post(app.url, job("echo", { text: "other" }), {
      "payment-signature": b64(otherPaid),
    });
    expect(conflict.status, conflict.text).toBe(409);
    expect(conflict.body).toMatchObject({ status: "failed", error_type: "payment" });
    expect(conflict.body.error).toContain(id);
    const otherRequest = await post(
      app.url,
      { ...body, task: { capability: "echo", input: { text: "x" } } },
      header,
    );
    expect(otherRequest.status, otherRequest.text).toBe(409);
    expect(agent.calls.echo).toBe(1);
    expect(await balance(other.address)).toBe(PRICE);
    expect(
      await nonceUsed(rpcUrl, asset, other.address, otherPaid.payload.authorization.nonce),
    ).toBe(false);
    expect(await money(payer)).toEqual(after);
  });

  it("a resend while the first request runs is not run, nor is another payment with its id; afterwards the resend gets the answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const other = await freshPayer(rpcUrl, asset, PRICE);
    const before = await money(payer);
    const id = generatePaymentId();
    const required = await offer(app.url, "slow", { ms: 1 });
    const body = job("slow", { ms: 1500 });
    const header = {
      "payment-signature": b64(await payload(payer, required, nowSeconds() + 300, id)),
    };
    const runsBefore = agent.calls.slow ?? 0;

    const first = post(app.url, body, header);
    while ((agent.calls.slow ?? 0) === runsBefore) await new Promise((r) => setTimeout(r, 20));
    const resend = await post(app.url, body, header);
    expect(resend.status, resend.text).toBe(402);
    expect(resend.body).toMatchObject({ status: "failed", error_type: "payment" });
    expect(resend.body.error).toMatch(/in use/);
    // No invitation to pay again while the first one may still be charged.
    expect(resend.headers.get("payment-required")).toBeNull();
    expect(resend.headers.get("retry-after")).toBe("1");
    const otherPaid = await payload(other, required, nowSeconds() + 300, id);
    const intruder = await post(app.url, body, { "payment-signature": b64(otherPaid) });
    expect(intruder.status, intruder.text).toBe(402);
    expect(intruder.body.error).toMatch(/in use/);

    const answered = await first;
    expect(answered.status, answered.text).toBe(200);
    const later = await post(app.url, body, header);
    expect(later.status).toBe(200);
    expect(later.text).toBe(answered.text);
    expect(later.headers.get("payment-response")).toBe(answered.headers.get("payment-response"));
    await receiptOf(later);

    expect((agent.calls.slow ?? 0) - runsBefore).toBe(1);
    const after = await money(payer);
    expect(after.payee - before.payee).toBe(PRICE);
    expect(before.payer - after.payer).toBe(PRICE);
    expect(await balance(other.address)).toBe(PRICE);
    expect(
      await nonceUsed(rpcUrl, asset, other.address, otherPaid.payload.authorization.nonce),
    ).toBe(false);
  });

  it("an id that breaks the format is refused, naming it; nothing runs", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const paid = await payload(
      payer,
      await offer(app.url),
      nowSeconds() + 300,
      generatePaymentId(),
    );
    paid.extensions["payment-identifier"].info.id = "short!";
    const runs = agent.calls.echo ?? 0;
    const res = await post(app.url, job("echo", { text: "x" }), { "payment-signature": b64(paid) });
    expect(res.status, res.text).toBe(402);
    expect(res.body.error).toContain('"short!"');
    expect(res.body.error).toMatch(/16 to 128 characters/);
    expect(agent.calls.echo ?? 0).toBe(runs);
    expect(await balance(payer.address)).toBe(PRICE);
  });
});

describe("two instances on one Redis", () => {
  let redis: RedisServer;
  const ledgers: Ledger[] = [];
  const apps: Running[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await Promise.all(ledgers.map((l) => l.close()));
    await redis?.stop();
  });

  it("an answer lost on one instance is replayed by the other, past the verification window; charged once", async () => {
    const agents = [makeAgent(), makeAgent()];
    for (const agent of agents) {
      const ledger = createRedisLedger({ url: redis.url, keyPrefix: "pid-test:" });
      ledgers.push(ledger);
      apps.push(await start(agent, { ledger }));
    }
    const [one, two] = apps as [Running, Running];
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const before = await money(payer);
    const t0 = nowSeconds();
    const body = job("echo", { text: "shared" }, { deadline: t0 + 3 });
    const header = {
      "payment-signature": b64(
        await payload(payer, await offer(one.url), t0 + 20, generatePaymentId()),
      ),
    };
    const proxy = await dropProxy(one.url, "after-answer");
    try {
      await expect(post(proxy.url, body, header)).rejects.toThrow();
    } finally {
      await proxy.close();
    }

    await sleepUntil(t0 + 6);
    const resent = await post(two.url, body, header);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body.output).toEqual({ text: "shared" });
    await receiptOf(resent);
    expect(agents.map((a) => a.calls.echo ?? 0)).toEqual([1, 0]);
    const after = await money(payer);
    expect(after.payee - before.payee).toBe(PRICE);
    expect(before.payer - after.payer).toBe(PRICE);
  });
});

describe('MCP: _meta["x402/payment"] with a payment id', () => {
  it("the PaymentRequired declares it; an identical resend past the verification window gets the result and its receipt; charged once", async () => {
    const agent = makeAgent();
    // A tool call is due MCP_DEADLINE_SECONDS after it arrives: 3 s here.
    const app = await start(agent, { env: { MCP_DEADLINE_SECONDS: "3" } });
    const mcp = new Client({ name: "payment-identifier-test", version: "1.0.0" });
    try {
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`)));
      await mcp.listTools();
      const args = { text: "over mcp" };
      const unpaid = await mcp.callTool({ name: "echo", arguments: args });
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as any;
      expect(validatePaymentIdentifier(required.extensions["payment-identifier"])).toEqual({
        valid: true,
      });

      const payer = await freshPayer(rpcUrl, asset, PRICE);
      const before = await money(payer);
      const t0 = nowSeconds();
      const paid = await payload(payer, required, t0 + 20, generatePaymentId());
      const call = () =>
        mcp.callTool({ name: "echo", arguments: args, _meta: { "x402/payment": paid } });
      const first = await call(); // its answer is "lost": the client asks again later
      expect(first.isError, JSON.stringify(first)).toBeFalsy();

      await sleepUntil(t0 + 6);
      const again = await call();
      expect(again.isError, JSON.stringify(again)).toBeFalsy();
      expect(again.structuredContent).toEqual({ text: "over mcp" });
      const receipt = (again._meta as Record<string, any>)["x402/payment-response"];
      expect(receipt).toEqual((first._meta as Record<string, any>)["x402/payment-response"]);
      expect(receipt).toMatchObject({ success: true });
      expect((await client.getTransactionReceipt({ hash: receipt.transaction })).status).toBe(
        "success",
      );
      // The same payment and id as a POST /execute job (with a job_id of its own): the same answer
      // and receipt, past the verification window too.
      const viaHttp = await post(app.url, job("echo", args), { "payment-signature": b64(paid) });
      expect(viaHttp.status, viaHttp.text).toBe(200);
      expect(viaHttp.body.output).toEqual({ text: "over mcp" });
      expect((await receiptOf(viaHttp)).transaction).toBe(receipt.transaction);
      expect(agent.calls.echo).toBe(1);
      const after = await money(payer);
      expect(after.payee - before.payee).toBe(PRICE);
      expect(before.payer - after.payer).toBe(PRICE);

      // The same id with another payment: refused (409's body as the tool's error), nothing run.
      const other = await freshPayer(rpcUrl, asset, PRICE);
      const otherPaid = await payload(
        other,
        required,
        nowSeconds() + 300,
        paid.extensions["payment-identifier"].info.id,
      );
      const conflict = await mcp.callTool({
        name: "echo",
        arguments: args,
        _meta: { "x402/payment": otherPaid },
      });
      expect(conflict.isError).toBe(true);
      expect(conflict.structuredContent).toMatchObject({ status: "failed", error_type: "payment" });
      expect((conflict.structuredContent as { error: string }).error).toMatch(
        /already used with another payment/,
      );
      expect(agent.calls.echo).toBe(1);
      expect(await balance(other.address)).toBe(PRICE);
    } finally {
      await mcp.close();
      await app.close();
    }
  });
});
