// A2A (the `a2a` feature, templates/runtime/a2a/) without a chain: the official @a2a-js/sdk 1.3.0
// client (ClientFactory from the agent card's URL) and a raw A2A 0.3 `message/send` over fetch.
// Dev mode: a task completes at once with the output as a DataPart artifact. Production: a wrong
// DataPart and a call that does not activate a2a-x402 are refused before any offer, nothing run;
// a first turn is an input-required task carrying the HTTP 402's PaymentRequired; a second turn
// without a payment is refused. A2A=off: 404 and in no document. Paid turns on a chain:
// test/chain/a2a.test.ts.
import { randomUUID } from "node:crypto";
import { ClientFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { dataMessage, rpc03 } from "./a2a-helpers.js";
import { withDiscovery } from "./discovery-fixture.js";
import { makeAgent, PRODUCTION, job, post, startApp, type TestAgent, unb64 } from "./helpers.js";

type App = Awaited<ReturnType<typeof startApp>>;
let dev: App;
let prod: App;
let devAgent: TestAgent;
let prodAgent: TestAgent;

beforeAll(async () => {
  devAgent = withDiscovery(makeAgent());
  prodAgent = withDiscovery(makeAgent());
  dev = await startApp(devAgent, { devMode: true });
  prod = await startApp(prodAgent, PRODUCTION);
});
afterAll(async () => {
  await dev?.close();
  await prod?.close();
});

const message03 = (data: unknown, metadata: Record<string, unknown> = {}, taskId?: string) => ({
  message: {
    kind: "message",
    messageId: randomUUID(),
    role: "user",
    parts: [{ kind: "data", data }],
    metadata,
    ...(taskId && { taskId }),
  },
});

describe("A2A in dev mode", () => {
  it("the SDK client found through the card runs a job: completed, the output as a DataPart artifact", async () => {
    const client = await new ClientFactory().createFromUrl(dev.url);
    const result: any = await client.sendMessage({
      message: dataMessage({ capability: "echo", input: { text: "hi", times: 2 } }),
    } as any);
    expect(result.status.state).toBe(3); // TASK_STATE_COMPLETED
    expect(result.artifacts[0].parts[0].content).toEqual({
      $case: "data",
      value: { text: "hihi" },
    });
    expect(devAgent.calls.echo).toBe(1);
    // GetTask reads it back from the task store.
    const got: any = await client.getTask({ id: result.id } as any);
    expect(got.status.state).toBe(3);
  });

  it("a raw 0.3 message/send runs it too", async () => {
    const { body } = await rpc03(
      dev.url,
      "message/send",
      message03({ capability: "cheap", input: { text: "x" } }),
    );
    expect(body.result.status.state).toBe("completed");
    expect(body.result.artifacts[0].parts[0]).toMatchObject({ kind: "data", data: { text: "x" } });
  });
});

describe("A2A with payments on", () => {
  const activated = { "X-A2A-Extensions": X402_EXTENSION_URI };

  it("a wrong DataPart is refused naming the capabilities, before any offer; nothing runs", async () => {
    const noPart = await rpc03(prod.url, "message/send", message03("not a job"), activated);
    expect(noPart.body.error.message).toMatch(/capabilities: "echo", "cheap", "slow"/);
    const unknown = await rpc03(
      prod.url,
      "message/send",
      message03({ capability: "nope", input: {} }),
      activated,
    );
    expect(unknown.body.error.message).toMatch(/unknown capability "nope"; available: "echo"/);
    const invalid = await rpc03(
      prod.url,
      "message/send",
      message03({ capability: "echo", input: { times: 2 } }),
      activated,
    );
    expect(invalid.body.error.message).toMatch(/text/);
    expect(invalid.body.error.message).toMatch(/nothing was run or charged/);
    expect(prodAgent.calls.echo).toBeUndefined();
  });

  it("without activating a2a-x402 a call is refused; the card requires it", async () => {
    const card: any = await (await fetch(`${prod.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.extensions[0]).toMatchObject({
      uri: X402_EXTENSION_URI,
      required: true,
    });
    const refused = await rpc03(
      prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
    );
    expect(refused.body.error.message).toMatch(/A2A-Extensions/);
  });

  it("turn 1: input-required with the same x402 v2 offer as the HTTP 402; a turn 2 without payment is refused", async () => {
    const { body, headers } = await rpc03(
      prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
      activated,
    );
    const task = body.result;
    expect(task.status.state).toBe("input-required");
    const metadata = task.status.message.metadata;
    expect(metadata["x402.payment.status"]).toBe("payment-required");
    const offer = metadata["x402.payment.required"];
    const http = await post(prod.url, job("echo", { text: "a" }));
    expect(http.status).toBe(402);
    const http402 = unb64(http.headers.get("payment-required")!);
    expect(offer.x402Version).toBe(2);
    expect(offer.accepts.map(({ maxTimeoutSeconds: _, ...a }: any) => a)).toEqual(
      http402.accepts.map(({ maxTimeoutSeconds: _, ...a }: any) => a),
    );
    expect(offer.resource.url).toBe(`${prod.url}/a2a`);
    expect(headers.get("x-a2a-extensions")).toContain(X402_EXTENSION_URI);

    const unpaid = await rpc03(prod.url, "message/send", message03({}, {}, task.id), activated);
    expect(unpaid.body.error.message).toMatch(/payment-submitted/);
    expect(prodAgent.calls.echo).toBeUndefined();
  });
});

describe("A2A=off", () => {
  it("POST /a2a is a 404 and the card lists neither the interface nor the extension", async () => {
    const off = await startApp(withDiscovery(makeAgent()), { ...PRODUCTION, env: { A2A: "off" } });
    try {
      const res = await fetch(`${off.url}/a2a`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(404);
      const card = await (await fetch(`${off.url}/.well-known/agent-card.json`)).json();
      expect(JSON.stringify(card)).not.toContain("/a2a");
      expect(JSON.stringify(card)).not.toContain("a2a-x402");
      expect(await (await fetch(`${off.url}/llms.txt`)).text()).not.toContain("/a2a");
    } finally {
      await off.close();
    }
  });
});
