// Async paid jobs on real parts: Debian's redis-server (BullMQ queue and payment ledger), anvil with
// Circle's FiatTokenV2_2 and direct settlement, and the official x402 client (@x402/fetch +
// @x402/evm) paying with `Prefer: respond-async`. Two web instances (WORKER=off) and a worker
// instance share one Redis: the job is accepted by one web instance, polled on the other, run by the
// worker. The money is read back from the chain: nothing moves until the job completed, then exactly
// the price, once; a failed job, or one whose deadline passed while it waited, moves nothing. At the
// edges: payment-identifier ids, a freed payment's job_id reused, a dev-mode worker on the same Redis
// (it does not count as a worker: the job is refused, 503, its payment untouched, until one runs).
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  captureLogger,
  countedCapability,
  job,
  listen,
  makeAgent,
  nowSeconds,
  unb64,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import { b64, post, signAuthorization, v2Header } from "../runtime/helpers.js"; // the edges' own payments
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";
import { ensureBaseSepoliaUsdc, freshPayer, nonceUsed, usdcBalance } from "./usdc.js";
import { finished as finishedAfter, poll } from "../runtime/async-poll.js";
import { workersKey } from "../../templates/runtime/queue/worker-alive.js";

const { rpcUrl } = inject("chain");
let asset: `0x${string}`; // Base Sepolia's USDC address, which the official client pays by default
const PRICE = 10_000n; // 0.01 USDC: every capability of makeAgent() but cheap

let redis: RedisServer;
let agent: TestAgent;
const apps: Running[] = [];
let web: [Running, Running];
const appsLocals: Array<{ load(): Promise<{ close(): Promise<void> }> }> = [];

function instance(worker: boolean, prefix = "async-test:", devMode = false): Promise<Running> {
  const app = createApp(agent, {
    devMode,
    logger: captureLogger(),
    env: {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      WORKER: worker ? "on" : "off",
      JOB_LOCK_SECONDS: "3",
    },
    ...(!devMode && {
      payment: { payTo: PAYEE, network: "base-sepolia", rpcUrl, settlerKey: SETTLER_KEY },
    }),
  });
  appsLocals.push(app.locals.asyncJobs);
  return listen(app).then((running) => {
    apps.push(running);
    return running;
  });
}

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  agent = makeAgent();
  web = [await instance(false), await instance(false)];
  await instance(true); // the worker (it serves HTTP too, unused here)
  await appsLocals.at(-1)!.load(); // it counts (web instances refuse async jobs until a worker does)
}, 60_000);

afterAll(async () => {
  await Promise.all(appsLocals.map(async (jobs) => (await jobs.load()).close()));
  await Promise.all(apps.map((app) => app.close()));
  await redis?.stop();
});

const balance = (who: `0x${string}`) => usdcBalance(rpcUrl, asset, who);

/** The official client paying `payer`'s USDC on Base Sepolia (our anvil). */
const paying = (payer: PrivateKeyAccount) =>
  wrapFetchWithPayment(
    fetch,
    new x402Client().register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer))),
  );

/** POST /execute with Prefer: respond-async through the official client. */
async function submit(payer: PrivateKeyAccount, body: unknown, url = web[0].url) {
  const res = await paying(payer)(`${url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** Polls until the job is no longer queued or running. */
const finished = (url: string, location: string, token: string, ms = 30_000) =>
  finishedAfter(url, location, token, ms, 100);

describe("async paid jobs on BullMQ, two web instances and a worker on one Redis", () => {
  it("the official client pays with Prefer: respond-async; charged exactly the price, once, only after completion", async () => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const [payerBefore, payeeBefore] = [await balance(payer.address), await balance(PAYEE)];
    const body = job("slow", { ms: 2000 }, { deadline: nowSeconds() + 120 });
    const accepted = await submit(payer, body);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("preference-applied")).toBe("respond-async");
    const location = accepted.headers.get("location")!;
    const token = accepted.body.job_token as string;

    // Running on the worker, polled on the other web instance: nothing has moved yet.
    const running = await poll(web[1].url, location, token);
    expect(running.status).toBe(200);
    expect(["queued", "running"]).toContain(running.body.status);
    expect(await balance(payer.address)).toBe(payerBefore);
    expect((await poll(web[1].url, location)).status).toBe(404);

    const done = await finished(web[1].url, location, token);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      job_id: body.job_id,
      status: "completed",
      output: { text: "done" },
    });
    const receipt = unb64(done.headers.get("payment-response")!);
    expect(receipt.success).toBe(true);
    expect(await balance(payer.address)).toBe(payerBefore - PRICE);
    expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
    // Polled again on either instance: the same answer and receipt, no second charge.
    const again = await poll(web[0].url, location, token);
    expect(again.body).toEqual(done.body);
    expect(unb64(again.headers.get("payment-response")!).transaction).toBe(receipt.transaction);
    expect(await balance(payer.address)).toBe(payerBefore - PRICE);
  });

  it.each([
    ["a handler that throws", "throws", { text: "internal" }],
    ["an output that breaks its schema", "bad_output", { text: "hi" }],
  ])("%s: the failed body; nothing moved, the authorization unused", async (_n, cap, input) => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const accepted = await submit(payer, job(cap, input));
    expect(accepted.status).toBe(202);
    const done = await finished(
      web[1].url,
      accepted.headers.get("location")!,
      accepted.body.job_token,
    );
    expect(done.status).toBe(500);
    expect(done.body).toMatchObject({ status: "failed", error_type: "internal" });
    expect(done.headers.get("payment-response")).toBeNull();
    expect(await balance(payer.address)).toBe(before);
  });
  it("a deadline that passes while the job waits for a worker: 408, the handler never runs, nothing moved", async () => {
    // Its own queue (another key prefix), with no worker taking jobs until after the deadline: one
    // elsewhere says it is alive (busy), else the job would be refused up front.
    const lonely = await instance(false, "async-lonely:");
    const { Redis } = await import("ioredis");
    const admin = new Redis(redis.url);
    await admin.zadd(workersKey("async-lonely:bull", "jobs"), Date.now() + 60_000, "busy");
    admin.disconnect();
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const runs = agent.calls.echo ?? 0;
    const accepted = await submit(
      payer,
      job("echo", { text: "late" }, { deadline: nowSeconds() + 3 }),
      lonely.url,
    );
    expect(accepted.status).toBe(202);
    const location = accepted.headers.get("location")!;
    const token = accepted.body.job_token as string;
    expect((await poll(lonely.url, location, token)).body.status).toBe("queued");
    await new Promise((r) => setTimeout(r, 4000));
    const expired = await poll(lonely.url, location, token);
    expect(expired.status).toBe(408);
    expect(expired.body).toMatchObject({ status: "failed", error_type: "deadline" });
    // A worker comes now: it takes the job and runs nothing.
    await instance(true, "async-lonely:");
    const done = await finished(lonely.url, location, token);
    expect(done.status).toBe(408);
    expect(agent.calls.echo ?? 0).toBe(runs);
    expect(await balance(payer.address)).toBe(before);
  });
});

const async = { prefer: "respond-async" };
/** The job a 202 (`accepted`) queued, polled until it ended. */
const ended = (accepted: Awaited<ReturnType<typeof post>>, url = web[1].url) =>
  finished(url, accepted.headers.get("location")!, accepted.body.job_token);

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

// Found by a hostile tester: a payment-identifier id pays for one request on async jobs as on synchronous
// ones; another request under a payment and job_id whose first job failed runs (no 202 for a job that
// never runs); a dev-mode worker on the production Redis takes no paid job.
describe("async jobs at their edges", () => {
  it("a payment-identifier id pays for one request: the same id with another payment is in use, then 409, async or not; the identical resend gets the answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const body = job("slow", { ms: 1500 }, { deadline: nowSeconds() + 60 });
    const accepted = await offerFor(web[0].url, body);
    const id = `edges-${Date.now()}-0123456789`;
    const withId = async () =>
      b64({
        x402Version: 2,
        resource: { url: `${web[0].url}/execute` },
        accepted,
        payload: await payload(payer, accepted),
        extensions: { "payment-identifier": { info: { id } } },
      });
    const first = await withId();
    const runs = agent.calls.slow ?? 0;
    const a = await post(web[0].url, body, { ...async, "payment-signature": first });
    expect(a.status, a.text).toBe(202);
    // While it runs: another payment with its id is not run.
    const during = await post(web[0].url, body, { ...async, "payment-signature": await withId() });
    expect(during.status).toBe(402);
    expect(during.body.error).toMatch(
      /payment id ".*" is in use by a request that is still running/,
    );
    expect((await ended(a)).status).toBe(200);
    for (const headers of [{ ...async }, {}]) {
      const again = await post(web[0].url, body, {
        ...headers,
        "payment-signature": await withId(),
      });
      expect(again.status, again.text).toBe(409);
      expect(again.body.error).toMatch(/already used with another payment/);
    }
    // The identical resend (same payment and id), synchronously: the job's answer, not run again.
    const resend = await post(web[0].url, body, { "payment-signature": first });
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
    const accepted = await offerFor(web[0].url, late);
    const header = v2Header(accepted, await payload(payer, accepted));
    const a = await post(web[0].url, late, { ...async, "payment-signature": header });
    expect(a.status, a.text).toBe(202);
    expect((await ended(a)).status).toBe(408); // nothing charged: the payment is free again
    const next = {
      ...late,
      task: { ...late.task, input: { ms: 10 } },
      deadline: nowSeconds() + 60,
    };
    const b = await post(web[0].url, next, { ...async, "payment-signature": header });
    expect(b.status, b.text).toBe(202);
    expect(b.headers.get("location")).not.toBe(a.headers.get("location"));
    const done = await ended(b);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await poll(web[0].url, a.headers.get("location")!, a.body.job_token)).status).toBe(408);
    expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
  }, 60_000);

  it("Redis refuses writes (full) as the worker is to settle: nothing settled, the job goes back to the queue and runs again once Redis takes writes; completed, charged once", async () => {
    const { Redis } = await import("ioredis");
    const admin = new Redis(redis.url);
    const runs: Record<string, number> = {};
    agent.capabilities.fill = countedCapability("fill", PRICE, runs, async (input) => {
      if (runs.fill === 1) {
        await admin.config("SET", "maxmemory", "1"); // every write refused from now: OOM
        setTimeout(() => void admin.config("SET", "maxmemory", "0"), 2000);
      }
      return { text: input.text };
    });
    try {
      const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
      const before = await balance(payer.address);
      const body = job("fill", { text: "kept" });
      const accepted = await offerFor(web[0].url, body);
      const header = v2Header(accepted, await payload(payer, accepted));
      const a = await post(web[0].url, body, { ...async, "payment-signature": header });
      expect(a.status, a.text).toBe(202);
      const done = await ended(a);
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body.output).toEqual({ text: "kept" });
      expect(done.headers.get("payment-response")).toBeTruthy();
      expect(runs.fill).toBeGreaterThanOrEqual(2); // run again (each attempt while Redis is full is not settled)
      expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
    } finally {
      delete agent.capabilities.fill;
      await admin.config("SET", "maxmemory", "0");
      admin.disconnect();
    }
  }, 60_000);

  it("a dev-mode worker on the production Redis and prefix (a copied .env) is no worker for paid jobs: refused 503 up front, the payment untouched; once a production worker runs, the same payment runs there, charged once", async () => {
    const prefix = "async-edges-shared:";
    await instance(true, prefix, true); // npm run dev with the production REDIS_URL
    const prodWeb = await instance(false, prefix);
    const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
    const before = await balance(payer.address);
    const body = job("echo", { text: "paid" });
    // No offer for an async job while no worker runs: the synchronous offer is the same one.
    expect((await post(prodWeb.url, body, async)).status).toBe(503);
    const offer = await post(prodWeb.url, body);
    expect(offer.status).toBe(402);
    const accepted = unb64(offer.headers.get("payment-required")!).accepts[0];
    const header = v2Header(accepted, await payload(payer, accepted));
    const runs = agent.calls.echo ?? 0;
    const refused = await post(prodWeb.url, body, { ...async, "payment-signature": header });
    expect(refused.status, refused.text).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.body.error).toMatch(/^no worker is running for async jobs/);
    expect(agent.calls.echo ?? 0).toBe(runs);
    expect(await balance(payer.address)).toBe(before);
    const { nonce } = unb64(header).payload.authorization;
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(false);
    await instance(true, prefix); // a production worker
    await appsLocals.at(-1)!.load(); // its first beat done: it counts
    const a = await post(prodWeb.url, body, { ...async, "payment-signature": header });
    expect(a.status, a.text).toBe(202);
    const done = await ended(a, prodWeb.url);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.headers.get("payment-response")).toBeTruthy();
    expect(before - (await balance(payer.address))).toBe(BigInt(accepted.amount));
  }, 60_000);
});
