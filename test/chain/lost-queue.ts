// A production seller whose async jobs and ledger live on Debian's redis-server, restarted empty while the
// first job of `capability` runs (a Redis without persistence restarted mid-job): the job's record and its
// payment's claims are gone, its handler finishes and its payment is settled, so a poll of the job answers
// 404 while the ledger holds the answer for the identical request. Shared by the payers' tests of it
// (call.test.ts: `create-agent call --async`; client.test.ts: a generated client with { async: true }).
import type { AppOptions } from "../../templates/runtime/config.js";
import { createApp } from "../../templates/runtime/app.js";
import type { AgentDefinition } from "../../templates/runtime/types.js";
import type { Hex } from "viem";
import { expect, inject } from "vitest";
import { startRedis } from "../redis/redis-server.js";
import { captureLogger, listen } from "../runtime/helpers.js";
import { usdcBalance } from "./usdc.js";

export interface LostQueueSeller {
  url: string;
  /** How many times the handler ran, and how many payments were settled. */
  runs(): number;
  settled(): number;
  /** How many times Redis was restarted empty (once, in the first run of the handler). */
  restarts(): number;
  close(): Promise<void>;
}

export async function lostQueueSeller(
  agent: AgentDefinition,
  capability: string,
  payment: AppOptions["payment"],
): Promise<LostQueueSeller> {
  const redis = await startRedis();
  const sold = agent.capabilities[capability]!;
  let runs = 0;
  let restarts = 0;
  const handler = sold.handler;
  const lossy: AgentDefinition = {
    ...agent,
    capabilities: {
      ...agent.capabilities,
      [capability]: {
        ...sold,
        handler: async (input, ctx) => {
          runs += 1;
          if (restarts === 0) {
            restarts += 1;
            await redis.restart();
            await reconnected(); // the ledger can settle: the outage was short
          }
          return handler(input, ctx);
        },
      },
    },
  };
  const logger = captureLogger();
  const reconnected = async () => {
    const back = () => logger.lines.some((l) => /is reachable again/.test(l.message));
    for (let waited = 0; !back() && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const app = createApp(lossy, {
    devMode: false,
    logger,
    payment,
    env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: "lost-queue:", WORKER: "on" },
  });
  const running = await listen(app);
  return {
    url: running.url,
    runs: () => runs,
    settled: () => logger.lines.filter((l) => l.message === "payment settled").length,
    restarts: () => restarts,
    async close() {
      await (await app.locals.asyncJobs.load()).close();
      await running.close();
      await redis.stop();
    },
  };
}

/**
 * `pay` (the payer's job, sent to the seller's URL) against a new lost-queue seller of `capability`
 * paid in `payment`: then Redis was restarted once, one payment was settled, and exactly `price` moved
 * from `payer` to the payee.
 */
export async function paidThroughLostQueue(
  agent: AgentDefinition,
  capability: string,
  payment: NonNullable<AppOptions["payment"]>,
  payer: Hex,
  price: bigint,
  pay: (url: string) => Promise<void>,
): Promise<void> {
  const { rpcUrl } = inject("chain");
  const balances = async () =>
    Promise.all(
      [payment.payTo, payer].map((who) => usdcBalance(rpcUrl, payment.asset as Hex, who as Hex)),
    );
  const lost = await lostQueueSeller(agent, capability, payment);
  try {
    const [payeeBefore, payerBefore] = await balances();
    await pay(lost.url);
    expect(lost.restarts()).toBe(1);
    expect(lost.settled()).toBe(1);
    expect(await balances()).toEqual([payeeBefore! + price, payerBefore! - price]);
  } finally {
    await lost.close();
  }
}
