// MAX_JOBS_PER_PAYER: a payer funded for one job cannot start many at once and pay for one. Past the
// cap a job is refused before it runs (429 payer_busy, Retry-After), nothing charged, its payment
// free to send again; other payers are not held up; two spellings of one address are one payer.
import { afterEach, describe, expect, it } from "vitest";
import { privateKeyToAccount } from "viem/accounts";
import { loadMcpSdk } from "../../src/caller/mcp-sdk.js";
import { mcpSend } from "../../src/caller/mcp-send.js";
import { retryingFetch } from "../../src/caller/retry.js";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { message03, rpc03 } from "./a2a-helpers.js";
import {
  anvilAccount,
  hostileAgent,
  job,
  paymentSignature,
  nowSeconds,
  post,
  signAuthorization,
  production,
  recordingSettler,
  startApp,
} from "./helpers.js";

const payer = anvilAccount();
const other = privateKeyToAccount(`0x${"42".repeat(32)}`);

let app: Awaited<ReturnType<typeof startApp>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function cappedApp(maxJobsPerPayer: number) {
  const agent = hostileAgent();
  const settler = recordingSettler();
  const options = production(settler);
  app = await startApp(agent, {
    ...options,
    payment: { ...options.payment, maxJobsPerPayer },
  });
  return { agent, settler, url: app.url };
}

/** Resolves once `count` stubborn handlers run (each holds its payer's slot). */
async function handlersRunning(
  agent: ReturnType<typeof hostileAgent>,
  count: number,
): Promise<void> {
  while (agent.running() < count) await new Promise((r) => setTimeout(r, 10));
}

/** A job that runs `ms` (its handler ignores its signal), paid with `header`. */
const slow = (url: string, header: string, ms = 600) =>
  post(url, job("stubborn", { text: String(ms) }), { "payment-signature": header });

/**
 * Sends the job paid with `header` through `send` (call's retrying fetch, over `path`) while the payer's
 * one slot is taken: it is told the 429's Retry-After, waits, and the same payment then runs.
 */
async function waitedOut(
  app: Awaited<ReturnType<typeof cappedApp>>,
  path: "/execute" | "/mcp",
  header: string,
  fetchImpl?: typeof fetch,
): Promise<void> {
  const told: string[] = [];
  const send = retryingFetch({ fetchImpl, onRetry: (m) => told.push(m) });
  const res = await send(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "payment-signature": header },
    body: JSON.stringify(job("stubborn", { text: "10" })),
  });
  expect(res.status).toBe(200);
  expect(told.join("\n")).toMatch(
    /HTTP 429, nothing run or charged\); sending the identical request again in 2 s/,
  );
  expect(app.agent.starts.stubborn).toBe(2);
  expect(app.settler.settled()).toBe(2);
}

describe("MAX_JOBS_PER_PAYER", () => {
  it("a payer past its cap is refused before anything runs, and its payment pays later", async () => {
    const { agent, settler, url } = await cappedApp(2);
    const headers = await Promise.all([1, 2, 3].map(() => paymentSignature(payer)));
    const first = [slow(url, headers[0]!), slow(url, headers[1]!)];
    await handlersRunning(agent, 2);
    const third = await slow(url, headers[2]!);
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("2");
    expect(third.body).toMatchObject({ status: "failed", error_type: "payment" });
    expect(third.body.error).toMatch(
      /2 paid jobs running .*MAX_JOBS_PER_PAYER.*nothing was charged/,
    );
    // Another payer is not held up by this one.
    expect((await slow(url, await paymentSignature(other), 10)).status).toBe(200);
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    expect(agent.starts.stubborn).toBe(3);
    expect(settler.settled()).toBe(3);
    // The refused payment was not spent: sent again once the payer's jobs ended, it runs and pays.
    expect((await slow(url, headers[2]!, 10)).status).toBe(200);
    expect(settler.settled()).toBe(4);
  });

  it("the same address spelled in lowercase is the same payer", async () => {
    const { agent, url } = await cappedApp(1);
    const running = slow(url, await paymentSignature(payer));
    await handlersRunning(agent, 1);
    const lower = { ...payer, address: payer.address.toLowerCase() as `0x${string}` };
    const second = await slow(url, await paymentSignature(lower), 10);
    expect(second.status).toBe(429);
    expect((await running).status).toBe(200);
    expect(agent.starts.stubborn).toBe(1);
  });

  it("`call` waits out the 429's Retry-After and sends the same payment again, which then runs", async () => {
    const app = await cappedApp(1);
    const running = slow(app.url, await paymentSignature(payer), 500);
    await handlersRunning(app.agent, 1);
    await waitedOut(app, "/execute", await paymentSignature(payer));
    expect((await running).status).toBe(200);
  });

  it("over A2A: the task asks for its payment again (input-required), and the same payment then runs", async () => {
    const { agent, settler, url } = await cappedApp(1);
    const activated = { "X-A2A-Extensions": X402_EXTENSION_URI };
    const send = (data: unknown, metadata: Record<string, unknown> = {}, taskId?: string) =>
      rpc03(url, "message/send", message03(data, metadata, taskId), activated);
    const task = (await send({ capability: "stubborn", input: { text: "10" } })).body.result;
    const offer = task.status.message.metadata["x402.payment.required"];
    const payload = {
      x402Version: 2,
      resource: offer.resource,
      accepted: offer.accepts[0],
      payload: await signAuthorization(payer, {
        validBefore: String(nowSeconds() + offer.accepts[0].maxTimeoutSeconds),
      }),
    };
    const paying = {
      "x402.payment.status": "payment-submitted",
      "x402.payment.payload": payload,
    };
    const running = slow(url, await paymentSignature(payer), 500);
    await handlersRunning(agent, 1);
    const busy = (await send({}, paying, task.id)).body.result;
    expect(busy.status.state).toBe("input-required");
    expect(busy.status.message.metadata["x402.payment.status"]).toBe("payment-required");
    expect(busy.status.message.parts[0].text).toMatch(/MAX_JOBS_PER_PAYER/);
    expect((await running).status).toBe(200);
    const paid = (await send({}, paying, task.id)).body.result;
    expect(paid.status.state).toBe("completed");
    expect(agent.starts.stubborn).toBe(2);
    expect(settler.settled()).toBe(2);
  });

  it("over MCP: the refusal's _meta.retry_after_seconds; `call --mcp`'s send waits it out, and the same payment then runs", async () => {
    const sdk = await loadMcpSdk();
    const app = await cappedApp(1);
    const header = await paymentSignature(payer);
    const running = slow(app.url, await paymentSignature(payer), 2500);
    await handlersRunning(app.agent, 1);
    const params = {
      name: "stubborn",
      arguments: { text: "10" },
      _meta: { "x402/payment": JSON.parse(Buffer.from(header, "base64").toString()) as unknown },
    };
    const rpc = { jsonrpc: "2.0", id: 1, method: "tools/call", params };
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const res = await fetch(`${app.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify(rpc),
    });
    const { result } = (await res.json()) as any;
    expect(result).toMatchObject({
      isError: true,
      _meta: { retry_after_seconds: 2 },
      structuredContent: { error_type: "payment" },
    });
    expect(result.structuredContent.error).toMatch(/MAX_JOBS_PER_PAYER/);
    await waitedOut(app, "/mcp", header, mcpSend(sdk, fetch));
    expect((await running).status).toBe(200);
  });

  it("0 lifts the cap", async () => {
    const { url } = await cappedApp(0);
    const headers = await Promise.all([1, 2, 3].map(() => paymentSignature(payer)));
    const answers = await Promise.all(headers.map((h) => slow(url, h, 200)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
  });
});
