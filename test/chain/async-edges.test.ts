// Async paid jobs at their edges, found by a hostile tester (BullMQ and the ledger on Debian's
// redis-server, anvil's USDC settled directly): a payment-identifier id pays for one request on async
// jobs as on synchronous ones; another request under a payment and job_id whose first job failed runs
// (no 202 for a job that never runs); a dev-mode worker on the production Redis takes no paid job.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  b64,
  captureLogger,
  job,
  listen,
  makeAgent,
  nowSeconds,
  post,
  type Running,
  signAuthorization,
  type TestAgent,
  unb64,
  v2Header,
} from "../runtime/helpers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";
import { finished as finishedAfter, poll } from "../runtime/async-poll.js";

const { rpcUrl } = inject("chain");
let asset: `0x${string}`;
let redis: RedisServer;
let agent: TestAgent;
const apps: Running[] = [];
const locals: Array<{ load(): Promise<{ close(): Promise<void> }> }> = [];
let web: Running;

function instance(worker: boolean, prefix: string, devMode = false): Promise<Running> {
  const app = createApp(agent, {
    devMode,
    logger: captureLogger(),
    env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, WORKER: worker ? "on" : "off" },
    ...(!devMode && {
      payment: { payTo: PAYEE, network: "base-sepolia", rpcUrl, settlerKey: SETTLER_KEY },
    }),
  });
  locals.push(app.locals.asyncJobs);
  return listen(app).then((running) => {
    apps.push(running);
    return running;
  });
}

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  agent = makeAgent();
  web = await instance(true, "async-edges:");
}, 60_000);

afterAll(async () => {
  await Promise.all(locals.map(async (l) => (await l.load()).close().catch(() => undefined)));
  await Promise.all(apps.map((a) => a.close()));
  await redis?.stop();
});

const balance = (who: `0x${string}`) => usdcBalance(rpcUrl, asset, who);
const finished = (url: string, res: Awaited<ReturnType<typeof post>>) =>
  finishedAfter(url, res.headers.get("location")!, res.body.job_token, 30_000, 100);
const async = { prefer: "respond-async" };

async function offerFor(url: string, body: unknown) {
  const first = await post(url, body, async);
  expect(first.status).toBe(402);
  return unb64(first.headers.get("payment-required")!).accepts[0];
}

/** A fresh EIP-3009 authorization for `accepted`, as the PaymentPayload object. */
async function payload(payer: Awaited<ReturnType<typeof freshPayer>>, accepted: any) {
  return signAuthorization(payer, {
    to: accepted.payTo,
    value: accepted.amount,
    validBefore: String(nowSeconds() + 280),
    domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: asset },
  });
}

describe("async jobs at their edges", () => {
  it("a payment-identifier id pays for one request: the same id with another payment is in use, then 409, async or not; the identical resend gets the answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const body = job("slow", { ms: 1500 }, { deadline: nowSeconds() + 60 });
    const accepted = await offerFor(web.url, body);
    const id = `edges-${Date.now()}-0123456789`;
    const withId = async () =>
      b64({
        x402Version: 2,
        resource: { url: `${web.url}/execute` },
        accepted,
        payload: await payload(payer, accepted),
        extensions: { "payment-identifier": { info: { id } } },
      });
    const first = await withId();
    const runs = agent.calls.slow ?? 0;
    const a = await post(web.url, body, { ...async, "payment-signature": first });
    expect(a.status, a.text).toBe(202);
    // While it runs: another payment with its id is not run.
    const during = await post(web.url, body, { ...async, "payment-signature": await withId() });
    expect(during.status).toBe(402);
    expect(during.body.error).toMatch(
      /payment id ".*" is in use by a request that is still running/,
    );
    expect((await finished(web.url, a)).status).toBe(200);
    for (const headers of [{ ...async }, {}]) {
      const again = await post(web.url, body, { ...headers, "payment-signature": await withId() });
      expect(again.status, again.text).toBe(409);
      expect(again.body.error).toMatch(/already used with another payment/);
    }
    // The identical resend (same payment and id), synchronously: the job's answer, not run again.
    const resend = await post(web.url, body, { "payment-signature": first });
    expect(resend.status, resend.text).toBe(200);
    expect(resend.headers.get("payment-response")).toBeTruthy();
    expect(agent.calls.slow! - runs).toBe(1);
    expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
  }, 60_000);

  it("another request under the payment and job_id of a failed async job runs (its own job), and is charged once", async () => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const late = job(
      "slow",
      { ms: 3000 },
      { job_id: `reuse-${Date.now()}`, deadline: nowSeconds() + 2 },
    );
    const accepted = await offerFor(web.url, late);
    const header = v2Header(accepted, await payload(payer, accepted));
    const a = await post(web.url, late, { ...async, "payment-signature": header });
    expect(a.status, a.text).toBe(202);
    expect((await finished(web.url, a)).status).toBe(408); // nothing charged: the payment is free again
    const next = {
      ...late,
      task: { ...late.task, input: { ms: 10 } },
      deadline: nowSeconds() + 60,
    };
    const b = await post(web.url, next, { ...async, "payment-signature": header });
    expect(b.status, b.text).toBe(202);
    expect(b.headers.get("location")).not.toBe(a.headers.get("location"));
    const done = await finished(web.url, b);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await poll(web.url, a.headers.get("location")!, a.body.job_token)).status).toBe(408);
    expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
  }, 60_000);

  it("a dev-mode worker on the production Redis and prefix (a copied .env) takes no paid job: a production worker runs it, charged", async () => {
    const prefix = "async-edges-shared:";
    await instance(true, prefix, true); // npm run dev with the production REDIS_URL
    const prodWeb = await instance(false, prefix);
    const prodWorker = instance(true, prefix); // started later: the dev worker was free first
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const body = job("echo", { text: "paid" });
    const accepted = await offerFor(prodWeb.url, body);
    const header = v2Header(accepted, await payload(payer, accepted));
    const a = await post(prodWeb.url, body, { ...async, "payment-signature": header });
    expect(a.status, a.text).toBe(202);
    await prodWorker;
    const done = await finished(prodWeb.url, a);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.headers.get("payment-response")).toBeTruthy();
    expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
  }, 60_000);
});
