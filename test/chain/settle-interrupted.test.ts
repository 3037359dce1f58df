// A process killed (SIGKILL) while its settlement is in flight: the facilitator settled on chain, its
// answer never came back (a front that forwards /settle, then holds the answer), and nothing was
// recorded. Found by a hostile tester: the job's next worker found the payment used and answered
// "sign a new authorization", charged and without the result. Now the settlement is written down
// first (with the answer), and whoever meets the payment next finds it on chain (USDC's
// AuthorizationUsed) and answers with the result and its receipt, charged once. Real parts: compiled
// web and worker processes (async-processes.ts) on Debian's redis-server, anvil's FiatTokenV2_2,
// the official x402 facilitator.
import { createServer, type IncomingMessage } from "node:http";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts";
import { createApp } from "../../templates/runtime/app.js";
import { captureLogger, job, listen, makeAgent, nowSeconds, post } from "../runtime/helpers.js";
import { signAuthorization, unb64, v2Header } from "../runtime/helpers.js";
import { DEPLOYER_KEY } from "./accounts.js";
import { chain, client } from "./context.js";
import { transferWithAuthorizationCall } from "./usdc.js";
import { closeServer, listenLocal } from "../runtime/servers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { type AsyncProcesses, exited, SLOW_PRICE, startAsyncProcesses } from "./async-processes.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";

const { rpcUrl, facilitatorUrl } = inject("chain");
let redis: RedisServer;
let asset: `0x${string}`;
let processes: AsyncProcesses;
let frontUrl: string;
const runs = () => processes.runs();

/** A facilitator front: forwards everything; a /settle is forwarded, then its answer held. */
let settled: (() => void) | undefined;
const held: Array<() => void> = [];
/** Hold a /settle before forwarding it (a settler slow to send), instead of after. */
let holdFirst = false;
const front = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as IncomingMessage) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? "/", "http://front").pathname;
    if (holdFirst && path.endsWith("/settle")) {
      settled?.();
      await new Promise<void>((release) => held.push(release));
    }
    const answer = await fetch(facilitatorUrl.replace(/\/+$/, "") + path, {
      method: req.method,
      headers: { "content-type": "application/json" },
      ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
    });
    const text = await answer.text();
    if (!holdFirst && path.endsWith("/settle")) {
      settled?.();
      await new Promise<void>((release) => held.push(release)); // its sender dies meanwhile
    }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  })().catch(() => res.destroy());
});

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  frontUrl = await listenLocal(front);
  processes = await startAsyncProcesses({
    rpcUrl,
    redisUrl: redis.url,
    webs: 2,
    workers: 2,
    // Settled by the facilitator (through the front); X402_RPC_URL checks payments on chain.
    // A short settlement timeout: a dead settler's lock and lease free themselves sooner.
    env: {
      X402_FACILITATOR_URL: frontUrl,
      X402_SETTLER_KEY: undefined,
      X402_SETTLE_TIMEOUT_SECONDS: "3",
    },
  });
}, 120_000);

afterAll(async () => {
  for (const release of held) release();
  await processes?.close();
  await redis?.stop();
  front.closeAllConnections();
  await closeServer(front);
});

async function paidRequest(web: string, body: unknown, headers: Record<string, string> = {}) {
  const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
  const first = await post(web, body, headers);
  const accepted = unb64(first.headers.get("payment-required")!).accepts[0];
  const payload = await signAuthorization(payer, {
    to: accepted.payTo,
    value: accepted.amount,
    validBefore: String(nowSeconds() + 280),
    domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: asset },
  });
  return { payer, header: v2Header(accepted, payload) };
}

const kill = async (child: ChildProcess) => {
  child.kill("SIGKILL");
  await exited(child);
};

describe("a settlement whose process died before recording it", () => {
  it("async: the job's next worker answers with the result and its receipt; charged once, the handler run once", async () => {
    const [web] = processes.webUrls;
    const body = job("slow", { ms: 200 }, { deadline: nowSeconds() + 120 });
    const async = { prefer: "respond-async" };
    const { payer, header } = await paidRequest(web!, body, async);
    const before = await usdcBalance(rpcUrl, asset, payer.address);
    const sent = new Promise<void>((resolve) => (settled = resolve));
    const accepted = await post(web!, body, { ...async, "payment-signature": header });
    expect(accepted.status, accepted.text).toBe(202);
    await sent; // settled on chain; the worker waits for the facilitator's answer
    const victim = processes.workers.find((w) => w.pid === runs()[0])!;
    await kill(victim);
    expect(before - (await usdcBalance(rpcUrl, asset, payer.address))).toBe(SLOW_PRICE);

    const until = Date.now() + 60_000;
    let done: Awaited<ReturnType<typeof fetch>>;
    let answer: any;
    for (;;) {
      done = await fetch(`${web}${accepted.headers.get("location")}`, {
        headers: { authorization: `Bearer ${accepted.body.job_token}` },
      });
      answer = await done.json();
      if (!(done.status === 200 && ["queued", "running"].includes(answer.status))) break;
      if (Date.now() > until) throw new Error("the job never ended");
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(done.status, JSON.stringify(answer)).toBe(200);
    expect(answer).toMatchObject({
      status: "completed",
      output: { text: `done by ${victim.pid}` },
    });
    const receipt = unb64(done.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: "eip155:84532" });
    expect(receipt.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(runs()).toEqual([victim.pid]); // not run again
    expect(before - (await usdcBalance(rpcUrl, asset, payer.address))).toBe(SLOW_PRICE);
  }, 90_000);

  it("sync: the identical retry on another instance gets the result and its receipt; charged once", async () => {
    const [web1, web2] = processes.webUrls;
    const body = job("slow", { ms: 50 }, { deadline: nowSeconds() + 5 });
    const { payer, header } = await paidRequest(web1!, body);
    const before = await usdcBalance(rpcUrl, asset, payer.address);
    const sent = new Promise<void>((resolve) => (settled = resolve));
    const lost = post(web1!, body, { "payment-signature": header }).catch(() => undefined);
    await sent;
    await kill(processes.webs[0]!);
    await lost;
    // "In use" while the dead instance's reservation lasts (its deadline, settlement time and margin).
    let retry = await post(web2!, body, { "payment-signature": header });
    for (let i = 0; i < 60 && /in use by a job/.test(retry.text); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      retry = await post(web2!, body, { "payment-signature": header });
    }
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output.text).toMatch(/^done by \d+$/);
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(before - (await usdcBalance(rpcUrl, asset, payer.address))).toBe(SLOW_PRICE);
  }, 60_000);
});

// Found by the tester who re-tested the above: the payer used its own authorization's nonce (a 1-unit
// transfer to itself, any sender pays the gas) while the settlement was on its way; the identical
// retry found the note, took the payer's transfer for the payment and got the result. Now a note
// whose settler is still on it gets "in use", and a transaction found for a note must pay the amount
// to us.
describe("a payer that uses its own nonce while the settlement is on its way", () => {
  it("gets no result: the retry is in use, the settlement fails, nothing reaches the payee", async () => {
    const payTo = privateKeyToAddress(generatePrivateKey());
    const app = await listen(
      createApp(makeAgent(), {
        devMode: false,
        logger: captureLogger(),
        payment: { payTo, network: "base-sepolia", asset, facilitatorUrl: frontUrl, rpcUrl },
      }),
    );
    holdFirst = true;
    try {
      const body = job("echo", { text: "free?" });
      const offer = unb64((await post(app.url, body)).headers.get("payment-required")!).accepts[0];
      const payer = await freshPayer(rpcUrl, asset, 100_000n);
      const validBefore = String(nowSeconds() + 120);
      const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: asset };
      const payload = await signAuthorization(payer, {
        to: payTo,
        value: offer.amount,
        domain,
        validBefore,
      });
      const header = v2Header(offer, payload);
      const reached = new Promise<void>((resolve) => (settled = resolve));
      const first = post(app.url, body, { "payment-signature": header });
      const early = await Promise.race([reached.then(() => undefined), first]);
      if (early) throw new Error(`answered before settling: ${early.status} ${early.text}`);
      const nonce = payload.authorization.nonce as `0x${string}`;
      const own = await signAuthorization(payer, {
        to: payer.address,
        value: "1",
        domain,
        validBefore,
        nonce,
      });
      const wallet = createWalletClient({
        account: privateKeyToAccount(DEPLOYER_KEY),
        chain,
        transport: http(rpcUrl),
      });
      await client.waitForTransactionReceipt({
        hash: await wallet.writeContract(transferWithAuthorizationCall(asset, own) as any),
      });
      const during = await post(app.url, body, { "payment-signature": header });
      expect(during.status, during.text).toBe(402);
      expect(during.body.error).toMatch(/in use by a job that is still running/);
      held.shift()!(); // the settlement goes on: the nonce is used
      expect((await first).status).toBe(402);
      const after = await post(app.url, body, { "payment-signature": header });
      expect(after.status, after.text).toBe(402);
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(0n);
    } finally {
      holdFirst = false;
      await app.close();
    }
  }, 60_000);
});

// reconcile's look for a settlement never recorded (checks.ts usedBy): the transaction that used the
// nonce counts only if it paid the amount to the payee.
describe("a settlement found on chain without its transaction", () => {
  it("is confirmed when it paid the payee the amount, never when the payer used the nonce otherwise", async () => {
    const { createChainChecks } =
      await import("../../templates/runtime/payments/evm/onchain/checks.js");
    const network = {
      caip2: "eip155:84532",
      v1Name: "base-sepolia",
      chainId: 84532,
      asset,
      assetName: "USDC",
      assetVersion: "2",
    };
    // A fresh client per look: viem keeps the block number a few seconds, which would make the new
    // transactions look -1 deep.
    const state = (from: `0x${string}`, nonce: `0x${string}`) =>
      createChainChecks(rpcUrl, network).settlementState(from, nonce, undefined, validBefore, paid);
    const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: asset };
    const wallet = createWalletClient({
      account: privateKeyToAccount(DEPLOYER_KEY),
      chain,
      transport: http(rpcUrl),
    });
    const payTo = privateKeyToAddress(generatePrivateKey());
    const validBefore = nowSeconds() + 120;
    const paid = { payTo, amount: 10_000n };
    const used = async (to: `0x${string}`, value: string) => {
      const payer = await freshPayer(rpcUrl, asset, 100_000n);
      const signed = await signAuthorization(payer, {
        to,
        value,
        domain,
        validBefore: String(validBefore),
      });
      const hash = await wallet.writeContract(transferWithAuthorizationCall(asset, signed) as any);
      await client.waitForTransactionReceipt({ hash });
      return { hash, from: payer.address, nonce: signed.authorization.nonce as `0x${string}` };
    };
    const toPayee = await used(payTo, "10000");
    expect(await state(toPayee.from, toPayee.nonce)).toEqual({
      status: "confirmed",
      transaction: toPayee.hash,
    });
    for (const [to, value] of [
      [privateKeyToAddress(generatePrivateKey()), "10000"], // the payer's own other address
      [payTo, "1"], // the payee, but not the amount
    ] as const) {
      const other = await used(to, value);
      expect(await state(other.from, other.nonce)).toMatchObject({
        status: "unknown",
      });
    }
  }, 60_000);
});
