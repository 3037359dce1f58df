// The Solana side of settle-interrupted.test.ts: a web instance SIGKILLed while its Solana settlement is in
// flight. Real parts: two compiled web processes (async-processes.ts, no workers: a Solana payment is sync
// only) sharing a ledger on Debian's redis-server, the Solana kit (LiteSVM behind a loopback JSON-RPC) and
// its reference facilitator behind a front that forwards /settle, then holds the answer: the transaction
// landed, the payee was paid, and the instance dies before recording it. Its note (jobs/settling.ts) is what
// the buyer's identical retry (the same signed transaction) on the other instance meets once the dead
// instance's reservation ends: the payment refused as used, the chain asked (svm/reconcile.ts, the
// transaction found by its message among the payer's, svm/landed.ts), and the answer given with a receipt
// naming the landed transaction, charged once, the handler run once.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { job, nowSeconds, post, unb64 } from "../runtime/helpers.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import type { SolanaKit } from "../solana/kit.js";
import { type AsyncProcesses, exited, SLOW_PRICE, startAsyncProcesses } from "./async-processes.js";
import { type FacilitatorProxy, startFacilitatorProxy } from "./facilitator-proxy.js";
import { solanaPaymentHeader, startSolanaBeside } from "./solana-servers.js";

let solana: Awaited<ReturnType<typeof startSolanaBeside>>;
let kit: SolanaKit;
let redis: RedisServer;
let front: FacilitatorProxy;
let processes: AsyncProcesses;
/** Resolved with the facilitator's answer to the next /settle, which the front then holds. */
let settled: ((answer: string) => void) | undefined;
const held: Array<() => void> = [];

beforeAll(async () => {
  solana = await startSolanaBeside();
  kit = solana.kit;
  redis = await startRedis();
  front = await startFacilitatorProxy(solana.facilitator.url, {
    settled: (answer) => {
      settled?.(answer);
      return new Promise<void>((release) => held.push(release)); // its sender dies meanwhile
    },
  });
  processes = await startAsyncProcesses({
    rpcUrl: inject("chain").rpcUrl,
    redisUrl: redis.url,
    webs: 2,
    workers: 0,
    env: {
      X402_NETWORK: undefined,
      X402_NETWORKS: "solana-devnet",
      X402_SETTLER_KEY: undefined,
      PAY_TO_SOLANA: solana.payTo,
      X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl,
      X402_FACILITATOR_URL: front.url,
      X402_SETTLE_TIMEOUT_SECONDS: "5",
    },
  });
}, 120_000);

afterAll(async () => {
  held.forEach((release) => release());
  await processes?.close();
  await Promise.all([redis?.stop(), front?.stop(), solana?.facilitator.stop()]);
  await kit?.close();
});

describe("a Solana settlement whose instance died before recording it", () => {
  it("the identical retry on another instance gets the result and a receipt naming the landed transaction; charged once, the handler run once", async () => {
    const [web1, web2] = processes.webUrls;
    const [victim] = processes.webs;
    const payer = await kit.fundedPayer(1_000_000n);
    const body = job("slow", { ms: 50 }, { deadline: nowSeconds() + 5 });
    const header = await solanaPaymentHeader(web1!, body, kit, payer);
    const paid = { "payment-signature": header };
    const sent = new Promise<string>((resolve) => (settled = resolve));
    const lost = post(web1!, body, paid).catch(() => undefined);
    const { transaction } = JSON.parse(await sent) as { transaction: string };
    victim!.kill("SIGKILL");
    await exited(victim!);
    expect(await lost).toBeUndefined(); // no answer came back
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - SLOW_PRICE); // landed

    // "In use" while the dead instance's reservation lasts (its deadline, settlement time and margin).
    let retry = await post(web2!, body, paid);
    for (let i = 0; i < 60 && /in use by a job/.test(retry.text); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      retry = await post(web2!, body, paid);
    }
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output).toEqual({ text: `done by ${victim!.pid}` });
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({
      success: true,
      transaction,
      network: kit.network,
      payer: payer.address,
    });
    const again = await post(web2!, body, paid); // the same answer, nothing more charged
    expect(again.status, again.text).toBe(200);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - SLOW_PRICE);
    expect(await kit.usdcBalance(solana.payTo)).toBe(SLOW_PRICE);
    expect(processes.runs()).toEqual([victim!.pid]);
    expect(processes.output(processes.webs[1]!)).toMatch(
      /started and never recorded: asking the chain/,
    );
  }, 90_000);
});
