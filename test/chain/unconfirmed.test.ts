// A settlement that was sent but not confirmed in time (issue 26, finding 2, second bullet), on a
// real chain: anvil with Circle's USDC, settled directly by this server. Between the server and
// anvil sits a pass-through proxy that, while "sleeping", answers eth_getTransactionReceipt with
// null (a node that has not seen the block yet): the settlement times out unconfirmed although the
// transfer is mined. The answer is held, not lost: the reconciler (or an identical retry) asks the
// chain, finds the receipt, and the identical retry gets the output with its receipt, charged once.
// A transfer that never reaches the chain is resolved as failed once the authorization expired:
// the retry hears that nothing was charged.
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  b64,
  captureLogger,
  job,
  listen,
  logText,
  makeAgent,
  nowSeconds,
  post,
  unb64,
  type Running,
} from "../runtime/helpers.js";
import { SETTLER_KEY } from "./accounts.js";
import { asset, firstOffer, rpcUrl, signOffer } from "./context.js";
import { type Node, sleepyNode } from "./sleepy-node.js";
import { freshPayer, nonceUsed, usdcBalance } from "./usdc.js";

const PRICE = 10_000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a settlement sent but not confirmed in time", () => {
  const payTo = privateKeyToAddress(generatePrivateKey());
  const logger = captureLogger();
  const agent = makeAgent();
  let node: Node;
  let app: Running;
  let accepted: Record<string, unknown>;
  beforeAll(async () => {
    node = await sleepyNode();
    app = await listen(
      createApp(agent, {
        devMode: false,
        env: { SETTLEMENT_RECONCILE_SECONDS: "1" },
        logger,
        payment: {
          payTo,
          network: "base-sepolia",
          asset,
          rpcUrl: node.url,
          settlerKey: SETTLER_KEY,
          settleTimeoutSeconds: 2,
        },
      }),
    );
    accepted = await firstOffer(app.url, job("echo", { text: "how do I pay?" }));
  });
  afterAll(async () => {
    await app?.close();
    await node?.close();
  });

  it("is held, then settled from the chain: the identical retry gets the output and receipt, charged once", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const { header } = await signOffer(payer, accepted, { to: payTo, value: String(PRICE) });
    const body = job("echo", { text: "unconfirmed" });
    const before = await usdcBalance(rpcUrl, asset, payTo);
    const runs = agent.calls.echo ?? 0;

    node.mode = "receipts";
    const first = await post(app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(402);
    expect(first.body.error).toMatch(/unconfirmed.*send the identical request again later/);
    // The transfer is on chain; the server could not see it yet.
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(before + PRICE);

    // While the node still hides it: the retry is told to wait, nothing is sent again.
    const waiting = await post(app.url, body, { "payment-signature": header });
    expect(waiting.status, waiting.text).toBe(402);
    expect(waiting.body.error).toMatch(/still unconfirmed/);

    node.mode = "normal";
    // The reconciler (every second here) finds the receipt.
    for (let i = 0; i < 100 && !/unconfirmed settlement confirmed/.test(logText(logger)); i++)
      await sleep(50);
    expect(logText(logger)).toMatch(/unconfirmed settlement confirmed/);
    const retry = await post(app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output).toEqual({ text: "unconfirmed" });
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(agent.calls.echo).toBe(runs + 1);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(before + PRICE);
  }, 30_000);

  // Found by a hostile tester: the id was freed with the settlement unconfirmed, so a re-signed
  // payment under it ran and was charged again (sync and async: jobs/identifier.ts).
  it("a payment-identifier id whose settlement is unconfirmed stays bound: a re-signed payment under it is refused; the identical resend gets the answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, 3n * PRICE);
    const id = `unconfirmed-${Date.now()}-0123456789`;
    const withId = async () => {
      const { header } = await signOffer(payer, accepted, { to: payTo, value: String(PRICE) });
      return b64({ ...unb64(header), extensions: { "payment-identifier": { info: { id } } } });
    };
    const body = job("echo", { text: "one id" });
    const before = await usdcBalance(rpcUrl, asset, payTo);
    const first = await withId();
    node.mode = "receipts";
    expect((await post(app.url, body, { "payment-signature": first })).body.error).toMatch(
      /unconfirmed/,
    );
    node.mode = "normal";
    const again = await post(app.url, body, { "payment-signature": await withId() });
    expect(again.status, again.text).toBe(409);
    // Until the chain has answered (the reconciler, every second here): "still unconfirmed".
    let resend = await post(app.url, body, { "payment-signature": first });
    for (let i = 0; i < 50 && resend.status === 402; i++) {
      await sleep(200);
      resend = await post(app.url, body, { "payment-signature": first });
    }
    expect(resend.status, resend.text).toBe(200);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(before + PRICE);
  });

  it("a transfer that never landed is resolved as failed once the authorization expired: nothing charged", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const deadline = nowSeconds() + 2;
    const { header, payload } = await signOffer(payer, accepted, {
      to: payTo,
      value: String(PRICE),
      validBefore: String(deadline + 15 + 2),
    });
    const body = job("echo", { text: "lost" }, { deadline });
    const before = await usdcBalance(rpcUrl, asset, payTo);

    node.mode = "sends";
    const first = await post(app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(402);
    expect(first.body.error).toMatch(/unconfirmed/);
    node.mode = "normal";
    // The authorization expires unused (plus the chain's margin): the reconciler calls it failed.
    for (let i = 0; i < 1200 && !/unconfirmed settlement failed/.test(logText(logger)); i++)
      await sleep(50);
    const retry = await post(app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(402);
    expect(retry.body.error).toMatch(/nothing was charged; sign a new payment/);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(before);
    expect(await nonceUsed(rpcUrl, asset, payer.address, payload.authorization.nonce)).toBe(false);
  }, 90_000);
});
