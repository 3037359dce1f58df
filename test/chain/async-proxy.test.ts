// A job longer than a proxy's patience, on real parts: a loopback reverse proxy with a read timeout
// (read-timeout-proxy.ts, like nginx's proxy_read_timeout) in front of two web processes (WORKER=off),
// round robin, and two worker processes (`--worker`) on one Debian redis-server, anvil with Circle's
// FiatTokenV2_2, direct settlement, the official @x402/fetch client paying.
//   - Sent synchronously through the proxy, the job is cut at the proxy (504); the server sees its caller
//     gone and charges nothing, although the handler ran to the end.
//   - Sent with `Prefer: respond-async`: 202 at once, polled through the proxy (both web instances answer
//     in turn), the result delivered with its receipt; the payer's USDC is unchanged until the job
//     completed, then less exactly the price, once.
// The figures are a 60 s proxy read timeout and a 150 s job; both are scaled by 1/10 in the suite to
// keep it fast (6 s and 15 s): what is asserted is the same (the job outlives the proxy's timeout).
// ASYNC_PROXY_SCALE=1 runs them at the issue's own figures (about 4 minutes):
//   ASYNC_PROXY_SCALE=1 npx vitest run test/chain/async-proxy.test.ts
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { job, nowSeconds } from "../runtime/helpers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { PAYEE } from "./accounts.js";
import {
  type AsyncProcesses,
  paying,
  SLOW_PRICE as PRICE,
  startAsyncProcesses,
} from "./async-processes.js";
import { readTimeoutProxy, type ReadTimeoutProxy } from "./read-timeout-proxy.js";
import { ensureBaseSepoliaUsdc, freshPayer, usdcBalance } from "./usdc.js";

const { rpcUrl } = inject("chain");
/** The scale of the figures: 1/10 unless ASYNC_PROXY_SCALE says otherwise (1 = as the issue says). */
const SCALE = Number(process.env.ASYNC_PROXY_SCALE ?? 0.1);
if (!(SCALE > 0 && SCALE <= 1))
  throw new Error(`ASYNC_PROXY_SCALE must be in (0, 1], got ${SCALE}`);
/** The 60 s proxy read timeout (nginx's default), scaled: ms. */
const PROXY_READ_TIMEOUT_60S = 60_000 * SCALE;
/** The 150 s job, scaled: ms the handler takes. */
const JOB_150S = 150_000 * SCALE;
/** Room for everything but the job itself (start-up, polls, settlement on a loaded machine): ms. */
const SLACK = 45_000;

let redis: RedisServer;
let asset: `0x${string}`;
let processes: AsyncProcesses;
let proxy: ReadTimeoutProxy;

beforeAll(async () => {
  asset = await ensureBaseSepoliaUsdc(rpcUrl);
  redis = await startRedis();
  processes = await startAsyncProcesses({ rpcUrl, redisUrl: redis.url, webs: 2, workers: 2 });
  proxy = await readTimeoutProxy(processes.webUrls, PROXY_READ_TIMEOUT_60S);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await processes?.close();
  await redis?.stop();
});

const balance = (address: `0x${string}`) => usdcBalance(rpcUrl, asset, address);
const slowJob = () =>
  job(
    "slow",
    { ms: JOB_150S },
    { deadline: nowSeconds() + Math.ceil((JOB_150S + 105_000) / 1000) },
  );

function send(payer: PrivateKeyAccount, body: unknown, headers: Record<string, string> = {}) {
  return paying(payer)(`${proxy.url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** Whether a web instance logged `pattern`, waiting for it up to `ms`. */
async function loggedByAWeb(pattern: RegExp, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  const logged = () => processes.webs.some((web) => pattern.test(processes.output(web)));
  while (!logged() && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  return logged();
}

describe("a job longer than the proxy's read timeout", () => {
  it(
    "sent synchronously: 504 at the proxy, and the payer is not charged for the answer it never got",
    async () => {
      const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
      const [payerBefore, payeeBefore] = [await balance(payer.address), await balance(PAYEE)];
      const started = Date.now();
      const res = await send(payer, slowJob());
      expect(res.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(JOB_150S);
      expect(proxy.timedOut).toBe(1);
      // The handler runs to its end; the server then finds its caller gone and settles nothing.
      const gone = await loggedByAWeb(
        /caller gone before settlement: not charged/,
        JOB_150S + 15_000,
      );
      expect(await balance(payer.address)).toBe(payerBefore);
      expect(await balance(PAYEE)).toBe(payeeBefore);
      expect(gone).toBe(true);
    },
    JOB_150S + SLACK,
  );

  it(
    "sent async: 202, polled through the proxy, delivered; charged exactly the price once, on completion",
    async () => {
      const payer = await freshPayer(rpcUrl, asset, 1_000_000n);
      const [payerBefore, payeeBefore] = [await balance(payer.address), await balance(PAYEE)];
      const timedOutBefore = proxy.timedOut;
      const started = Date.now();
      const res = await send(payer, slowJob(), { prefer: "respond-async" });
      const text = await res.text();
      expect(res.status, text).toBe(202);
      const accepted = JSON.parse(text);
      expect(accepted).toMatchObject({ status: "queued" });
      const location = res.headers.get("location")!;
      const poll = async () => {
        const answer = await fetch(`${proxy.url}${location}`, {
          headers: { authorization: `Bearer ${accepted.job_token}` },
        });
        return {
          status: answer.status,
          headers: answer.headers,
          body: (await answer.json()) as any,
        };
      };

      let answer = await poll();
      let pending = 0;
      while (answer.status === 200 && ["queued", "running"].includes(answer.body.status)) {
        expect(await balance(payer.address)).toBe(payerBefore); // nothing moves while it runs
        pending++;
        if (Date.now() - started > JOB_150S + 30_000) throw new Error("the job never finished");
        await new Promise((r) => setTimeout(r, 1000));
        answer = await poll();
      }
      expect(Date.now() - started).toBeGreaterThan(PROXY_READ_TIMEOUT_60S); // it outlived the proxy's patience
      expect(pending).toBeGreaterThan(PROXY_READ_TIMEOUT_60S / 1000);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const workerPids = processes.workers.map((w) => `done by ${w.pid}`);
      expect(answer.body).toMatchObject({ status: "completed", job_id: accepted.job_id });
      expect(workerPids).toContain(answer.body.output.text);
      expect(answer.headers.get("payment-response")).toBeTruthy();
      expect(proxy.timedOut).toBe(timedOutBefore); // no poll, nor the 202, waited on the job
      expect(await balance(payer.address)).toBe(payerBefore - PRICE);
      expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);

      // Polled again (each web instance in turn): the same result, and no second charge.
      for (const again of [await poll(), await poll()]) {
        expect(again.status).toBe(200);
        expect(again.body).toMatchObject({ status: "completed", output: answer.body.output });
      }
      expect(await balance(payer.address)).toBe(payerBefore - PRICE);
      expect(await balance(PAYEE)).toBe(payeeBefore + PRICE);
    },
    JOB_150S + SLACK + 30_000,
  );
});
