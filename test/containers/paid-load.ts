// A bounded stream of paid jobs through the compose proxy, each from its own payer with its own
// authorization (signed from the job's own 402 before the stream starts), with an action (stopping an
// instance) started midway. Each job's answer, or why none came, and what its payer was charged on chain.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { freshPayer, usdcBalance } from "../chain/usdc.js";
import { decodeHeader, signPayment, type Requirement } from "../e2e/helpers.js";
import { job } from "./docker.js";

export interface PaidResult {
  jobId: string;
  status: number;
  body: Record<string, unknown>;
  /** The price the job's 402 asked. */
  price: bigint;
  /** What the payer's balance lost, read once every job was answered. */
  charged: bigint;
  /** The container (HOSTNAME) the test handler names in a completed answer. */
  answeredBy?: string;
  /** Answered after the midway action began. */
  afterStop: boolean;
  /** Sent (at least 250 ms) before the midway action began: it reached an instance still taking jobs. */
  sentBeforeStop: boolean;
}

export interface PaidLoad {
  results: PaidResult[];
  /** Requests that got no typed JSON answer: a reset connection, a proxy's own page. */
  lost: Array<{ jobId: string; error: string }>;
}

const JSON_HEADERS = { "content-type": "application/json" };

/** One job from a fresh payer: its body, its signed payment and the price, from its own 402. */
async function prepare(base: string, rpcUrl: string, asset: `0x${string}`, i: number) {
  const account = await freshPayer(rpcUrl, asset, 1_000_000n);
  const jobId = `load-${i}`;
  // Every third job takes 4 s (the test handler), so some are in flight when the instance stops.
  const body = JSON.stringify(job(jobId, i % 3 === 0 ? "slow load" : "load"));
  const offer = await fetch(`${base}/execute`, { method: "POST", headers: JSON_HEADERS, body });
  expect(offer.status, await offer.clone().text()).toBe(402);
  const requirement = decodeHeader<{ accepts: Requirement[] }>(
    offer.headers.get("payment-required"),
  ).accepts[0]!;
  const payment = await signPayment(requirement, 84532, {}, account);
  const funded = await usdcBalance(rpcUrl, asset, account.address);
  return { jobId, body, payment, account, funded, price: BigInt(requirement.amount) };
}

/** Sends `jobs` paid jobs 250 ms apart; `midway` starts after a quarter of them. */
export async function paidLoad(options: {
  base: string;
  rpcUrl: string;
  asset: `0x${string}`;
  jobs: number;
  midway: () => Promise<unknown>;
}): Promise<PaidLoad> {
  const { base, rpcUrl, asset } = options;
  const prepared = [];
  for (let i = 0; i < options.jobs; i++) prepared.push(await prepare(base, rpcUrl, asset, i));
  const answers: Array<Omit<PaidResult, "charged" | "price"> | undefined> = [];
  const lost: PaidLoad["lost"] = [];
  let stopAt = Number.POSITIVE_INFINITY;
  let action: Promise<unknown> = Promise.resolve();
  const sent = prepared.map(async (p, i) => {
    await sleep(i * 250);
    if (i === Math.floor(options.jobs / 4)) {
      stopAt = Date.now();
      action = options.midway();
    }
    try {
      const res = await fetch(`${base}/execute`, {
        method: "POST",
        headers: { ...JSON_HEADERS, "payment-signature": p.payment },
        body: p.body,
      });
      const text = await res.text();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        lost.push({ jobId: p.jobId, error: `HTTP ${res.status}, not JSON: ${text.slice(0, 200)}` });
        return;
      }
      const summary = (body.output as { summary?: string } | undefined)?.summary;
      answers[i] = {
        jobId: p.jobId,
        status: res.status,
        body,
        ...(summary ? { answeredBy: summary.split(":")[0] } : {}),
        afterStop: Date.now() > stopAt,
        sentBeforeStop: i < Math.floor(options.jobs / 4),
      };
    } catch (error) {
      lost.push({ jobId: p.jobId, error: String((error as Error).cause ?? error) });
    }
  });
  await Promise.all(sent);
  await action;
  const results: PaidResult[] = [];
  for (const [i, p] of prepared.entries()) {
    const a = answers[i];
    if (!a) continue;
    const left = await usdcBalance(rpcUrl, asset, p.account.address);
    results.push({ ...a, price: p.price, charged: p.funded - left });
  }
  return { results, lost };
}
