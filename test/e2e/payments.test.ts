// Real payments end to end: a generated server, built and started in production mode, is paid by the official
// x402 clients (v2 `@x402/fetch`, v1 `x402-fetch`) on a local anvil chain with Circle's USDC, and settles
// either itself (direct route) or through a real x402 facilitator. Balances are read back from the chain.
import { rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { wrapFetchWithPayment as wrapV2, x402Client } from "@x402/fetch";
import { createWalletClient, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { wrapFetchWithPayment as wrapV1 } from "x402-fetch";
import { PAYER_KEYS, PAYEE, SETTLER_KEY } from "../chain/accounts.js";
import { anvil, authorize, balance, chain, productionEnv, publicClient } from "./chain.js";
import {
  decodeHeader,
  startServer,
  post,
  summarizeJob,
  copyProject,
  buildProject,
} from "./helpers.js";

const shared = inject("projectDir");
/** The payer of the jobs paid by hand here (PAYER_KEYS[3]). */
const payer3 = privateKeyToAccount(PAYER_KEYS[3]!);

// A handler whose behaviour the caller picks, to run paid jobs that succeed, throw, time out or lie.
const HANDLER = `import type { SummarizeInput, SummarizeOutput } from "../generated/types.js";
import type { HandlerContext } from "../runtime/types.js";

export default async function summarize(input: SummarizeInput, ctx: HandlerContext): Promise<SummarizeOutput> {
  ctx.logger.info("summarize started");
  if (input.text === "throw") throw new Error("boom");
  if (input.text === "slow") await new Promise((resolve) => setTimeout(resolve, 10_000));
  if (input.text === "invalid") return { summary: 42 } as unknown as SummarizeOutput;
  return { summary: input.text.toUpperCase() };
}
`;

let projectDir = "";
beforeAll(async () => {
  projectDir = await copyProject(shared, "create-agent-pay-");
  await writeFile(join(projectDir, "src/capabilities/summarize.ts"), HANDLER);
  await buildProject(projectDir);
});
afterAll(async () => {
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

const baseEnv = () => productionEnv(PAYEE);

const job = summarizeJob;

/** The lines of `server`'s log where the handler started a job whose id has `id` in it. */
const handlerStarts = (server: { output(): string }, id: string) =>
  server
    .output()
    .split("\n")
    .filter((line) => line.includes("summarize started") && line.includes(id));

function v2Client(key: `0x${string}`) {
  const client = new x402Client()
    .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key))))
    .setSpendControls(false);
  return wrapV2(fetch, client);
}
function v1Client(key: `0x${string}`) {
  const wallet = createWalletClient({
    account: privateKeyToAccount(key),
    chain: anvil,
    transport: http(chain.rpcUrl),
  });
  // x402-fetch's Signer type is compiled against its own view of viem's client types; at run time a viem
  // wallet client (what its docs pass) is what it uses.
  return wrapV1(fetch, wallet.extend(publicActions) as unknown as Parameters<typeof wrapV1>[1]);
}

async function expectMinedTransfer(receiptHeader: string | null) {
  const receipt = decodeHeader<{
    success: boolean;
    transaction: `0x${string}`;
    network: string;
    payer: string;
  }>(receiptHeader);
  expect(receipt.success).toBe(true);
  const mined = await publicClient.getTransactionReceipt({ hash: receipt.transaction });
  expect(mined.status).toBe("success");
  return receipt;
}

describe.each([
  ["direct settlement (X402_SETTLER_KEY)", () => ({ X402_SETTLER_KEY: SETTLER_KEY })],
  [
    "a real facilitator (X402_FACILITATOR_URL)",
    () => ({ X402_FACILITATOR_URL: chain.facilitatorUrl }),
  ],
])("a generated server settling through %s", (_route, routeEnv) => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(projectDir, { ...baseEnv(), ...routeEnv() });
  });
  afterAll(() => server.stop());

  it("is paid by @x402/fetch (x402 v2): the payee gains exactly the price, the receipt names the mined transfer", async () => {
    const payer = privateKeyToAccount(PAYER_KEYS[0]!);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const res = await v2Client(PAYER_KEYS[0]!)(
      `${server.url}/execute`,
      post(job("hello", `v2-${Date.now()}`)),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { output: unknown }).output).toEqual({ summary: "HELLO" });
    const receipt = await expectMinedTransfer(res.headers.get("payment-response"));
    expect(receipt.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
    expect(await balance(payer.address)).toBe(payerBefore - 10_000n);
  });

  it("is paid by x402-fetch (x402 v1, X-PAYMENT): the payee gains exactly the price", async () => {
    const payeeBefore = await balance(PAYEE);
    const res = await v1Client(PAYER_KEYS[1]!)(
      `${server.url}/execute`,
      post(job("hello", `v1-${Date.now()}`)),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    await expectMinedTransfer(res.headers.get("x-payment-response"));
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
  });

  it.each([
    ["throws", "throw", 500],
    ["times out", "slow", 408],
    ["returns invalid output", "invalid", 500],
  ])("a job that %s moves no USDC", async (_what, text, status) => {
    const payer = privateKeyToAccount(PAYER_KEYS[2]!);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer.address)];
    const res = await v2Client(PAYER_KEYS[2]!)(
      `${server.url}/execute`,
      post(job(text, `fail-${text}-${Date.now()}`, 3)),
    );
    expect(res.status).toBe(status);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await balance(PAYEE)).toBe(payeeBefore);
    expect(await balance(payer.address)).toBe(payerBefore);
  });

  it("20 concurrent jobs on one authorization: one handler run, one transfer; a later reuse gets 402", async () => {
    const tag = `race-${Date.now()}`;
    const header = await authorize(server.url, job("hello", tag), payer3);
    const payeeBefore = await balance(PAYEE);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(
          `${server.url}/execute`,
          post(job("hello", `${tag}-${i}`), { "payment-signature": header }),
        ),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    expect(handlerStarts(server, tag)).toHaveLength(1);
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);

    const reuse = await fetch(
      `${server.url}/execute`,
      post(job("hello", `${tag}-later`), { "payment-signature": header }),
    );
    expect(reuse.status).toBe(402);
    expect(await reuse.json()).toMatchObject({ error_type: "payment" });
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
  });

  it("an identical retry of a paid job (same job_id, same authorization) gets the same result, run and charged once", async () => {
    const jobId = `retry-${Date.now()}`;
    const header = await authorize(server.url, job("hello", jobId), payer3);
    const payeeBefore = await balance(PAYEE);
    const body = job("hello", jobId);
    const paid = await fetch(`${server.url}/execute`, post(body, { "payment-signature": header }));
    expect(paid.status).toBe(200);
    const again = await fetch(`${server.url}/execute`, post(body, { "payment-signature": header }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await paid.json());
    const receipts = [paid, again].map(
      (r) => decodeHeader<{ transaction: string }>(r.headers.get("payment-response")).transaction,
    );
    expect(receipts[1]).toBe(receipts[0]);
    expect(handlerStarts(server, jobId)).toHaveLength(1);
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
  });
});
