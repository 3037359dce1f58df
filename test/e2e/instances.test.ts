// Two generated servers, one shared payment ledger: both instances of the same agent run in
// production mode (`node dist/server.js`), settle directly with the SAME settler key through anvil,
// and share one real redis-server. What must hold across them: one authorization runs one handler
// and is charged once, whichever instance each copy of it reaches; an identical retry gets the
// cached answer from the other instance; one settler key serves concurrent jobs on both; a Redis
// outage refuses paid jobs (503, nothing run or charged) and service resumes by itself; an instance
// killed mid-job frees its reservation (a lease) for the other one, which then runs and charges it
// once. Balances and Transfer events are read from the chain; handler runs are counted from both
// instances' logs.
import { rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { parseAbiItem } from "viem";
import {
  generatePrivateKey,
  privateKeyToAccount,
  privateKeyToAddress,
  type PrivateKeyAccount,
} from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { PAYER_KEYS, SETTLER_KEY } from "../chain/accounts.js";
import { type RedisServer, startRedis } from "../redis/redis-server.js";
import { authorize as authorizeJob, balance, chain, productionEnv, publicClient } from "./chain.js";
import {
  buildProject,
  copyProject,
  decodeHeader,
  post,
  startServer,
  summarizeJob,
} from "./helpers.js";

const shared = inject("projectDir");

/** The price of "summarize" (0.01 USDC) in atomic units. */
const PRICE = 10_000n;
/** A payee of our own: only this file's jobs pay it, so its balance and transfers are ours alone. */
const PAYEE = privateKeyToAddress(generatePrivateKey());
/** Short, so a lease left by a killed instance ends within the test: deadline + this + 10 s. */
const SETTLE_TIMEOUT_SECONDS = 5;
const payers: PrivateKeyAccount[] = PAYER_KEYS.map((key) => privateKeyToAccount(key));

// Logs a line when it starts (the logger adds the job id), sleeps on "slow:<ms>", else answers at once.
const HANDLER = `import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";
import type { HandlerContext } from "../runtime/types.js";

export default async function summarize(input: SummarizeInput, ctx: HandlerContext): Promise<SummarizeOutput> {
  ctx.logger.info("summarize started", { pid: process.pid });
  const slow = /^slow:(\\d+)$/.exec(input.text);
  if (slow) await new Promise((resolve) => setTimeout(resolve, Number(slow[1])));
  return { summary: input.text.toUpperCase() };
}
`;

type Server = Awaited<ReturnType<typeof startServer>>;
let projectDir = "";
let kit: RedisServer | undefined;
let a: Server | undefined;
let b: Server | undefined;
/** Set while the Redis outage test has Redis stopped, so a failure there does not leave it down. */
let redisDown = false;
const servers = () => [a!, b!];

const env = () =>
  productionEnv(PAYEE, {
    X402_SETTLER_KEY: SETTLER_KEY,
    X402_SETTLE_TIMEOUT_SECONDS: String(SETTLE_TIMEOUT_SECONDS),
    REDIS_URL: kit!.url,
  });

beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-instances-");
  await writeFile(join(projectDir, "src/capabilities/summarize.ts"), HANDLER);
  await buildProject(projectDir);
  kit = await startRedis();
  [a, b] = await Promise.all([startServer(projectDir, env()), startServer(projectDir, env())]);
  for (const server of servers())
    expect(server.output()).toMatch(
      new RegExp(`payment ledger: Redis[^"]*127\\.0\\.0\\.1:${kit.port}`),
    );
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await kit?.stop();
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

const job = summarizeJob;
const paid = (header: string) => ({ "payment-signature": header });

/**
 * A fresh authorization (random nonce) of exactly the price, signed by `signer`, for what a 402 from `url`
 * asks for "summarize" (no ledger involved: works during an outage too).
 */
const authorize = (url: string, signer: PrivateKeyAccount): Promise<string> =>
  authorizeJob(url, job("hello", `ask-${Date.now()}`), signer);

/** How many times the handler started on `jobId`, counted in `of` (default: both instances' logs). */
function runs(jobId: string, of: Server[] = servers()): number {
  return of
    .flatMap((server) => server.output().split("\n"))
    .filter(
      (line) =>
        line.includes(`"msg":"summarize started"`) &&
        line.includes(`"job_id":${JSON.stringify(jobId)}`),
    ).length;
}

/** Log lines reach us through pipes, independently of the HTTP answers: let them arrive. */
const logsSettle = () => sleep(500);

const TRANSFER = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 value)",
);

/** USDC Transfer events to our payee mined after block `head`. */
async function transfersToPayee(head: bigint) {
  // From `head` itself: anvil refuses a fromBlock beyond the chain's tip.
  const logs = await publicClient.getLogs({
    address: chain.asset,
    event: TRANSFER,
    args: { to: PAYEE },
    fromBlock: head,
    toBlock: "latest",
  });
  return logs.filter((log) => log.blockNumber > head);
}

/** The chain now: its latest block (this test's transfers come after it) and the payee's balance. */
async function snapshot() {
  // cacheTime 0: viem would otherwise answer from a block number cached for seconds.
  return { head: await publicClient.getBlockNumber({ cacheTime: 0 }), payee: await balance(PAYEE) };
}

/** Exactly `charges` transfers of the price to the payee since `before`, and nothing else moved to it. */
async function expectCharged(before: { head: bigint; payee: bigint }, charges: number) {
  const transfers = await transfersToPayee(before.head);
  expect(transfers).toHaveLength(charges);
  for (const transfer of transfers) expect(transfer.args.value).toBe(PRICE);
  expect(await balance(PAYEE)).toBe(before.payee + PRICE * BigInt(charges));
  return transfers;
}

async function expectMined(receiptHeader: string | null) {
  const receipt = decodeHeader<{ success: boolean; transaction: `0x${string}` }>(receiptHeader);
  expect(receipt.success).toBe(true);
  const mined = await publicClient.getTransactionReceipt({ hash: receipt.transaction });
  expect(mined.status).toBe("success");
  return receipt.transaction;
}

async function waitFor(what: string, limitMs: number, check: () => boolean | Promise<boolean>) {
  const until = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(200);
  }
}

describe("two generated instances sharing one Redis ledger, one settler key, anvil with Circle's USDC", () => {
  afterEach(async () => {
    if (!redisDown) return;
    redisDown = false;
    await kit!.restart();
  });

  it("one authorization sent 20 times at once, split across both: one handler run, one transfer, 19 × 402", async () => {
    const tag = `race-${Date.now()}`;
    const header = await authorize(a!.url, payers[0]!);
    const before = await snapshot();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${servers()[i % 2]!.url}/execute`, post(job("hello", `${tag}-${i}`), paid(header))),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    for (const answer of answers.filter((r) => r.status === 402))
      expect(await answer.json()).toMatchObject({ status: "failed", error_type: "payment" });
    const winner = answers.findIndex((r) => r.status === 200);
    await expectMined(answers[winner]!.headers.get("payment-response"));

    await logsSettle();
    const total = Array.from({ length: 20 }, (_, i) => runs(`${tag}-${i}`)).reduce((x, y) => x + y);
    expect(total).toBe(1);
    expect(runs(`${tag}-${winner}`)).toBe(1);
    await expectCharged(before, 1);
  });

  it("an identical retry sent to the other instance gets the same answer and receipt: no second run, no second charge", async () => {
    const jobId = `retry-${Date.now()}`;
    const header = await authorize(a!.url, payers[1]!);
    const before = await snapshot();
    const body = job("hello", jobId);
    const first = await fetch(`${a!.url}/execute`, post(body, paid(header)));
    expect(first.status, await first.clone().text()).toBe(200);
    const firstBody = await first.text();
    const transaction = await expectMined(first.headers.get("payment-response"));

    const again = await fetch(`${b!.url}/execute`, post(body, paid(header)));
    expect(again.status, await again.clone().text()).toBe(200);
    expect(await again.text()).toBe(firstBody);
    expect(JSON.parse(firstBody)).toMatchObject({ output: { summary: "HELLO" } });
    expect(
      decodeHeader<{ transaction: string }>(again.headers.get("payment-response")).transaction,
    ).toBe(transaction);

    await logsSettle();
    expect(runs(jobId, [a!])).toBe(1);
    expect(runs(jobId, [b!])).toBe(0);
    await expectCharged(before, 1);
  });

  it("one MCP payment sent as 10 tools/calls at once, split across both: one handler run, one transfer, 9 refused", async () => {
    const tag = `mcp-race-${Date.now()}`;
    const call = (url: string, id: number, meta: Record<string, unknown>) =>
      fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "tools/call",
          params: { name: "summarize", arguments: { text: "hello" }, _meta: meta },
        }),
      }).then(
        async (r) => (await r.json()) as { result: { isError?: boolean; structuredContent: any } },
      );
    // The tool's PaymentRequired, paid by the official x402 client (a local token: no spend caps).
    const unpaid = await call(a!.url, 0, {});
    expect(unpaid.result.isError).toBe(true);
    const client = new x402Client()
      .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payers[2]!)))
      .setSpendControls(false);
    const payment = await client.createPaymentPayload(unpaid.result.structuredContent);
    const before = await snapshot();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(servers()[i % 2]!.url, i + 1, { "x402/payment": payment, job_id: `${tag}-${i}` }),
      ),
    );
    const ok = answers.filter((r) => !r.result.isError);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.result.structuredContent).toEqual({ summary: "HELLO" });
    for (const refused of answers.filter((r) => r.result.isError))
      expect(refused.result.structuredContent).toMatchObject({ error_type: "payment" });

    await logsSettle();
    const total = Array.from({ length: 10 }, (_, i) => runs(`${tag}-${i}`)).reduce((x, y) => x + y);
    expect(total).toBe(1);
    await expectCharged(before, 1);
  });

  it("20 distinct paid jobs at once, split across both, one settler key: 20 × 200, 20 distinct mined transfers", async () => {
    const tag = `many-${Date.now()}`;
    const headers: string[] = [];
    for (let i = 0; i < 20; i++) headers.push(await authorize(a!.url, payers[i % payers.length]!));
    const before = await snapshot();
    const answers = await Promise.all(
      headers.map((header, i) =>
        fetch(
          `${servers()[i % 2]!.url}/execute`,
          post(job(`job ${i}`, `${tag}-${i}`), paid(header)),
        ),
      ),
    );
    const failures = await Promise.all(
      answers.filter((r) => r.status !== 200).map(async (r) => `${r.status} ${await r.text()}`),
    );
    expect(failures).toEqual([]);
    const hashes = await Promise.all(
      answers.map((r) => expectMined(r.headers.get("payment-response"))),
    );
    expect(new Set(hashes).size).toBe(20);

    await logsSettle();
    for (let i = 0; i < 20; i++) expect(runs(`${tag}-${i}`), `job ${i}`).toBe(1);
    const transfers = await expectCharged(before, 20);
    expect(new Set(transfers.map((t) => t.transactionHash))).toEqual(new Set(hashes));
  });

  it("Redis stopped: paid jobs get 503 + Retry-After, nothing runs or moves, /health 503, /about 200; Redis back: service resumes by itself", async () => {
    const jobId = `outage-${Date.now()}`;
    const payer = payers[2]!;
    const header = await authorize(a!.url, payer);
    const other = await authorize(b!.url, payer);
    const before = await snapshot();
    const payerBefore = await balance(payer.address);

    await kit!.stop();
    redisDown = true;
    for (const [server, sent, id] of [
      [a!, header, jobId],
      [b!, other, `${jobId}-b`],
    ] as const) {
      const res = await fetch(`${server.url}/execute`, post(job("hello", id), paid(sent)));
      const body = (await res.json()) as { error_type: string; error: string };
      expect(res.status, JSON.stringify(body)).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(body).toMatchObject({ status: "failed", error_type: "internal" });
      expect(body.error).toMatch(/ledger/);
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: "degraded" });
      expect((await fetch(`${server.url}/about`)).status).toBe(200);
    }
    await logsSettle();
    expect(runs(jobId) + runs(`${jobId}-b`)).toBe(0);
    expect(await balance(payer.address)).toBe(payerBefore);
    await expectCharged(before, 0);

    await kit!.restart(); // same port, empty
    redisDown = false;
    const restarted = Date.now();
    for (const server of servers())
      await waitFor(`${server.url}/health back to 200`, 15_000, async () => {
        return (await fetch(`${server.url}/health`)).status === 200;
      });
    const resumedMs = Date.now() - restarted;

    // The 503 said "nothing was run or charged; retry": the same authorization now pays for its job.
    const retried = await fetch(`${a!.url}/execute`, post(job("hello", jobId), paid(header)));
    expect(retried.status, await retried.clone().text()).toBe(200);
    const fresh = await fetch(`${b!.url}/execute`, post(job("hello", `${jobId}-b`), paid(other)));
    expect(fresh.status, await fresh.clone().text()).toBe(200);
    await expectMined(retried.headers.get("payment-response"));
    await expectMined(fresh.headers.get("payment-response"));
    await logsSettle();
    expect(runs(jobId)).toBe(1);
    expect(runs(`${jobId}-b`)).toBe(1);
    await expectCharged(before, 2);
    console.info(`redis outage: both instances healthy again ${resumedMs} ms after the restart`);
  });

  // Last: it kills instance A for good.
  it("an instance SIGKILLed mid-job: the other refuses the authorization (in use) until the lease ends, then runs and charges it once", async () => {
    const jobId = `killed-${Date.now()}`;
    const header = await authorize(b!.url, payers[3]!);
    const deadlineSeconds = 8;
    const before = await snapshot();

    const lost = fetch(
      `${a!.url}/execute`,
      post(job("slow:30000", jobId, deadlineSeconds), paid(header)),
    ).then(
      (r) => `answered ${r.status}`,
      () => "connection lost",
    );
    await waitFor("the slow handler starting on A", 20_000, () => runs(jobId, [a!]) === 1);
    a!.child.kill("SIGKILL");
    await a!.child;
    const killedAt = Date.now();
    expect(await lost).toBe("connection lost");

    // The same authorization and job_id (the first deadline will have passed by the time the lease
    // ends, so each retry carries a fresh one, and a quick input).
    const retry = () => fetch(`${b!.url}/execute`, post(job("hello", jobId, 20), paid(header)));
    const refused = await retry();
    expect(refused.status).toBe(402);
    const refusal = (await refused.json()) as { error_type: string; error: string };
    expect(refusal).toMatchObject({ status: "failed", error_type: "payment" });
    expect(refusal.error).toMatch(/in use/);

    const limit = killedAt + (deadlineSeconds + SETTLE_TIMEOUT_SECONDS + 25) * 1000;
    let accepted: Response | undefined;
    let refusals = 1;
    while (Date.now() < limit) {
      await sleep(1000);
      const res = await retry();
      if (res.status !== 402) {
        accepted = res;
        break;
      }
      const body = (await res.json()) as { error: string };
      expect(body.error).toMatch(/in use/); // never "already used": nothing was charged
      refusals += 1;
    }
    const freedMs = Date.now() - killedAt;
    expect(accepted, "the authorization was still in use at the limit").toBeDefined();
    expect(accepted!.status, await accepted!.clone().text()).toBe(200);
    expect(await accepted!.json()).toMatchObject({ output: { summary: "HELLO" } });
    await expectMined(accepted!.headers.get("payment-response"));

    await logsSettle();
    expect(runs(jobId, [a!])).toBe(1);
    expect(runs(jobId, [b!])).toBe(1);
    await expectCharged(before, 1);
    console.info(
      `killed instance: its reservation was taken over ${freedMs} ms after SIGKILL (${refusals} refusals "in use")`,
    );
  });
});
