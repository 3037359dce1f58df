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
import { job, nowSeconds, post, signAuthorization, unb64, v2Header } from "../runtime/helpers.js";
import { closeServer, listenLocal } from "../runtime/servers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { type AsyncProcesses, exited, SLOW_PRICE, startAsyncProcesses } from "./async-processes.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";

const { rpcUrl, facilitatorUrl } = inject("chain");
let redis: RedisServer;
let asset: `0x${string}`;
let processes: AsyncProcesses;
const runs = () => processes.runs();

/** A facilitator front: forwards everything; a /settle is forwarded, then its answer held. */
let settled: (() => void) | undefined;
const held: Array<() => void> = [];
const front = createServer((req, res) => {
  void (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as IncomingMessage) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? "/", "http://front").pathname;
    const answer = await fetch(facilitatorUrl.replace(/\/+$/, "") + path, {
      method: req.method,
      headers: { "content-type": "application/json" },
      ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
    });
    const text = await answer.text();
    if (path.endsWith("/settle")) {
      settled?.();
      await new Promise<void>((release) => held.push(release)); // its sender dies meanwhile
    }
    res.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  })().catch(() => res.destroy());
});

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  const frontUrl = await listenLocal(front);
  processes = await startAsyncProcesses({
    rpcUrl,
    redisUrl: redis.url,
    webs: 2,
    workers: 2,
    // Settled by the facilitator (through the front); X402_RPC_URL checks payments on chain.
    env: { X402_FACILITATOR_URL: frontUrl, X402_SETTLER_KEY: undefined },
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
    const body = job("slow", { ms: 50 }, { deadline: nowSeconds() + 60 });
    const { payer, header } = await paidRequest(web1!, body);
    const before = await usdcBalance(rpcUrl, asset, payer.address);
    const sent = new Promise<void>((resolve) => (settled = resolve));
    const lost = post(web1!, body, { "payment-signature": header }).catch(() => undefined);
    await sent;
    await kill(processes.webs[0]!);
    await lost;
    const retry = await post(web2!, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output.text).toMatch(/^done by \d+$/);
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(before - (await usdcBalance(rpcUrl, asset, payer.address))).toBe(SLOW_PRICE);
  }, 60_000);
});
