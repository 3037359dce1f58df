// A settlement through the reference x402 facilitator whose outcome the server did not hear, with
// no X402_RPC_URL to ask the chain (a default project: no onchain feature). Before, the buyer paid
// and got nothing: a `settlement_pending` answer (the facilitator sent the transfer and did not see
// its receipt in time) was read as "nothing was charged, sign a new payment", and an answer lost
// after the transfer left the result withheld until the payment expired. Now both are held, and
// the identical retry asks the facilitator to settle the same payment again (as x402's resource
// server does): it finds the transfer it sent, or the token says the authorization is used, and
// the retry gets the output, charged once; the background reconciler never settles (nobody waits).
import { createTestClient, http } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import * as h from "../runtime/helpers.js";
import * as ctx from "./context.js";
import { type Facilitator, startFacilitator } from "./facilitator.js";
import { type FacilitatorProxy, startFacilitatorProxy } from "./facilitator-proxy.js";
import { type Node, sleepyNode } from "./sleepy-node.js";
import { finished, poll } from "../runtime/async-poll.js";
import { message03, rpc03 } from "../runtime/a2a-helpers.js";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { runCall } from "../cli/call-helpers.js";
import { buildCli } from "../cli/client-project.js";
import { fundedPayer } from "./call-seller.js";
import { ensureBaseSepoliaUsdc, usdcBalance } from "./usdc.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server settling through `facilitator`, with no RPC of its own, reconciling every second. */
async function seller(facilitator: string, settleTimeoutSeconds: number, token = ctx.asset) {
  const payTo = privateKeyToAddress(generatePrivateKey());
  const agent = h.makeAgent();
  const app = await h.listen(
    createApp(agent, {
      devMode: false,
      env: { SETTLEMENT_RECONCILE_SECONDS: "1" },
      logger: h.captureLogger(),
      payment: {
        payTo,
        network: "base-sepolia",
        asset: token,
        facilitatorUrl: facilitator,
        settleTimeoutSeconds,
      },
    }),
  );
  return { payTo, agent, app };
}

/** An echo job, signed for by a fresh payer as `url` offers it; the payee's balance and runs before. */
async function paidEcho(
  url: string,
  s: { payTo: `0x${string}`; agent: { calls: Record<string, number> } },
  text: string,
) {
  const body = h.job("echo", { text });
  const payer = await ctx.freshPayer(10_000n);
  const signed = await ctx.signOffer(payer, await ctx.firstOffer(url, body));
  return {
    body,
    payer,
    ...signed,
    before: await ctx.balance(s.payTo),
    runs: s.agent.calls.echo ?? 0,
  };
}

describe("a facilitator's settlement_pending answer, without an RPC", () => {
  let node: Node;
  let facilitator: Facilitator;
  let app: h.Running;
  let payTo: `0x${string}`;
  let agent: ReturnType<typeof h.makeAgent>;
  beforeAll(async () => {
    node = await sleepyNode();
    // The facilitator's own gas account, on the node that can hide receipts; it waits 0.5 s for one.
    const key = generatePrivateKey();
    await createTestClient({
      mode: "anvil",
      chain: ctx.chain,
      transport: http(ctx.rpcUrl),
    }).setBalance({
      address: privateKeyToAddress(key),
      value: 10n ** 18n,
    });
    facilitator = await startFacilitator(node.url, key, { receiptTimeoutMs: 500 });
    ({ payTo, agent, app } = await seller(facilitator.url, 10));
  });
  afterAll(async () => {
    await app?.close();
    await facilitator?.stop();
    await node?.close();
  });

  it("is held, not 'nothing was charged'; the identical retry gets the output and the transfer's receipt, charged once", async () => {
    const { body, payer, header, nonce, before, runs } = await paidEcho(
      app.url,
      { payTo, agent },
      "pending",
    );

    node.mode = "receipts";
    const first = await h.post(app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(402);
    expect(first.body.error).toMatch(/settlement_pending/);
    expect(first.body.error).toMatch(/unconfirmed.*send the identical request again later/);
    expect(first.body.error).not.toMatch(/sign a new payment/);
    const sent = /0x[0-9a-f]{64}/.exec(first.body.error)?.[0];
    expect(sent, first.body.error).toBeDefined();
    // The transfer is on chain: the payer is charged, so the answer must not be lost.
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
    expect(await ctx.nonceUsed(payer.address, nonce)).toBe(true);

    // Receipts still hidden: the facilitator says pending again; the retry is told to wait.
    const waiting = await h.post(app.url, body, { "payment-signature": header });
    expect(waiting.status, waiting.text).toBe(402);
    expect(waiting.body.error).toMatch(/still unconfirmed/);

    node.mode = "normal";
    const retry = await h.post(app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output).toEqual({ text: "pending" });
    expect(h.unb64(retry.headers.get("payment-response")!)).toMatchObject({
      success: true,
      transaction: sent,
    });
    expect(agent.calls.echo).toBe(runs + 1);
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
    // And again: the cached answer, nothing more charged.
    const again = await h.post(app.url, body, { "payment-signature": header });
    expect([again.status, again.body.output]).toEqual([200, { text: "pending" }]);
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
  }, 60_000);

  it("create-agent call waits it out, resending the identical request: the output, charged once", async () => {
    await buildCli();
    const token = await ensureBaseSepoliaUsdc(ctx.rpcUrl); // the official client pays only USDC it knows
    const s = await seller(facilitator.url, 10, token);
    const cliApp = s.app;
    try {
      const payer = await fundedPayer(10_000n);
      const before = await usdcBalance(ctx.rpcUrl, token, s.payTo);
      node.mode = "receipts";
      const called = runCall([cliApp.url, "echo", "--input", "text=held"], {
        env: { X402_PAYER_KEY: payer.key },
      });
      // The transfer lands; its receipt stays hidden a while, then the node catches up.
      for (let i = 0; i < 200 && (await usdcBalance(ctx.rpcUrl, token, s.payTo)) === before; i++)
        await sleep(50);
      await sleep(1500);
      node.mode = "normal";
      const r = await called;
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ text: "held" });
      expect(r.stderr).toMatch(
        /holds this job's result until its payment's settlement is confirmed/,
      );
      expect(await usdcBalance(ctx.rpcUrl, token, s.payTo)).toBe(before + 10_000n);
      expect(s.agent.calls.echo).toBe(1);
    } finally {
      node.mode = "normal";
      await cliApp.close();
    }
  }, 90_000);

  it("over A2A: the task stays open (input-required, payment-verified); the same payment sent again on it completes it, charged once", async () => {
    const EXT = { "X-A2A-Extensions": X402_EXTENSION_URI };
    const send = (data: unknown, metadata: Record<string, unknown> = {}, taskId?: string) =>
      rpc03(app.url, "message/send", message03(data, metadata, taskId), EXT);
    const asked = (await send({ capability: "echo", input: { text: "a2a held" } })).body.result;
    expect(asked.status.state).toBe("input-required");
    const offer = asked.status.message.metadata["x402.payment.required"];
    const payer = await ctx.freshPayer(10_000n);
    const { header } = await ctx.signOffer(payer, offer.accepts[0], {
      validBefore: String(h.nowSeconds() + offer.accepts[0].maxTimeoutSeconds),
    });
    const paying = {
      "x402.payment.status": "payment-submitted",
      "x402.payment.payload": h.unb64(header),
    };
    const before = await ctx.balance(payTo);
    const runs = agent.calls.echo ?? 0;

    node.mode = "receipts";
    const held = (await send({}, paying, asked.id)).body.result;
    expect(held.status.state, JSON.stringify(held)).toBe("input-required");
    expect(held.status.message.metadata["x402.payment.status"]).toBe("payment-verified");
    expect(JSON.stringify(held.status.message.parts)).toMatch(
      /unconfirmed.*send the same x402.payment.payload again/,
    );
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);

    node.mode = "normal";
    const done = (await send({}, paying, asked.id)).body.result;
    expect(done.status.state, JSON.stringify(done)).toBe("completed");
    expect(done.artifacts[0].parts[0].data).toEqual({ text: "a2a held" });
    expect(done.status.message.metadata["x402.payment.status"]).toBe("payment-completed");
    expect(agent.calls.echo).toBe(runs + 1);
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
  }, 60_000);

  it("an async job (Prefer: respond-async): polls say running while it is pending, then the output and receipt, charged once", async () => {
    const { body, header, before } = await paidEcho(app.url, { payTo, agent }, "pending later");

    node.mode = "receipts";
    const res = await fetch(`${app.url}/execute`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        prefer: "respond-async",
        "payment-signature": header,
      },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const { job_token: token } = (await res.json()) as { job_token: string };
    const location = res.headers.get("location")!;
    // The worker's settlement is pending; the transfer is on chain.
    for (let i = 0; i < 100 && (await ctx.balance(payTo)) === before; i++) await sleep(50);
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
    const polled = await poll(app.url, location, token);
    expect([polled.status, polled.body.status]).toEqual([200, "running"]);

    node.mode = "normal";
    const done = await finished(app.url, location, token, 20_000, 200);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.output).toEqual({ text: "pending later" });
    expect(h.unb64(done.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
  }, 60_000);
});

describe("a facilitator answer lost after the transfer, without an RPC", () => {
  let proxy: FacilitatorProxy;
  let app: h.Running;
  let holdNext = false;
  let payTo: `0x${string}`;
  let agent: ReturnType<typeof h.makeAgent>;
  beforeAll(async () => {
    // The reference facilitator settles; its answer is held 2.5 s, past the seller's 1 s timeout.
    proxy = await startFacilitatorProxy(ctx.facilitatorUrl, {
      settled: async () => {
        if (!holdNext) return;
        holdNext = false;
        await sleep(2500);
      },
    });
    ({ payTo, agent, app } = await seller(proxy.url, 1));
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
  });

  it("the reconciler alone settles nothing; the identical retry asks the facilitator again, which finds the authorization used: the output, charged once", async () => {
    const { body, header, before, runs } = await paidEcho(app.url, { payTo, agent }, "lost");

    holdNext = true;
    const first = await h.post(app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(402);
    expect(first.body.error).toMatch(/did not answer within 1 s/);
    expect(first.body.error).not.toMatch(/sign a new payment/);
    await sleep(3000); // the transfer is mined; the reconciler (every second) has looked, and waits
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
    const settles = proxy.seen.filter((r) => r.path.endsWith("/settle")).length;
    expect(settles).toBe(1);

    const retry = await h.post(app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output).toEqual({ text: "lost" });
    expect(h.unb64(retry.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(proxy.seen.filter((r) => r.path.endsWith("/settle")).length).toBe(settles + 1);
    expect(agent.calls.echo).toBe(runs + 1);
    expect(await ctx.balance(payTo)).toBe(before + 10_000n);
  }, 60_000);
});
