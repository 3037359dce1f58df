// Paid A2A tasks on a real chain (anvil with Circle's FiatTokenV2_2, the reference x402 facilitator):
// the official @a2a-js/sdk 1.3.0 client made from the agent card's URL (A2A 1.0, over JSON-RPC and
// over HTTP+JSON) and raw A2A 0.3 `message/send` calls, paying in band with a2a-x402 v0.2 (the
// PaymentPayload made by the official x402 client from the task's `x402.payment.required`). Two
// instances share one redis-server (the ledger and the tasks), so a task's paying turn may land on
// the other one. Balances are read back from the chain: the payee gets the price once; the same
// authorization cannot pay for a POST /execute job, nor, paid over HTTP+JSON, a JSON-RPC task; a
// handler that throws, a bad output, a missed deadline and a caller gone before settlement move
// nothing (the caller gone gets its result when it sends the payment again); two payments sent at
// once on one task run one job and are charged once (a2a/claim.ts).
import { randomUUID } from "node:crypto";
import { ClientFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { x402Client } from "@x402/core/client";
import { ExactEvmScheme, toClientEvmSigner } from "@x402/evm";
import { generatePrivateKey, privateKeyToAddress, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { createApp } from "../../templates/runtime/app.js";
import type { AgentDefinition } from "../../templates/runtime/types.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";
import { withDiscovery } from "../runtime/discovery-fixture.js";
import {
  b64,
  capability,
  captureLogger,
  countedCapability,
  echoAgent,
  job,
  listen,
  nowSeconds,
  post,
  type Running,
  TEXT_SCHEMA,
  unb64,
} from "../runtime/helpers.js";
import { dataMessage, rpc03 } from "../runtime/a2a-helpers.js";
import { freshPayer, nonceUsed, usdcBalance } from "./usdc.js";

const { rpcUrl, asset, facilitatorUrl } = inject("chain");
const PRICE = 10_000n; // 0.01 USDC
const payTo = privateKeyToAddress(generatePrivateKey());
const runs: Record<string, number> = {};
/** Why the slow handler's ctx.signal aborted, each time it did. */
const aborts: string[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const agent = withDiscovery(
  echoAgent("a2a-chain", "paid A2A tasks on chain", PRICE, runs, {
    throws: countedCapability("throws", PRICE, runs, async () => {
      throw new Error("handler crashed");
    }),
    bad_output: countedCapability("bad_output", PRICE, runs, async () => ({ text: 42 })),
    slow: capability("slow", String(PRICE), TEXT_SCHEMA, TEXT_SCHEMA, async (input, ctx) => {
      runs.slow = (runs.slow ?? 0) + 1;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Number((input as { text: string }).text));
        ctx.signal.addEventListener("abort", () => {
          aborts.push(String(ctx.signal.reason));
          clearTimeout(timer);
          resolve();
        });
      });
      return { text: "slept" };
    }),
  }),
);

let redis: RedisServer;
const servers: Running[] = [];
let payer: PrivateKeyAccount;
const EXTENSIONS = { "A2A-Extensions": X402_EXTENSION_URI };

let a: Running;
let b: Running;
/** An instance serving `served` in production, its ledger on the shared Redis under `prefix`. */
async function instance(served: AgentDefinition, prefix: string): Promise<Running> {
  const app = createApp(served, {
    devMode: false,
    env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix },
    logger: captureLogger(),
    payment: { payTo, network: "base-sepolia", asset, facilitatorUrl },
  });
  const running = await listen(app);
  servers.push(running);
  return running;
}

beforeAll(async () => {
  redis = await startRedis();
  payer = await freshPayer(rpcUrl, asset, 1_000_000n);
  const prefix = `a2a-${randomUUID()}:`;
  a = await instance(agent, prefix);
  b = await instance(agent, prefix);
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await redis?.stop();
});

const balances = async () => ({
  payer: await usdcBalance(rpcUrl, asset, payer.address),
  payee: await usdcBalance(rpcUrl, asset, payTo),
});

/** The payee got the price and the payer paid it, exactly once, since `before`: the balances now. */
async function chargedOnce(before: Awaited<ReturnType<typeof balances>>) {
  const after = await balances();
  expect(after.payee - before.payee).toBe(PRICE);
  expect(before.payer - after.payer).toBe(PRICE);
  return after;
}

/** The official x402 client's PaymentPayload for a task's PaymentRequired. */
async function pay(required: unknown): Promise<any> {
  const client = new x402Client()
    .register("eip155:84532", new ExactEvmScheme(toClientEvmSigner(payer)))
    .setSpendControls(false);
  return client.createPaymentPayload(required as Parameters<typeof client.createPaymentPayload>[0]);
}

/** A first turn over 0.3: the input-required task. */
async function offered(url: string, capability: string, text: string, metadata = {}) {
  const message = {
    kind: "message",
    messageId: randomUUID(),
    role: "user",
    parts: [{ kind: "data", data: { capability, input: { text } } }],
    metadata,
  };
  const { body } = await rpc03(url, "message/send", { message }, EXTENSIONS);
  expect(body.result.status.state).toBe("input-required");
  return body.result;
}

/** A paying turn over 0.3 on `task`. */
async function paying(url: string, task: any, payload: unknown, signal?: AbortSignal) {
  return (await paying03(url, task, payload, signal)).result;
}

/** A paying turn over 0.3 on `task`: the whole JSON-RPC answer (result or error). */
async function paying03(
  url: string,
  task: any,
  payload: unknown,
  signal?: AbortSignal,
  configuration?: Record<string, unknown>,
  parts: unknown[] = [{ kind: "text", text: "paying" }],
) {
  const message = {
    kind: "message",
    messageId: randomUUID(),
    role: "user",
    taskId: task.id,
    contextId: task.contextId,
    parts,
    metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
  };
  const res = await fetch(`${url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", ...EXTENSIONS },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "message/send",
      params: { message, ...(configuration && { configuration }) },
    }),
    ...(signal && { signal }),
  });
  return (await res.json()) as any;
}

/** A 1.0 paying turn on `task` (the SDK's shape): a2a-x402's payment-submitted and the payload. */
const payingMessage = (task: any, payload: unknown) =>
  dataMessage(
    {},
    {
      taskId: task.id,
      contextId: task.contextId,
      metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": payload },
    },
  );

const required03 = (task: any) => task.status.message.metadata["x402.payment.required"];

describe("a paid A2A task", () => {
  it("SDK client from the card: the HTTP 402's offer, paid on the other instance: completed + receipt, the price once; the authorization then pays no /execute job", async () => {
    const client = await new ClientFactory().createFromUrl(a.url);
    const options = { serviceParameters: EXTENSIONS } as any;
    const deadline = nowSeconds() + 120;
    const first: any = await client.sendMessage(
      {
        message: dataMessage(
          { capability: "echo", input: { text: "paid" } },
          { metadata: { deadline } },
        ),
      } as any,
      options,
    );
    expect(first.status.state).toBe(6); // TASK_STATE_INPUT_REQUIRED
    const required = first.status.message.metadata["x402.payment.required"];
    expect(first.status.message.metadata["x402.payment.status"]).toBe("payment-required");
    // The same offer as POST /execute's 402 for the same job.
    const http = await post(a.url, job("echo", { text: "paid" }, { job_id: "x", deadline }));
    expect(http.status).toBe(402);
    const strip = (offer: any) =>
      offer.accepts.map(({ maxTimeoutSeconds: _, ...rest }: any) => rest);
    expect(strip(required)).toEqual(strip(unb64(http.headers.get("payment-required")!)));

    const before = await balances();
    const payload = await pay(required);
    // Turn 2 on the other instance: the task is in the shared Redis.
    const other = await new ClientFactory().createFromUrl(b.url);
    const done: any = await other.sendMessage(
      {
        message: payingMessage(first, payload),
      } as any,
      options,
    );
    expect(done.status.state).toBe(3); // COMPLETED
    expect(done.artifacts[0].parts[0].content.value).toEqual({ text: "echo: paid" });
    const meta = done.status.message.metadata;
    expect(meta["x402.payment.status"]).toBe("payment-completed");
    expect(meta["x402.payment.receipts"][0]).toMatchObject({
      success: true,
      network: "eip155:84532",
    });
    const after = await chargedOnce(before);
    expect(runs.echo).toBe(1);
    // GetTask from the first instance sees it completed.
    expect(((await client.getTask({ id: first.id } as any)) as any).status.state).toBe(3);

    // The same authorization for another job on POST /execute: refused, nothing run or moved.
    const reuse = await post(a.url, job("echo", { text: "other" }, { job_id: "y", deadline }), {
      "PAYMENT-SIGNATURE": b64(payload),
    });
    expect(reuse.status).toBe(402);
    expect(reuse.body.error).toMatch(/already used/);
    expect(runs.echo).toBe(1);
    expect(await balances()).toEqual(after);
  });

  it("over HTTP+JSON (the SDK's REST transport from the card, /a2a/rest): paid on the other instance, completed + receipt, the price once; the authorization then pays no JSON-RPC task", async () => {
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    const rest = (url: string) =>
      new ClientFactory({
        transports: [new RestTransportFactory({ fetchImpl: recording })],
      }).createFromUrl(url);
    const options = { serviceParameters: EXTENSIONS } as any;
    const first: any = await (
      await rest(a.url)
    ).sendMessage(
      { message: dataMessage({ capability: "echo", input: { text: "rest" } }) } as any,
      options,
    );
    expect(first.status.state).toBe(6); // TASK_STATE_INPUT_REQUIRED
    const required = first.status.message.metadata["x402.payment.required"];
    expect(required.resource.url).toBe(`${a.url}/a2a`); // the same resource as JSON-RPC's
    const before = await balances();
    const payload = await pay(required);
    const runsSoFar = runs.echo ?? 0;
    const done: any = await (
      await rest(b.url)
    ).sendMessage(
      {
        message: payingMessage(first, payload),
      } as any,
      options,
    );
    expect(done.status.state).toBe(3); // COMPLETED
    expect(done.artifacts[0].parts[0].content.value).toEqual({ text: "echo: rest" });
    expect(done.status.message.metadata["x402.payment.receipts"][0]).toMatchObject({
      success: true,
      network: "eip155:84532",
    });
    const after = await chargedOnce(before);
    expect(runs.echo).toBe(runsSoFar + 1);
    expect(urls).toEqual([`${a.url}/a2a/rest/message:send`, `${b.url}/a2a/rest/message:send`]);

    // The same authorization on a JSON-RPC task for the same job: not run, nothing moved.
    const other = await offered(a.url, "echo", "rest");
    const reuse = (await paying03(b.url, other, payload)).result;
    expect(reuse.status.state).toBe("failed");
    expect(reuse.status.message.metadata["x402.payment.error"]).toBe("DUPLICATE_NONCE");
    expect(JSON.stringify(reuse.status.message.parts)).toMatch(/already used for another job/);
    expect(runs.echo).toBe(runsSoFar + 1);
    expect(await balances()).toEqual(after);
  });

  it("raw 0.3 message/send, twice: completed with its receipt, charged once", async () => {
    const task = await offered(b.url, "echo", "v03");
    const before = await balances();
    const done = await paying(a.url, task, await pay(required03(task)));
    expect(done.status.state).toBe("completed");
    expect(done.artifacts[0].parts[0]).toMatchObject({ kind: "data", data: { text: "echo: v03" } });
    expect(done.status.message.metadata["x402.payment.receipts"]).toHaveLength(1);
    expect((await balances()).payee - before.payee).toBe(PRICE);
  });

  it.each([
    ["throws", "x", /internal/],
    ["bad_output", "x", /internal/],
    ["slow", "6000", /deadline/],
  ])(
    "a job that fails (%s): failed, nothing moved, the authorization unused",
    async (name, text, why) => {
      const deadline = nowSeconds() + (name === "slow" ? 4 : 60);
      const task = await offered(a.url, name, text, { deadline });
      const before = await balances();
      const payload = await pay(required03(task));
      const done = await paying(b.url, task, payload);
      expect(done.status.state).toBe("failed");
      expect(JSON.stringify(done.status.message.parts)).toMatch(why);
      expect(done.status.message.metadata["x402.payment.error"]).toBeUndefined();
      expect(await balances()).toEqual(before);
      expect(
        await nonceUsed(rpcUrl, asset, payer.address, payload.payload.authorization.nonce),
      ).toBe(false);
    },
    30_000,
  );

  it("a job asked for as a text part holding its JSON (a text-only client): offered, paid on the other instance with the same text; the payment sent again is refused: run once, charged once", async () => {
    const job = JSON.stringify({ capability: "echo", input: { text: "as text" } });
    const parts = [{ kind: "text", text: job }];
    const first = { kind: "message", messageId: randomUUID(), role: "user", parts };
    const { body } = await rpc03(a.url, "message/send", { message: first }, EXTENSIONS);
    const task = body.result;
    expect(task.status.state, JSON.stringify(body)).toBe("input-required");
    expect(required03(task).accepts[0].amount).toBe(String(PRICE));
    const before = await balances();
    const runsSoFar = runs.echo ?? 0;
    const payload = await pay(required03(task));
    const paid = await paying03(b.url, task, payload, undefined, undefined, parts);
    const done = paid.result;
    expect(done, JSON.stringify(paid)).toBeDefined();
    expect(done.status.state).toBe("completed");
    expect(done.artifacts[0].parts[0].data).toEqual({ text: "echo: as text" });
    const resent = await paying03(a.url, task, payload, undefined, undefined, parts);
    // As for a data part: the task is final, so the same payment again is refused, nothing run or charged.
    expect(resent.error?.message, JSON.stringify(resent)).toMatch(
      /is completed: a task runs one job/,
    );
    expect(runs.echo).toBe(runsSoFar + 1);
    await chargedOnce(before);
  }, 30_000);

  it("a caller gone before settlement is not charged; the same payment sent again gets the result, charged once", async () => {
    const task = await offered(a.url, "slow", "1500");
    const before = await balances();
    const payload = await pay(required03(task));
    const gone = new AbortController();
    const cut = paying(a.url, task, payload, gone.signal).catch(() => "aborted");
    await sleep(400);
    gone.abort();
    expect(await cut).toBe("aborted");
    await sleep(2500); // the job ends; its settlement is not attempted
    expect(await balances()).toEqual(before);
    const runsSoFar = runs.slow;
    const again = await paying(b.url, task, payload);
    expect(again.status.state).toBe("completed");
    expect(again.artifacts[0].parts[0].data).toEqual({ text: "slept" });
    expect(runs.slow).toBe(runsSoFar); // the kept result: not run again
    expect((await balances()).payee - before.payee).toBe(PRICE);
  }, 30_000);

  it("two payments sent at once on one task, to two instances: one runs and is charged, the other refused unrun; a third after completion refused too", async () => {
    const task = await offered(a.url, "slow", "1500");
    const before = await balances();
    const runsSoFar = runs.slow ?? 0;
    const first = await pay(required03(task));
    const second = await pay(required03(task));
    const answers = await Promise.all([
      paying03(a.url, task, first),
      paying03(b.url, task, second),
    ]);
    const done = answers.filter((x) => x.result);
    const refused = answers.filter((x) => x.error);
    expect(done).toHaveLength(1);
    expect(done[0].result.status.state).toBe("completed");
    expect(refused[0].error.message).toMatch(/already paid with another payment/);
    expect(refused[0].error.message).toMatch(/nothing was run or charged/);
    expect(runs.slow).toBe(runsSoFar + 1);
    const after = await chargedOnce(before);
    const unused = answers[0].result ? second : first;
    const nonce = unused.payload.authorization.nonce;
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(false);

    // After completion: another payment on it is refused, nothing run or moved.
    const late = await paying03(b.url, task, await pay(required03(task)));
    expect(late.error.message).toMatch(/is completed: a task runs one job for one payment/);
    expect(runs.slow).toBe(runsSoFar + 1);
    expect(await balances()).toEqual(after);
  }, 30_000);

  it("a paying turn asking for another job than the first turn's is refused unrun and unclaimed; the same payment with the first turn's data pays that job", async () => {
    const task = await offered(a.url, "echo", "cheap job");
    const before = await balances();
    const payload = await pay(required03(task));
    const data = (capability: string, text: string) => [
      { kind: "data", data: { capability, input: { text } } },
    ];
    for (const parts of [data("echo", "another job"), data("slow", "1500")]) {
      const changed = await paying03(b.url, task, payload, undefined, undefined, parts);
      expect(changed.error.message).toMatch(/another job than its task's first turn/);
      expect(changed.error.message).toMatch(/nothing was run or charged/);
    }
    expect(await balances()).toEqual(before);
    const done = (
      await paying03(a.url, task, payload, undefined, undefined, data("echo", "cheap job"))
    ).result;
    expect(done.status.state).toBe("completed");
    expect(done.artifacts[0].parts[0].data).toEqual({ text: "echo: cheap job" });
    await chargedOnce(before);
  }, 30_000);

  it("a task whose job failed is final: another payment on it is refused, nothing run or moved", async () => {
    const task = await offered(a.url, "throws", "x");
    const before = await balances();
    const failed = await paying(b.url, task, await pay(required03(task)));
    expect(failed.status.state).toBe("failed");
    const runsSoFar = runs.throws;
    const again = await paying03(a.url, task, await pay(required03(task)));
    expect(again.error.message).toMatch(/is failed: .*send the job again as a new task/);
    expect(runs.throws).toBe(runsSoFar);
    expect(await balances()).toEqual(before);
  }, 30_000);

  it("CancelTask while the paid job runs: canceled, nothing charged", async () => {
    aborts.length = 0;
    const task = await offered(a.url, "slow", "1500");
    const before = await balances();
    const payload = await pay(required03(task));
    const turn = paying(a.url, task, payload);
    await sleep(400);
    const { body } = await rpc03(a.url, "tasks/cancel", { id: task.id }, EXTENSIONS);
    expect(body.result.status.state).toBe("canceled");
    expect((await turn).status.state).toBe("canceled");
    // The handler was told: its ctx.signal aborted with the cancel.
    expect(aborts).toEqual([expect.stringMatching(/the caller cancelled the job/)]);
    await sleep(2000); // the job ends; nothing settles it
    expect(await balances()).toEqual(before);
    const got = await rpc03(b.url, "tasks/get", { id: task.id }, EXTENSIONS);
    expect(got.body.result.status.state).toBe("canceled");
  }, 30_000);

  it("CancelTask on the other instance while the paid job runs here: refused (only this one can stop it); the job completes, charged once, its receipt on the task", async () => {
    const task = await offered(a.url, "slow", "1500");
    const before = await balances();
    const payload = await pay(required03(task));
    const turn = paying(a.url, task, payload);
    await sleep(400);
    const { body } = await rpc03(b.url, "tasks/cancel", { id: task.id }, EXTENSIONS);
    expect(body.error, JSON.stringify(body)).toMatchObject({
      code: -32002, // TaskNotCancelableError
      message: expect.stringMatching(/running, or has run, on another instance .* not cancelled/),
    });
    const done = await turn;
    expect(done.status.state).toBe("completed");
    expect(done.status.message.metadata["x402.payment.status"]).toBe("payment-completed");
    await chargedOnce(before);
    const got = await rpc03(b.url, "tasks/get", { id: task.id }, EXTENSIONS);
    expect(got.body.result.status.state).toBe("completed");
  }, 30_000);

  it("CancelTask on a task waiting for its payment, on the other instance: canceled; its payment then runs nothing", async () => {
    const task = await offered(a.url, "echo", "never paid");
    const { body } = await rpc03(b.url, "tasks/cancel", { id: task.id }, EXTENSIONS);
    expect(body.result.status.state).toBe("canceled");
    const before = await balances();
    const runsSoFar = runs.echo ?? 0;
    const again = await paying03(a.url, task, await pay(required03(task)));
    expect(again.error.message).toMatch(/canceled|cancelled/);
    expect(runs.echo ?? 0).toBe(runsSoFar);
    expect(await balances()).toEqual(before);
  }, 30_000);
});

/** GetTask (0.3) on `url` until the task leaves `working`. */
describe("a paid A2A task asked for in plain text (an agent of one capability, one required text field)", () => {
  const oneRuns: Record<string, number> = {};
  const one = withDiscovery(echoAgent("a2a-one", "one capability", PRICE, oneRuns));
  let a1: Running;
  let b1: Running;
  beforeAll(async () => {
    const prefix = `a2a-one-${randomUUID()}:`;
    a1 = await instance(one, prefix);
    b1 = await instance(one, prefix);
  }, 60_000);

  it("offered for the text as its field, paid on the other instance with other words: the first turn's job runs once, charged once; the payment again is refused", async () => {
    const first = {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [{ kind: "text", text: "plain words" }],
    };
    const { body } = await rpc03(a1.url, "message/send", { message: first }, EXTENSIONS);
    const task = body.result;
    expect(task.status.state, JSON.stringify(body)).toBe("input-required");
    expect(required03(task).accepts[0].amount).toBe(String(PRICE));
    const before = await balances();
    const payload = await pay(required03(task));
    // The paying turn's own text asks for nothing: it pays for the first turn's job.
    const paid = await paying03(b1.url, task, payload, undefined, undefined, [
      { kind: "text", text: "here is my payment" },
    ]);
    expect(paid.result?.status.state, JSON.stringify(paid)).toBe("completed");
    expect(paid.result.artifacts[0].parts[0].data).toEqual({ text: "echo: plain words" });
    const resent = await paying03(a1.url, task, payload);
    expect(resent.error?.message, JSON.stringify(resent)).toMatch(
      /is completed: a task runs one job/,
    );
    expect(oneRuns.echo).toBe(1);
    await chargedOnce(before);
  }, 30_000);
});

async function ended03(url: string, id: string): Promise<any> {
  for (let tries = 0; tries < 150; tries++) {
    const { body } = await rpc03(url, "tasks/get", { id }, EXTENSIONS);
    if (body.result.status.state !== "working") return body.result;
    await sleep(200);
  }
  throw new Error(`task ${id} still working after 30 s`);
}

describe("a paid A2A task on the job queue (return_immediately)", () => {
  it("SDK client, returnImmediately: working at once, payment verified; run by a worker; GetTask on the other instance: completed + receipt, the price once; the payment sent again runs nothing", async () => {
    const client = await new ClientFactory().createFromUrl(a.url);
    const options = { serviceParameters: EXTENSIONS } as any;
    const first: any = await client.sendMessage(
      { message: dataMessage({ capability: "slow", input: { text: "1500" } }) } as any,
      options,
    );
    const before = await balances();
    const runsSoFar = runs.slow ?? 0;
    const payload = await pay(first.status.message.metadata["x402.payment.required"]);
    // The paying turns over HTTP+JSON, to the other instance.
    const restB = await new ClientFactory({
      transports: [new RestTransportFactory()],
    }).createFromUrl(b.url);
    const turn = (returnImmediately: boolean) =>
      restB.sendMessage(
        {
          message: payingMessage(first, payload),
          configuration: { returnImmediately },
        } as any,
        options,
      );
    const queued: any = await turn(true);
    expect(queued.status.state).toBe(2); // TASK_STATE_WORKING
    expect(queued.status.message.metadata["x402.payment.status"]).toBe("payment-verified");
    expect(queued.artifacts).toEqual([]);
    expect(await balances()).toEqual(before); // nothing charged before the job completed
    // The same payment again while it runs: the task as it is, nothing run twice.
    expect(((await turn(true)) as any).status.state).toBe(2);

    const done = await ended03(b.url, first.id);
    expect(done.status.state).toBe("completed");
    expect(done.artifacts).toHaveLength(1);
    expect(done.artifacts[0].parts[0]).toMatchObject({ kind: "data", data: { text: "slept" } });
    expect(done.status.message.metadata["x402.payment.receipts"][0]).toMatchObject({
      success: true,
      network: "eip155:84532",
    });
    await chargedOnce(before);
    expect(runs.slow).toBe(runsSoFar + 1);
    // GetTask from both instances, through the SDK clients (JSON-RPC, HTTP+JSON): completed too.
    expect(((await client.getTask({ id: first.id } as any)) as any).status.state).toBe(3);
    expect(((await restB.getTask({ id: first.id } as any)) as any).status.state).toBe(3);
  }, 60_000);

  it("CancelTask while the queued job runs: canceled, the handler's signal aborted, nothing charged, still canceled after", async () => {
    aborts.length = 0;
    const task = await offered(a.url, "slow", "3000");
    const before = await balances();
    const payload = await pay(required03(task));
    const queued = await paying03(a.url, task, payload, undefined, { blocking: false });
    expect(queued.result.status.state).toBe("working");
    await sleep(1000); // a worker has it
    // CancelTask over HTTP+JSON on the other instance (the SDK's REST client).
    const restB = await new ClientFactory({
      transports: [new RestTransportFactory()],
    }).createFromUrl(b.url);
    const cancelled: any = await restB.cancelTask({ id: task.id } as any);
    expect(cancelled.status.state).toBe(5); // TASK_STATE_CANCELED
    await sleep(4000); // past the handler's own end: nothing settles it
    expect(aborts).toEqual([expect.stringMatching(/the caller cancelled the job/)]);
    expect(await balances()).toEqual(before);
    const nonce = payload.payload.authorization.nonce;
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(false);
    const got = await rpc03(a.url, "tasks/get", { id: task.id }, EXTENSIONS);
    expect(got.body.result.status.state).toBe("canceled");
  }, 60_000);

  it("no worker runs (WORKER=off, none on its prefix): the task asks for the payment again, nothing run or moved; the same payment without return_immediately runs it, charged once", async () => {
    const app = createApp(agent, {
      devMode: false,
      env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `a2a-idle-${randomUUID()}:`, WORKER: "off" },
      logger: captureLogger(),
      payment: { payTo, network: "base-sepolia", asset, facilitatorUrl },
    });
    const idle = await listen(app);
    servers.push(idle);
    const task = await offered(idle.url, "slow", "10");
    const before = await balances();
    const payload = await pay(required03(task));
    const queued = await paying03(idle.url, task, payload, undefined, { blocking: false });
    expect(queued.result.status.state).toBe("input-required");
    expect(JSON.stringify(queued.result.status.message.parts)).toMatch(
      /no worker is running for async jobs/,
    );
    expect(queued.result.status.message.metadata["x402.payment.status"]).toBe("payment-required");
    expect(await balances()).toEqual(before);
    const done = await paying03(idle.url, task, payload);
    expect(done.result.status.state).toBe("completed");
    await chargedOnce(before);
  }, 60_000);

  it("a queued job that throws: failed, nothing moved, the authorization unused", async () => {
    const task = await offered(b.url, "throws", "x");
    const before = await balances();
    const payload = await pay(required03(task));
    const queued = await paying03(b.url, task, payload, undefined, { blocking: false });
    expect(queued.result.status.state).toBe("working");
    const done = await ended03(a.url, task.id);
    expect(done.status.state).toBe("failed");
    expect(JSON.stringify(done.status.message.parts)).toMatch(/internal/);
    expect(done.status.message.metadata["x402.payment.error"]).toBeUndefined();
    expect(await balances()).toEqual(before);
    const nonce = payload.payload.authorization.nonce;
    expect(await nonceUsed(rpcUrl, asset, payer.address, nonce)).toBe(false);
  }, 60_000);
});
