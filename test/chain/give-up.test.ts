// A buyer who gives up (issue 26, findings 1 and 4) on a real chain: anvil with Circle's USDC and
// the real x402 facilitator. A POST /execute whose fetch is aborted while its job runs is not
// settled (the payee's balance and the nonce say so); the identical request with the same
// PAYMENT-SIGNATURE then settles it and gets the output, the handler having run once. The same
// payment and job_id with another input or capability is refused with nothing run or charged. An
// identical retry past the time window a new job needs still gets its answer. With two instances
// on one Redis, the retry may reach the other instance, and of two identical retries one settles.
// The identical retry may come over the other transport (POST /execute <-> MCP tools/call): the
// payment, capability and input identify it, not its job_id; still one settlement.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { generatePrivateKey, privateKeyToAddress, type PrivateKeyAccount } from "viem/accounts";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import type { Ledger } from "../../templates/runtime/ledger/ledger.js";
import { createRedisLedger } from "../../templates/runtime/ledger/redis/redis.js";
import type { AgentDefinition } from "../../templates/runtime/types.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import {
  b64,
  capability,
  captureLogger,
  job,
  listen,
  logText,
  nowSeconds,
  post,
  signAuthorization,
  unb64,
  type Running,
} from "../runtime/helpers.js";
import {
  asset,
  chainId,
  domain,
  facilitatorUrl,
  firstOffer,
  rpcUrl,
  signOffer,
} from "./context.js";
import { freshPayer, nonceUsed, usdcBalance } from "./usdc.js";

const PRICE = 10_000n; // 0.01 USDC

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !condition(); await sleep(25))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

const textSchema = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: { text: { type: "string" }, ms: { type: "integer", minimum: 0 } },
} as const;
const outputSchema = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: { text: { type: "string" } },
} as const;

/** `slow` waits `ms` then echoes; `other` echoes at once. Both count their runs. */
function slowAgent(runs: Record<string, number>): AgentDefinition {
  const run = (name: string) => async (input: any) => {
    runs[name] = (runs[name] ?? 0) + 1;
    await sleep(input.ms ?? 0);
    return { text: `${name}: ${input.text}` };
  };
  return {
    name: "give-up",
    version: "1.0.0",
    description: "buyers who give up",
    capabilities: {
      slow: capability("slow", String(PRICE), textSchema, outputSchema, run("slow")),
      other: capability("other", String(PRICE), textSchema, outputSchema, run("other")),
    },
  };
}

interface Instance {
  app: Running;
  logger: ReturnType<typeof captureLogger>;
}

async function startInstance(
  agent: AgentDefinition,
  payTo: `0x${string}`,
  ledger?: Ledger,
  env: Record<string, string> = {},
): Promise<Instance> {
  const logger = captureLogger();
  const app = await listen(
    createApp(agent, {
      devMode: false,
      env,
      logger,
      ...(ledger && { ledger }),
      payment: { payTo, network: "base-sepolia", asset, facilitatorUrl },
    }),
  );
  return { app, logger };
}

/** A v2 PAYMENT-SIGNATURE for `payTo`'s offer, signed by `payer` (a real EIP-3009 authorization). */
async function pay(url: string, payer: PrivateKeyAccount, validBefore?: number) {
  const accepted = await firstOffer(url, job("slow", { text: "how do I pay?" }));
  return await signOffer(payer, accepted, {
    value: String(PRICE),
    ...(validBefore === undefined ? {} : { validBefore: String(validBefore) }),
  });
}

/** Whether the instance's job has ended: held for a retry, or (the old behaviour) settled. */
const jobEnded = (i: Instance) => () =>
  /caller gone before settlement|payment settled/.test(logText(i.logger));

/** Sends a paid POST /execute and aborts it once its handler has started (the buyer gives up). */
async function giveUp(url: string, body: unknown, header: string, started: () => boolean) {
  const abort = new AbortController();
  const request = fetch(`${url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", "payment-signature": header },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  request.catch(() => undefined);
  await until(started, "the handler to start");
  abort.abort();
  await expect(request).rejects.toThrow(/abort/i);
}

/**
 * A fresh payer pays `instance` for a slow job (`text`, `ms`) and gives up once its handler started
 * (`runs.slow === 1`): once the job ended, nothing was charged to `payTo`. The payment, job and balance.
 */
async function paidAndGaveUp(
  instance: Instance,
  runs: Record<string, number>,
  payTo: `0x${string}`,
  text: string,
  ms: number,
) {
  const payer = await freshPayer(rpcUrl, asset, 2n * PRICE);
  const { header, nonce } = await pay(instance.app.url, payer);
  const body = job("slow", { text, ms });
  const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);

  await giveUp(instance.app.url, body, header, () => runs.slow === 1);
  await until(jobEnded(instance), "the job's end");
  expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);
  return { payer, header, nonce, body, payeeBefore };
}

/**
 * One instance of the slow agent selling to `payTo` with `env`, started before the describe's tests (handed
 * to `started`) and stopped after them.
 */
function oneInstance(
  runs: Record<string, number>,
  payTo: `0x${string}`,
  env: Record<string, string>,
  started: (one: Instance) => void,
): void {
  let one: Instance | undefined;
  beforeAll(async () => {
    one = await startInstance(slowAgent(runs), payTo, undefined, env);
    started(one);
  });
  afterAll(() => one?.app.close());
}

describe("a POST /execute buyer who gives up (one instance)", () => {
  const runs: Record<string, number> = {};
  const payTo = privateKeyToAddress(generatePrivateKey());
  let one: Instance;
  const metricsToken = "a-long-enough-metrics-token";
  oneInstance(runs, payTo, { METRICS_TOKEN: metricsToken }, (started) => (one = started));

  it("is not charged; the identical retry settles once and gets the output without a second run", async () => {
    const { payer, header, nonce, body, payeeBefore } = await paidAndGaveUp(
      one,
      runs,
      payTo,
      "gone",
      1500,
    );
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(false);
    const metrics = await fetch(`${one.app.url}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    expect(await metrics.text()).toContain(
      'agent_jobs_total{capability="slow",outcome="caller_gone"} 1',
    );

    // The same payment and job_id for another input, or another capability: refused, nothing run.
    for (const task of [
      { capability: "slow", input: { text: "something else" } },
      { capability: "other", input: { text: "gone", ms: 1500 } },
    ]) {
      const refused = await post(one.app.url, { ...body, task }, { "payment-signature": header });
      expect(refused.status, refused.text).toBe(402);
      expect(refused.body.error).toMatch(
        /job_id "job-[0-9a-f]+" was already used .*another request/,
      );
    }
    expect(runs).toEqual({ slow: 1 });
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);

    // The identical request: settled now, the stored output, no second run.
    const retry = await post(one.app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.output).toEqual({ text: "slow: gone" });
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({ success: true });
    expect(runs).toEqual({ slow: 1 });
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(true);

    // Once more: the same answer from the ledger, nothing more charged.
    const again = await post(one.app.url, body, { "payment-signature": header });
    expect(again.status).toBe(200);
    expect(again.text).toBe(retry.text);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    expect(runs).toEqual({ slow: 1 });
  });

  it("a settled job's identical retry past the time window a new job needs still gets its answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    // Valid for the job (deadline + 15 s to settle) with 2 s to spare, not 6 s later.
    const deadline = nowSeconds() + 3;
    const { header } = await pay(one.app.url, payer, deadline + 15 + 2);
    const body = job("slow", { text: "kept" }, { deadline });
    const first = await post(one.app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(200);
    const payee = await usdcBalance(rpcUrl, asset, payTo);

    await sleep(6_000);
    const retry = await post(one.app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get("payment-response")).toBe(first.headers.get("payment-response"));
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payee);
    // A new job with that payment would be refused now: it expires too early.
    const other = await post(one.app.url, job("slow", { text: "new" }), {
      "payment-signature": header,
    });
    expect(other.status).toBe(402);
  }, 30_000);

  it("a settled job's job_id with the same payment but another input: refused, nothing run or charged", async () => {
    const payer = await freshPayer(rpcUrl, asset, 2n * PRICE);
    const { header } = await pay(one.app.url, payer);
    const body = job("other", { text: "first" });
    const first = await post(one.app.url, body, { "payment-signature": header });
    expect(first.status, first.text).toBe(200);
    const payee = await usdcBalance(rpcUrl, asset, payTo);
    const runsBefore = { ...runs };
    const changed = await post(
      one.app.url,
      { ...body, task: { capability: "other", input: { text: "second" } } },
      { "payment-signature": header },
    );
    expect(changed.status, changed.text).toBe(402);
    expect(changed.body.error).toMatch(/already used .*another request/);
    expect(changed.text).not.toContain("first");
    expect(runs).toEqual(runsBefore);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payee);
  });
});

/**
 * Two instances of the slow agent, each with its own ledger client on one redis-server, started
 * before the describe's tests (handed to `started`) and stopped after them.
 */
function twoInstancesOnOneRedis(
  prefix: string,
  runs: Record<string, number>,
  payTo: `0x${string}`,
  env: Record<string, string>,
  started: (a: Instance, b: Instance) => void,
): void {
  let redis: RedisServer;
  const ledgers: Ledger[] = [];
  const instances: Instance[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const keyPrefix = `${prefix}:${randomUUID()}:`;
    for (let i = 0; i < 2; i++) {
      ledgers.push(createRedisLedger({ url: redis.url, keyPrefix }));
      instances.push(await startInstance(slowAgent(runs), payTo, ledgers[i]!, env));
    }
    started(instances[0]!, instances[1]!);
  });
  afterAll(async () => {
    for (const instance of instances) await instance.app.close();
    for (const ledger of ledgers) await ledger.close();
    await redis?.stop();
  });
}

describe("a POST /execute buyer who gives up, two instances on one Redis", () => {
  const runs: Record<string, number> = {};
  const payTo = privateKeyToAddress(generatePrivateKey());
  let a: Instance;
  let b: Instance;
  twoInstancesOnOneRedis("give-up", runs, payTo, {}, (...two) => ([a, b] = two));

  it("the other instance settles the held answer once, even for two identical retries at once", async () => {
    const { payer, header, nonce, body, payeeBefore } = await paidAndGaveUp(
      a,
      runs,
      payTo,
      "shared",
      1000,
    );

    // On b, another request with this payment and job_id: refused, not run.
    const changed = await post(
      b.app.url,
      { ...body, task: { capability: "slow", input: { text: "changed" } } },
      { "payment-signature": header },
    );
    expect(changed.status).toBe(402);

    const retries = await Promise.all(
      [a, b].map((i) => post(i.app.url, body, { "payment-signature": header })),
    );
    const answered = retries.filter((r) => r.status === 200);
    expect(answered.length, retries.map((r) => r.text).join("\n")).toBeGreaterThanOrEqual(1);
    for (const r of answered) expect(r.body.output).toEqual({ text: "slow: shared" });
    for (const r of retries.filter((r) => r.status !== 200))
      expect(r.body.error, r.text).toMatch(/in use/);
    const last = await post(b.app.url, body, { "payment-signature": header });
    expect(last.status, last.text).toBe(200);
    expect(last.body.output).toEqual({ text: "slow: shared" });
    expect(runs).toEqual({ slow: 1 });
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(true);
  });
});

// ---- MCP: the official SDK client, and the official x402 client's payment ----

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "give-up-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  await client.listTools(); // the client checks every result against the tools' output schemas
  return client;
}

/** The tool call over a new MCP connection to `url`, checked to have succeeded with `output`. */
async function succeededTool(
  url: string,
  params: Parameters<Client["callTool"]>[0],
  output: unknown,
) {
  const client = await connect(url);
  try {
    const result = await client.callTool(params);
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toEqual(output);
    return result;
  } finally {
    await client.close();
  }
}

async function paymentRequired(
  mcp: Client,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  const unpaid = await mcp.callTool({ name, arguments: args, ...(meta && { _meta: meta }) });
  expect(unpaid.isError).toBe(true);
  return unpaid.structuredContent as Record<string, any>;
}

/** The official x402 client's PaymentPayload for a tool's PaymentRequired. */
async function x402Pay(payer: PrivateKeyAccount, required: unknown) {
  const client = new x402Client()
    .register(`eip155:${chainId}`, new ExactEvmScheme(toClientEvmSigner(payer)))
    .setSpendControls(false);
  return client.createPaymentPayload(required as Parameters<typeof client.createPaymentPayload>[0]);
}

describe("an MCP buyer who gives up, or waits with progress", () => {
  const runs: Record<string, number> = {};
  const payTo = privateKeyToAddress(generatePrivateKey());
  let one: Instance;
  const env = { MCP_DEADLINE_SECONDS: "30", MCP_PROGRESS_SECONDS: "1" };
  oneInstance(runs, payTo, env, (started) => (one = started));

  it("a client that times out and closes is not charged; the identical retry settles once, no second run", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const args = { text: "mcp", ms: 1500 };
    const gone = await connect(one.app.url);
    const payment = await x402Pay(payer, await paymentRequired(gone, "slow", args));
    const params = { name: "slow", arguments: args, _meta: { "x402/payment": payment } };
    const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);

    await expect(gone.callTool(params, undefined, { timeout: 300 })).rejects.toThrow(/timed out/i);
    await gone.close();
    await until(jobEnded(one), "the job's end");
    expect(runs.slow).toBe(1);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);
    const { from, nonce } = (payment.payload as any).authorization;
    expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(false);

    const result = await succeededTool(one.app.url, params, { text: "slow: mcp" });
    expect((result._meta as any)["x402/payment-response"]).toMatchObject({ success: true });
    expect(runs.slow).toBe(1);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(true);
  });

  it("a client that cancels its call, its connection still open, is not charged; the identical retry runs and settles once", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const args = { text: "cancelled", ms: 1500 };
    const mcp = await connect(one.app.url);
    try {
      const payment = await x402Pay(payer, await paymentRequired(mcp, "slow", args));
      const params = { name: "slow", arguments: args, _meta: { "x402/payment": payment } };
      const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);
      const runsBefore = runs.slow ?? 0;
      // The official client's timeout sends notifications/cancelled and keeps the transport open.
      await expect(mcp.callTool(params, undefined, { timeout: 300 })).rejects.toThrow(/timed out/i);
      await new Promise((resolve) => setTimeout(resolve, 4_000)); // past the handler's 1.5 s
      expect(runs.slow).toBe(runsBefore + 1);
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);
      const { from, nonce } = (payment.payload as any).authorization;
      expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(false);

      const result = await mcp.callTool(params);
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
      expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(true);
    } finally {
      await mcp.close();
    }
  });

  it("a call with a progressToken gets progress notifications, so a resetTimeoutOnProgress client waits for a long job", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const args = { text: "patient", ms: 3500 };
    const mcp = await connect(one.app.url);
    try {
      const payment = await x402Pay(payer, await paymentRequired(mcp, "slow", args));
      const progress: unknown[] = [];
      const result = await mcp.callTool(
        { name: "slow", arguments: args, _meta: { "x402/payment": payment } },
        undefined,
        { timeout: 1500, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) },
      );
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ text: "slow: patient" });
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress[0]).toMatchObject({ progress: 0, total: 30 });
    } finally {
      await mcp.close();
    }
  });

  it("an identical tools/call retry after now + MCP_DEADLINE_SECONDS + 15 > validBefore gets the cached answer", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const args = { text: "late" };
    const mcp = await connect(one.app.url);
    try {
      const required = await paymentRequired(mcp, "slow", args);
      // Valid for a job due in 30 s plus 15 s to settle, with 3 s to spare.
      const signed = await signAuthorization(payer, {
        to: payTo,
        value: String(PRICE),
        domain,
        validBefore: String(nowSeconds() + 30 + 15 + 3),
      });
      const payment = {
        x402Version: 2,
        resource: required.resource,
        accepted: required.accepts[0],
        payload: signed,
      };
      const params = { name: "slow", arguments: args, _meta: { "x402/payment": payment } };
      const first = await mcp.callTool(params);
      expect(first.isError, JSON.stringify(first)).toBeFalsy();
      const payee = await usdcBalance(rpcUrl, asset, payTo);

      await sleep(4_000);
      const retry = await mcp.callTool(params);
      expect(retry.isError, JSON.stringify(retry)).toBeFalsy();
      expect(retry.structuredContent).toEqual(first.structuredContent);
      expect((retry._meta as any)["x402/payment-response"]).toEqual(
        (first._meta as any)["x402/payment-response"],
      );
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payee);
    } finally {
      await mcp.close();
    }
  }, 30_000);
});

describe("a long paid MCP job: a deadline beyond MCP_DEADLINE_SECONDS, with progress", () => {
  const runs: Record<string, number> = {};
  const payTo = privateKeyToAddress(generatePrivateKey());
  let one: Instance;
  // The default deadline (2 s) is shorter than the job (4 s): the caller sets its own.
  const env = { MCP_DEADLINE_SECONDS: "2", MCP_PROGRESS_SECONDS: "1" };
  oneInstance(runs, payTo, env, (started) => (one = started));

  it("_meta.deadline on both calls: offered, paid and run to it; progress keeps a 1.5 s-timeout client waiting; charged once", async () => {
    const payer = await freshPayer(rpcUrl, asset, PRICE);
    const args = { text: "long", ms: 4000 };
    const deadline = nowSeconds() + 20;
    const mcp = await connect(one.app.url);
    try {
      // The offer covers the caller's deadline (plus the time to settle), not MCP_DEADLINE_SECONDS.
      const required = await paymentRequired(mcp, "slow", args, { deadline });
      expect(required.accepts[0].maxTimeoutSeconds).toBeGreaterThanOrEqual(20);
      const payment = await x402Pay(payer, required);
      const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);
      const progress: Array<{ progress: number; total?: number }> = [];
      const result = await mcp.callTool(
        { name: "slow", arguments: args, _meta: { "x402/payment": payment, deadline } },
        undefined,
        { timeout: 1500, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) },
      );
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ text: "slow: long" });
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect(progress[0]!.total).toBeGreaterThanOrEqual(19); // the job's deadline, not 2 s
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
      expect(runs.slow).toBe(1);
    } finally {
      await mcp.close();
    }
  }, 30_000);
});

// ---- The identical retry over the other transport (issue 26): POST /execute <-> MCP tools/call ----

/** How many jobs `i` has held for an identical retry (their caller left before settlement). */
const heldCount = (i: Instance) =>
  (logText(i.logger).match(/caller gone before settlement/g) ?? []).length;

/** The receipt's transaction of a POST /execute answer, or of a tool result. */
const httpTx = (r: { headers: Headers }) => unb64(r.headers.get("payment-response")!).transaction;
const toolTx = (r: { _meta?: unknown }) =>
  (r._meta as Record<string, any>)["x402/payment-response"]?.transaction;

describe("the identical retry over the other transport, two instances on one Redis", () => {
  const runs: Record<string, number> = {};
  const payTo = privateKeyToAddress(generatePrivateKey());
  let a: Instance;
  let b: Instance;
  const env = { MCP_DEADLINE_SECONDS: "30" };
  twoInstancesOnOneRedis("cross", runs, payTo, env, (...two) => ([a, b] = two));

  it("gave up on POST /execute: the tools/call retry (other instance) gets the output, charged once; /execute then gets the cached answer and receipt", async () => {
    const payer = await freshPayer(rpcUrl, asset, 2n * PRICE);
    const { header, nonce } = await pay(a.app.url, payer);
    const args = { text: "to mcp", ms: 1000 };
    const body = job("slow", args);
    const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);
    const before = runs.slow ?? 0;
    const held = heldCount(a);

    await giveUp(a.app.url, body, header, () => runs.slow === before + 1);
    await until(() => heldCount(a) > held, "the job's end");
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);

    // The same payment over MCP (no job_id: the tool call derives its own), another input: refused.
    const mcp = await connect(b.app.url);
    try {
      const payment = unb64(header);
      const changed = await mcp.callTool({
        name: "slow",
        arguments: { text: "changed" },
        _meta: { "x402/payment": payment },
      });
      expect(changed.isError).toBe(true);
      // The identical request, once over MCP and once more over /execute at the same time: one settles.
      const params = {
        name: "slow",
        arguments: args,
        _meta: { "x402/payment": payment },
      };
      const [tool, http] = await Promise.all([
        mcp.callTool(params),
        post(a.app.url, body, { "payment-signature": header }),
      ]);
      const answered = [!tool.isError, http.status === 200].filter(Boolean).length;
      expect(answered, `${JSON.stringify(tool)}\n${http.text}`).toBeGreaterThanOrEqual(1);
      if (http.status !== 200) expect(http.body.error).toMatch(/in use/);
      const result = tool.isError ? await mcp.callTool(params) : tool;
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ text: "slow: to mcp" });
      expect(runs.slow).toBe(before + 1);
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
      expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(true);

      // Back on POST /execute: the cached answer under its own job_id, with the same receipt.
      const cached = await post(a.app.url, body, { "payment-signature": header });
      expect(cached.status, cached.text).toBe(200);
      expect(cached.body).toMatchObject({ job_id: body.job_id, output: { text: "slow: to mcp" } });
      expect(httpTx(cached)).toBe(toolTx(result));
      expect(runs.slow).toBe(before + 1);
      expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    } finally {
      await mcp.close();
    }
  });

  it("gave up on a tools/call: the POST /execute retry (other instance) gets the output, charged once; MCP then gets the cached answer and receipt", async () => {
    const payer = await freshPayer(rpcUrl, asset, 2n * PRICE);
    const args = { text: "to execute", ms: 1500 };
    const gone = await connect(b.app.url);
    const payment = await x402Pay(payer, await paymentRequired(gone, "slow", args));
    const params = { name: "slow", arguments: args, _meta: { "x402/payment": payment } };
    const { from, nonce } = (payment.payload as any).authorization;
    const payeeBefore = await usdcBalance(rpcUrl, asset, payTo);
    const before = runs.slow ?? 0;
    const held = heldCount(b);

    await expect(gone.callTool(params, undefined, { timeout: 300 })).rejects.toThrow(/timed out/i);
    await gone.close();
    await until(() => heldCount(b) > held, "the job's end");
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore);

    // The same payment as a PAYMENT-SIGNATURE, for another input: refused, nothing run or charged.
    const header = b64(payment);
    const changed = await post(a.app.url, job("slow", { text: "changed" }), {
      "payment-signature": header,
    });
    expect(changed.status, changed.text).toBe(402);
    // The identical request over POST /execute, with a job_id of its own: settled now, once.
    const body = job("slow", args);
    const retry = await post(a.app.url, body, { "payment-signature": header });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body).toMatchObject({ job_id: body.job_id, output: { text: "slow: to execute" } });
    expect(runs.slow).toBe(before + 1);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
    expect(await nonceUsed(rpcUrl, asset, from, nonce)).toBe(true);

    // Back over MCP: the cached answer with the same receipt, nothing more charged.
    const result = await succeededTool(b.app.url, params, { text: "slow: to execute" });
    expect(toolTx(result)).toBe(httpTx(retry));
    expect(runs.slow).toBe(before + 1);
    expect(await usdcBalance(rpcUrl, asset, payTo)).toBe(payeeBefore + PRICE);
  });
});
