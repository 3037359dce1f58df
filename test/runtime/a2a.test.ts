// A2A (the `a2a` feature, templates/runtime/a2a/) without a chain: the official @a2a-js/sdk 1.3.0
// client (ClientFactory from the agent card's URL) and a raw A2A 0.3 `message/send` over fetch.
// Dev mode: a task completes at once with the output as a DataPart artifact. Production: a wrong
// DataPart and a call that does not activate a2a-x402 are refused before any offer, nothing run; a
// message naming no capability gets an agent message saying how to call (no task, nothing run);
// a first turn is an input-required task carrying the HTTP 402's PaymentRequired; a second turn
// without a payment is refused. A task waiting for its payment is kept for the payment window (not
// its deadline plus it), its input once; once paid until its deadline plus the window; an ended one
// a day (the clock moved, no sleeping). A2A=off: 404 and in
// no document. Paid turns on a chain: test/chain/a2a.test.ts.
import { randomUUID } from "node:crypto";
import { ClientFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LEGACY_X402_EXTENSION_URI, X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { dataMessage, expectDevEcho, message03, rpc03 } from "./a2a-helpers.js";
import { devAndProdForTests } from "./dev-and-prod.js";
import { withDiscovery } from "./discovery-fixture.js";
import { taskTtlMs } from "../../templates/runtime/a2a/task-store.js";
import { createMemoryLedger } from "../../templates/runtime/ledger/memory.js";
import { runtimeWithout } from "./without-features.js";
import {
  captureLogger,
  listen,
  makeAgent,
  PRODUCTION,
  job,
  post,
  startApp,
  unb64,
} from "./helpers.js";

// The production app's ledger, read by "how long tasks are kept" (what a task record holds).
const prodLedger = createMemoryLedger();
const apps = devAndProdForTests({ ...PRODUCTION, ledger: prodLedger });

describe("A2A in dev mode", () => {
  it("the SDK client found through the card runs a job: completed, the output as a DataPart artifact", async () => {
    const client = await new ClientFactory().createFromUrl(apps.dev.url);
    // GetTask reads it back from the task store (expectDevEcho).
    await expectDevEcho(client, apps.devAgent, "hi", 2);
  });

  it("a raw 0.3 message/send runs it too", async () => {
    const { body } = await rpc03(
      apps.dev.url,
      "message/send",
      message03({ capability: "cheap", input: { text: "x" } }),
    );
    expect(body.result.status.state).toBe("completed");
    expect(body.result.artifacts[0].parts[0]).toMatchObject({ kind: "data", data: { text: "x" } });
  });
});

describe("A2A in dev mode, a job still running", () => {
  it("a non-blocking message/send: GetTask says working until the job answers, then completed", async () => {
    const params = {
      ...message03({ capability: "slow", input: { ms: 1500 } }),
      configuration: { blocking: false },
    };
    const { body } = await rpc03(apps.dev.url, "message/send", params);
    const state = async () =>
      (await rpc03(apps.dev.url, "tasks/get", { id: body.result.id })).body.result.status.state;
    expect(await state()).toBe("working");
    await vi.waitFor(async () => expect(await state()).toBe("completed"), { timeout: 5_000 });
  });
});

describe("hostile and large bodies on /a2a, refused or taken as on POST /execute", () => {
  const raw = (body: string) =>
    fetch(`${apps.dev.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
  const send = (params: unknown) =>
    JSON.stringify({ jsonrpc: "2.0", id: 7, method: "message/send", params });
  /** An echo message/send whose metadata carries a note of `size` characters. */
  const withNote = (size: number) =>
    raw(
      send(message03({ capability: "echo", input: { text: "big" } }, { note: "x".repeat(size) })),
    );

  it("a body above the SDK's 100 kB but within MAX_BODY_BYTES runs the job", async () => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const res = await withNote(200_000);
    const body: any = await res.json();
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    expect(body.result.status.state).toBe("completed");
    expect(apps.devAgent.calls.echo).toBe(calls + 1);
  });

  it("JSON that is no object (a bare string, number, null): -32600 Invalid Request, not a parse error", async () => {
    for (const body of ['"hello"', "42", "null", " true "]) {
      const res = await raw(body);
      expect(res.status, body).toBe(400);
      expect(await res.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: expect.stringMatching(/JSON but not a JSON-RPC message/) },
      });
    }
    // Broken JSON is still a parse error.
    expect(await (await raw('"hello')).json()).toMatchObject({ error: { code: -32700 } });
  });

  it("a body above MAX_BODY_BYTES: 413 as a JSON-RPC error, nothing run", async () => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const res = await withNote(1_100_000);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32600, message: expect.stringMatching(/larger than/) },
    });
    expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
  });

  it.each([
    [1e300, /deadline: 1e\+300 is more than 7 days from now/],
    ["tomorrow", /metadata\.deadline: must be a positive number/],
  ])(
    "a deadline of %s in the metadata: invalid params (-32602) naming it, as /execute's 400; no task, nothing run",
    async (deadline, named) => {
      const calls = apps.devAgent.calls.echo ?? 0;
      const res = await raw(
        send(message03({ capability: "echo", input: { text: "d" } }, { deadline })),
      );
      const body: any = await res.json();
      expect(body, JSON.stringify(body)).toMatchObject({ id: 7, error: { code: -32602 } });
      expect(body.error.message).toMatch(named);
      expect(body.error.message).toMatch(/nothing was run or charged/);
      expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
    },
  );

  it.each([
    [
      "message/send",
      {
        message: { ...message03({ capability: "echo", input: { text: "n" } }).message, taskId: 12 },
      },
      /message\.taskId must be a task id/,
    ],
    [
      "message/send", // an id kept with the task (in each of its messages): bounded
      {
        message: {
          ...message03({ capability: "echo", input: { text: "n" } }).message,
          contextId: "c".repeat(100_000),
        },
      },
      /contextId are ids of at most 256 characters/,
    ],
    ["tasks/get", { id: { a: 1 } }, /^id must be a task id/],
    ["tasks/cancel", { id: 7 }, /^id must be a task id/],
  ])(
    "%s with a task id that is not a string (or a context id of 100 000 characters): invalid params (-32602) naming it; nothing run",
    async (method, params, named) => {
      const calls = apps.devAgent.calls.echo ?? 0;
      const res = await raw(JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }));
      const body: any = await res.json();
      expect(body, JSON.stringify(body)).toMatchObject({ id: 7, error: { code: -32602 } });
      expect(body.error.message).toMatch(named);
      expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
    },
  );

  it("an input nested 5,000 deep: invalid params (-32602) naming the limit, as /execute's 400; nothing run", async () => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const text = send(message03({ capability: "echo", input: { text: "d" } })).replace(
      '"text":"d"',
      `"text":${deep}`,
    );
    const res = await raw(text);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringMatching(/nested more than \d+ levels/) },
    });
    expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
  });
});

describe("what a JSON-RPC request to /a2a is, and which A2A version it speaks", () => {
  const raw = (body: unknown, query = "", headers: Record<string, string> = {}) =>
    fetch(`${apps.dev.url}/a2a${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
  const getTask = { jsonrpc: "2.0", id: 4, method: "GetTask", params: { id: "no-such-task" } };

  it.each([
    [
      "jsonrpc is not 2.0",
      { jsonrpc: "aaa", method: "SendMessage", params: {} },
      null,
      /`jsonrpc`/,
    ],
    ["no method", { jsonrpc: "2.0", params: {}, id: 3 }, 3, /`method`/],
    [
      "an object id",
      { jsonrpc: "2.0", method: "SendMessage", params: {}, id: { a: 1 } },
      null,
      /`id`/,
    ],
    [
      "a fractional id",
      { jsonrpc: "2.0", method: "message/send", params: {}, id: 1.5 },
      null,
      /`id`/,
    ],
    [
      "a batch",
      [{ jsonrpc: "2.0", method: "tasks/get", params: { id: "x" }, id: 1 }],
      null,
      /no batches/,
    ],
  ])(
    "%s: -32600 Invalid Request (JSON-RPC 2.0), under its id when it has a valid one; nothing run",
    async (_, body, id, named) => {
      for (const headers of [{}, { "A2A-Version": "1.0" }] as Record<string, string>[]) {
        const calls = apps.devAgent.calls.echo ?? 0;
        const res = await raw(body, "", headers);
        expect(res.status).toBe(200);
        expect(res.body, JSON.stringify(res.body)).toMatchObject({
          jsonrpc: "2.0",
          id,
          error: { code: -32600 },
        });
        expect(res.body.error.message).toMatch(named);
        expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
      }
    },
  );

  it("ListTasks: an empty page (tasks are read by id only); parameters A2A calls invalid are refused naming them", async () => {
    const list = (params: unknown) =>
      raw({ jsonrpc: "2.0", id: 9, method: "ListTasks", params }, "", { "A2A-Version": "1.0" });
    expect((await list({})).body.result).toMatchObject({ tasks: [], pageSize: 50, totalSize: 0 });
    expect((await list({ pageSize: 10 })).body.result.pageSize).toBe(10);
    for (const [params, named] of [
      [{ pageToken: "invalid-token-xyz" }, /pageToken/],
      [{ historyLength: -1 }, /historyLength must be 0 or more/],
      [{ pageSize: 0 }, /pageSize must be between 1 and 100/], // the SDK's own check
      [{ pageSize: 101 }, /pageSize/],
      [{ statusTimestampAfter: "-1" }, /statusTimestampAfter must be an RFC 3339 timestamp/],
    ] as const) {
      const { body } = await list(params);
      expect(body.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect(body.error.message).toMatch(named);
    }
    expect(
      (await list({ statusTimestampAfter: "2026-01-01T00:00:00Z" })).body.result.tasks,
    ).toEqual([]);
  });

  it("a 1.0 method without A2A-Version is read as 1.0 (0.3 has no such method), not answered 'method not found'", async () => {
    const res = await raw(getTask);
    expect(res.body).toMatchObject({ id: 4, error: { code: -32001 } }); // TaskNotFoundError
    expect(res.body.error.message).toContain("no-such-task");
    // Without the reading, the 0.3 default: -32601. An explicit 0.3 header keeps it so.
    expect((await raw(getTask, "", { "A2A-Version": "0.3" })).body.error.code).toBe(-32601);
    // A 1.0 SendMessage runs the job and answers in 1.0's shape.
    const calls = apps.devAgent.calls.echo ?? 0;
    const params = {
      message: {
        messageId: randomUUID(),
        role: "ROLE_USER",
        parts: [{ data: { capability: "echo", input: { text: "v1" } } }],
      },
    };
    const sent = await raw({ jsonrpc: "2.0", id: 5, method: "SendMessage", params });
    expect(sent.body.result.task.status.state, JSON.stringify(sent.body)).toBe(
      "TASK_STATE_COMPLETED",
    );
    expect(apps.devAgent.calls.echo).toBe(calls + 1);
  });

  it("a message with no parts (A2A requires one): invalid params naming it, in 0.3 and 1.0; nothing run", async () => {
    const v03 = { kind: "message", messageId: randomUUID(), role: "user", parts: [] };
    const v1 = { messageId: randomUUID(), role: "ROLE_USER", parts: [] };
    for (const [method, message] of [
      ["message/send", v03],
      ["SendMessage", v1],
    ] as const) {
      const res = await raw({ jsonrpc: "2.0", id: 8, method, params: { message } });
      expect(res.body, method).toMatchObject({ id: 8, error: { code: -32602 } });
      expect(res.body.error.message).toMatch(/message\.parts is empty/);
    }
  });

  it("a 1.0 message without a role: invalid params naming it, as 0.3's parser refuses it; nothing run", async () => {
    const data = { capability: "echo", input: { text: "r" } };
    const calls = apps.devAgent.calls.echo ?? 0;
    const message = { messageId: randomUUID(), parts: [{ data }] };
    const res = await raw({ jsonrpc: "2.0", id: 9, method: "SendMessage", params: { message } });
    expect(res.body).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(res.body.error.message).toMatch(/message\.role is required/);
    expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
  });

  it("the version given as a request parameter (?A2A-Version=, as the spec allows) is the request's version", async () => {
    expect((await raw(getTask, "?A2A-Version=1.0")).body.error.code).toBe(-32001);
    const old = { jsonrpc: "2.0", id: 6, method: "tasks/get", params: { id: "no-such-task" } };
    expect((await raw(old, "?A2A-Version=0.3")).body.error.code).toBe(-32001);
    expect((await raw(old, "?A2A-Version=1.0")).body.error.code).toBe(-32601); // 1.0 has no tasks/get
    // The header wins over the parameter.
    expect((await raw(old, "?A2A-Version=1.0", { "A2A-Version": "0.3" })).body.error.code).toBe(
      -32001,
    );
  });
});

describe("A2A with payments on", () => {
  const activated = { "X-A2A-Extensions": X402_EXTENSION_URI };

  it("a wrong DataPart is refused naming the capabilities, before any offer; nothing runs", async () => {
    const noInput = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo" }),
      activated,
    );
    expect(noInput.body.error.message).toMatch(/capabilities: "echo", "cheap", "slow"/);
    const unknown = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "nope", input: {} }),
      activated,
    );
    expect(unknown.body.error.message).toMatch(/unknown capability "nope"; available: "echo"/);
    const invalid = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo", input: { times: 2 } }),
      activated,
    );
    expect(invalid.body.error.message).toMatch(/text/);
    expect(invalid.body.error.message).toMatch(/nothing was run or charged/);
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });

  it("without activating a2a-x402 a call is refused; the card requires it", async () => {
    const card: any = await (await fetch(`${apps.prod.url}/.well-known/agent-card.json`)).json();
    expect(card.capabilities.extensions[0]).toMatchObject({
      uri: X402_EXTENSION_URI,
      required: true,
    });
    const refused = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
    );
    expect(refused.body.error.message).toMatch(/A2A-Extensions/);
    // The extension's legacy v0.1 URI activates it as well.
    const legacy = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
      { "X-A2A-Extensions": LEGACY_X402_EXTENSION_URI },
    );
    expect(legacy.body.result.status.state).toBe("input-required");
  });

  it("turn 1: input-required with the same x402 v2 offer as the HTTP 402; a turn 2 without payment is refused", async () => {
    const { body, headers } = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
      activated,
    );
    const task = body.result;
    expect(task.status.state).toBe("input-required");
    const metadata = task.status.message.metadata;
    expect(metadata["x402.payment.status"]).toBe("payment-required");
    const offer = metadata["x402.payment.required"];
    const http = await post(apps.prod.url, job("echo", { text: "a" }));
    expect(http.status).toBe(402);
    const http402 = unb64(http.headers.get("payment-required")!);
    expect(offer.x402Version).toBe(2);
    expect(offer.accepts.map(({ maxTimeoutSeconds: _, ...a }: any) => a)).toEqual(
      http402.accepts.map(({ maxTimeoutSeconds: _, ...a }: any) => a),
    );
    expect(offer.resource.url).toBe(`${apps.prod.url}/a2a`);
    expect(headers.get("x-a2a-extensions")).toContain(X402_EXTENSION_URI);

    const unpaid = await rpc03(
      apps.prod.url,
      "message/send",
      message03({}, {}, task.id),
      activated,
    );
    expect(unpaid.body.error.message).toMatch(/payment-submitted/);
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });
});

describe("a text part holding the job's JSON (clients that send text only)", () => {
  const textMessage03 = (text: string, taskId?: string) => ({
    message: {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [{ kind: "text", text }],
      ...(taskId && { taskId }),
    },
  });
  const activated = { "X-A2A-Extensions": X402_EXTENSION_URI };

  it("dev mode: runs the job as the DataPart would, in 0.3 and 1.0", async () => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const text = ` ${JSON.stringify({ capability: "echo", input: { text: "t" } })}\n`;
    const { body } = await rpc03(apps.dev.url, "message/send", textMessage03(text));
    expect(body.result.status.state, JSON.stringify(body)).toBe("completed");
    expect(body.result.artifacts[0].parts[0]).toMatchObject({ kind: "data", data: { text: "t" } });
    const v1 = await fetch(`${apps.dev.url}/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "SendMessage",
        params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] } },
      }),
    });
    expect(((await v1.json()) as any).result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(apps.devAgent.calls.echo).toBe(calls + 2);
  });

  it.each([
    ["plain text", "summarize this please"],
    ["text that only starts like JSON", '{"capability": "echo", "input": {'],
    ["JSON naming no capability", '{"input": {"text": "x"}}'],
  ])("%s names no job: the help message, no task, nothing run", async (_, text) => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const { body } = await rpc03(apps.dev.url, "message/send", textMessage03(text));
    expect(body.result, JSON.stringify(body)).toMatchObject({ kind: "message", role: "agent" });
    expect(body.result.parts[0].text).toContain("or a text part holding that JSON");
    expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
  });

  it("JSON nested deeper than /execute accepts: invalid params naming the limit, as a data part's; nothing run", async () => {
    const calls = apps.devAgent.calls.echo ?? 0;
    const deep = `{"capability":"echo","input":{"text":${"[".repeat(100)}${"]".repeat(100)}}}`;
    const { body } = await rpc03(apps.dev.url, "message/send", textMessage03(deep));
    expect(body.error, JSON.stringify(body)).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/text part holds JSON nested more than \d+ levels deep/),
    });
    expect(apps.devAgent.calls.echo ?? 0).toBe(calls);
  });

  it("paid: checked as a DataPart is (an invalid input refused before any offer), then offered the same price", async () => {
    const invalid = JSON.stringify({ capability: "echo", input: { times: 2 } });
    const refused = await rpc03(apps.prod.url, "message/send", textMessage03(invalid), activated);
    expect(refused.body.error.code).toBe(-32602);
    expect(refused.body.error.message).toMatch(/text[\s\S]*nothing was run or charged/);
    const text = JSON.stringify({ capability: "echo", input: { text: "a" } });
    const { body } = await rpc03(apps.prod.url, "message/send", textMessage03(text), activated);
    expect(body.result.status.state).toBe("input-required");
    const offer = body.result.status.message.metadata["x402.payment.required"];
    expect(offer.accepts[0].amount).toBe("10000");
    // A paying turn whose text asks for another job is refused, as a data part would be.
    const other = JSON.stringify({ capability: "echo", input: { text: "b" } });
    const changed = await rpc03(
      apps.prod.url,
      "message/send",
      {
        message: {
          ...textMessage03(other, body.result.id).message,
          metadata: { "x402.payment.status": "payment-submitted", "x402.payment.payload": {} },
        },
      },
      activated,
    );
    expect(changed.body.error.message, JSON.stringify(changed.body)).toMatch(
      /asks for another job/,
    );
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });
});

describe("a message naming no capability (a generic A2A client, a2a-lint's probe)", () => {
  const text03 = (text: string) => ({
    message: {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [{ kind: "text", text }],
    },
  });
  const textOf = (message: any) => message.parts.map((p: any) => p.text).join("\n");

  it("paid, without the a2a-x402 extension: an agent message saying how to call and pay, no task, nothing run", async () => {
    const { body } = await rpc03(apps.prod.url, "message/send", text03("hello, what can you do?"));
    expect(body.error).toBeUndefined();
    expect(body.result).toMatchObject({ kind: "message", role: "agent" });
    expect(body.result.taskId).toBeUndefined();
    const text = textOf(body.result);
    expect(text).toMatch(/DataPart \{"capability": <name>, "input": \{\.\.\.\}\}/);
    expect(text).toContain('- "echo" (0.01 USDC per job): test capability');
    expect(text).toContain('- "cheap" (0.001 USDC per job)');
    expect(text).toContain(`A2A-Extensions: ${X402_EXTENSION_URI}`);
    expect(text).toMatch(/ran nothing and charged nothing/);
    expect(apps.prodAgent.calls.echo).toBeUndefined();
    // A paid call without the extension is still refused.
    const paid = await rpc03(
      apps.prod.url,
      "message/send",
      message03({ capability: "echo", input: { text: "a" } }),
    );
    expect(paid.body.error.message).toMatch(/A2A-Extensions/);
  });

  it("dev mode, from the SDK client: the same answer, jobs said to be free", async () => {
    const client = await new ClientFactory().createFromUrl(apps.dev.url);
    const before = apps.devAgent.calls.echo ?? 0;
    const result: any = await client.sendMessage({
      message: {
        ...dataMessage({}),
        parts: [
          { content: { $case: "text", value: "hi" }, metadata: {}, filename: "", mediaType: "" },
        ],
      },
    } as any);
    expect(result.role).toBe(2); // ROLE_AGENT: a Message, not a task
    const text = result.parts.map((p: any) => p.content.value).join("\n");
    expect(text).toMatch(/free here \(dev mode\)/);
    expect(text).toContain('- "echo": test capability');
    expect(text).not.toContain("A2A-Extensions");
    expect(apps.devAgent.calls.echo ?? 0).toBe(before);
  });
});

describe("plain text to an agent of one capability whose input has one required text field", () => {
  const oneCapability = () => {
    const agent = makeAgent();
    agent.capabilities = { echo: agent.capabilities.echo! };
    return withDiscovery(agent);
  };
  let dev: Awaited<ReturnType<typeof startApp>>;
  let prod: Awaited<ReturnType<typeof startApp>>;
  const devAgent = oneCapability();
  const prodAgent = oneCapability();
  beforeAll(async () => {
    dev = await startApp(devAgent, { devMode: true });
    prod = await startApp(prodAgent, PRODUCTION);
  });
  afterAll(async () => {
    await dev?.close();
    await prod?.close();
  });
  const texts03 = (...texts: string[]) => ({
    message: {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: texts.map((text) => ({ kind: "text", text })),
    },
  });
  const activated = { "A2A-Extensions": X402_EXTENSION_URI };

  it("dev mode: the text is that field, the others their defaults; the task completes (0.3 and the 1.0 SDK client)", async () => {
    const { body } = await rpc03(dev.url, "message/send", texts03("hello there"));
    expect(body.result?.status.state, JSON.stringify(body)).toBe("completed");
    expect(body.result.artifacts[0].parts[0]).toMatchObject({ data: { text: "hello there" } });
    expect(devAgent.seen.echo!.input).toEqual({ text: "hello there", times: 1, mode: "fast" });
    const client = await new ClientFactory().createFromUrl(dev.url);
    const result: any = await client.sendMessage({
      message: {
        ...dataMessage({}),
        parts: [
          {
            content: { $case: "text", value: "from 1.0" },
            metadata: {},
            filename: "",
            mediaType: "",
          },
        ],
      },
    } as any);
    expect(result.status.state).toBe(3); // TASK_STATE_COMPLETED
    expect(devAgent.seen.echo!.input.text).toBe("from 1.0");
    // Several text parts: one text, a line each.
    const two = await rpc03(dev.url, "message/send", texts03("first", "second"));
    expect(two.body.result.artifacts[0].parts[0].data).toEqual({ text: "first\nsecond" });
    expect(devAgent.calls.echo).toBe(3);
  });

  it("empty or JSON-like text asks for nothing: the help message, which says plain text is taken; nothing run", async () => {
    const calls = devAgent.calls.echo ?? 0;
    for (const text of ["   ", '{"not": "a job"', '{"text": "json, no capability"}']) {
      const { body } = await rpc03(dev.url, "message/send", texts03(text));
      expect(body.result, text).toMatchObject({ kind: "message", role: "agent" });
      expect(body.result.parts[0].text).toContain('it is taken as "text" of "echo"');
    }
    expect(devAgent.calls.echo ?? 0).toBe(calls);
  });

  it("a text the field refuses is invalid params naming it, as /execute's 400; nothing run", async () => {
    const calls = devAgent.calls.echo ?? 0;
    const { body } = await rpc03(dev.url, "message/send", texts03("x".repeat(101)));
    expect(body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/input\.text/),
    });
    expect(devAgent.calls.echo ?? 0).toBe(calls);
  });

  it("paid: without a2a-x402 (no paying client: a probe, a generic client) the help message, saying how to pay; with it, offered at the capability's price, the input kept with the task; nothing run", async () => {
    const help = await rpc03(prod.url, "message/send", texts03("pay me"));
    expect(help.body.result, JSON.stringify(help.body)).toMatchObject({
      kind: "message",
      role: "agent",
    });
    expect(help.body.result.parts[0].text).toContain(`A2A-Extensions: ${X402_EXTENSION_URI}`);
    // A data part without the extension is still refused: it asked for a job.
    const data = await rpc03(prod.url, "message/send", {
      message: {
        ...texts03("x").message,
        parts: [{ kind: "data", data: { capability: "echo", input: { text: "x" } } }],
      },
    });
    expect(data.body.error.message).toMatch(/A2A-Extensions/);
    const { body } = await rpc03(prod.url, "message/send", texts03("pay me"), activated);
    expect(body.result.status.state, JSON.stringify(body)).toBe("input-required");
    const offer = body.result.status.message.metadata["x402.payment.required"];
    expect(offer.accepts[0].amount).toBe("10000");
    expect(body.result.metadata.job).toMatchObject({
      capability: "echo",
      input: { text: "pay me" },
    });
    const got = await rpc03(prod.url, "tasks/get", { id: body.result.id });
    expect(got.body.result.metadata.job.input).toEqual({ text: "pay me" });
    expect(prodAgent.calls.echo).toBeUndefined();
  });

  it("the card's skill takes text/plain besides JSON, /llms.txt says so; an agent of several capabilities': JSON only", async () => {
    const v1 = { "A2A-Version": "1.0" };
    const one: any = await (
      await fetch(`${prod.url}/.well-known/agent-card.json`, { headers: v1 })
    ).json();
    expect(one.skills[0].inputModes).toEqual(["application/json", "text/plain"]);
    const several: any = await (
      await fetch(`${apps.prod.url}/.well-known/agent-card.json`, { headers: v1 })
    ).json();
    for (const skill of several.skills) expect(skill.inputModes).toEqual(["application/json"]);
    // /llms.txt's A2A line says so too, for this agent only.
    expect(await (await fetch(`${prod.url}/llms.txt`)).text()).toContain("or plain text as `text`");
    expect(await (await fetch(`${apps.prod.url}/llms.txt`)).text()).not.toContain("plain text");
  });
});

describe("how long tasks are kept", () => {
  const activated = { "X-A2A-Extensions": X402_EXTENSION_URI };
  /** GetTask with the clock moved `seconds` on (only Date: no sleeping). */
  async function getTaskAfter(url: string, id: string, seconds: number, start: number) {
    vi.useFakeTimers({ toFake: ["Date"], now: start + seconds * 1000 });
    try {
      return (await rpc03(url, "tasks/get", { id }, activated)).body;
    } finally {
      vi.useRealTimers();
    }
  }

  it("a large unpaid first turn with a far deadline: kept for the payment window only, its input once, no caller junk; an ended task stays a day", async () => {
    const start = Date.now();
    const deadline = Math.floor(start / 1000) + 6 * 24 * 3600; // the job's deadline: days away
    const input = { text: `marker-${randomUUID()}` }; // echo's input is short: the bulk comes with it
    const junk = "y".repeat(100_000);
    const params = message03({ capability: "echo", input }, { deadline, junk });
    params.message.parts.push({ kind: "text", text: junk } as any);
    const { body } = await rpc03(apps.prod.url, "message/send", params, activated);
    const task = body.result;
    expect(task.status.state).toBe("input-required");
    // Stored once: the input in the first turn's data part only; the bulk of the caller's not kept.
    const stored = (await prodLedger.getRecord!(`a2a-task:${task.id}`))!;
    expect(stored.split(input.text).length - 1).toBe(1);
    expect(stored).not.toContain(junk);
    expect(stored.length).toBeLessThan(40_000);
    // GetTask still shows the caller's message with its job, and the job (capability, deadline).
    const got = (await rpc03(apps.prod.url, "tasks/get", { id: task.id }, activated)).body.result;
    expect(got.history[0].parts[0].data).toEqual({ capability: "echo", input });
    expect(got.history[0].metadata.deadline).toBe(deadline);
    expect(got.metadata.job).toMatchObject({ capability: "echo", deadline });
    const ended = (
      await rpc03(
        apps.dev.url,
        "message/send",
        message03({ capability: "cheap", input: { text: "x" } }),
      )
    ).body.result;
    expect(ended.status.state).toBe("completed");
    // Unpaid: the payment window (X402_MAX_TIMEOUT_SECONDS, 300 s) from its last change, not days.
    const kept = await getTaskAfter(apps.prod.url, task.id, 300 - 5, start);
    expect(kept.result.status.state).toBe("input-required");
    const gone = await getTaskAfter(apps.prod.url, task.id, 300 + 5, start);
    expect(gone.error.message).toMatch(/not found/i);
    const day = 24 * 3600;
    const still = await getTaskAfter(apps.dev.url, ended.id, day - 60, start);
    expect(still.result.status.state).toBe("completed");
    const after = await getTaskAfter(apps.dev.url, ended.id, day + 60, start);
    expect(after.error.message).toMatch(/not found/i);
  });

  it("a cancel of an unpaid task holds its claim minutes, not the deadline plus a day (cancels are free: claims must not pile up)", async () => {
    const start = Date.now();
    const deadline = Math.floor(start / 1000) + 6 * 24 * 3600;
    const first = message03({ capability: "echo", input: { text: "c" } }, { deadline });
    const task = (await rpc03(apps.prod.url, "message/send", first, activated)).body.result;
    const cancel = await rpc03(apps.prod.url, "tasks/cancel", { id: task.id }, activated);
    expect(cancel.body.result.status.state).toBe("canceled");
    const claim = () => prodLedger.claimRecord!(`a2a-claim:${task.id}`, "probe", 1000);
    expect(await claim()).toBe("cancelled");
    vi.useFakeTimers({ toFake: ["Date"], now: start + 11 * 60_000 });
    try {
      expect(await claim()).toBeUndefined(); // gone: the canceled task refuses payments by itself
    } finally {
      vi.useRealTimers();
    }
  });

  it("a task whose job runs on the queue is kept until its deadline plus a day: a result charged while nobody polled is still there", () => {
    const now = Date.now();
    const job = { capability: "echo", input: {}, deadline: now / 1000 + 60, resourceUrl: "" };
    const task = (metadata: Record<string, unknown>): any => ({
      id: "t",
      contextId: "c",
      status: { state: 2, message: undefined, timestamp: undefined },
      artifacts: [],
      history: [],
      metadata: { job, ...metadata },
    });
    expect(taskTtlMs(task({}), 300, now)).toBe((60 + 300) * 1000);
    expect(taskTtlMs(task({ queued_job: "job_1" }), 300, now)).toBe((60 + 24 * 3600) * 1000);
  });

  it("waiting for its payment: the window, whatever the deadline; once a paying turn came, its deadline plus the window", () => {
    const now = Date.now();
    const deadline = now / 1000 + 6 * 24 * 3600;
    const job = { capability: "echo", input: {}, deadline, resourceUrl: "" };
    const turn = (metadata: Record<string, unknown>) => ({ role: 1, parts: [], metadata });
    const offered = (history: unknown[]): any => ({
      id: "t",
      contextId: "c",
      status: { state: 6, message: undefined, timestamp: undefined }, // input-required
      artifacts: [],
      history,
      metadata: { job },
    });
    const first = turn({ deadline });
    expect(taskTtlMs(offered([first]), 300, now)).toBe(300 * 1000);
    // Paid, its caller gone before settlement: the same payment may come again until then.
    const paying = turn({ "x402.payment.status": "payment-submitted" });
    const paid = offered([first, paying]);
    expect(taskTtlMs(paid, 300, now)).toBe((6 * 24 * 3600 + 300) * 1000);
  });
});

/** No A2A at `url`: POST /a2a is a 404; neither the agent card nor llms.txt names /a2a or a2a-x402. */
async function expectNoA2a(url: string): Promise<string> {
  const res = await fetch(`${url}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(res.status).toBe(404);
  const card = JSON.stringify(await (await fetch(`${url}/.well-known/agent-card.json`)).json());
  expect(card).not.toContain("/a2a");
  expect(card).not.toContain("a2a-x402");
  const llms = await (await fetch(`${url}/llms.txt`)).text();
  expect(llms).not.toContain("/a2a");
  expect(llms).not.toContain("a2a-x402");
  return /optional features: (.*) \(its owner/.exec(llms)![1]!;
}

describe("A2A=off", () => {
  it("POST /a2a is a 404 and the card lists neither the interface nor the extension", async () => {
    const off = await startApp(withDiscovery(makeAgent()), { ...PRODUCTION, env: { A2A: "off" } });
    try {
      // The project has A2A, its owner turned it off: llms.txt says both.
      expect(await expectNoA2a(off.url)).toMatch(/(^|, )a2a \(off here\)(,|$)/);
    } finally {
      await off.close();
    }
  });
});

describe("a project without the a2a feature", () => {
  it("serves no /a2a and claims neither the A2A interface nor the a2a-x402 extension", async () => {
    const copy = runtimeWithout(["a2a"]);
    try {
      const { createApp } = (await copy.load(
        "app.ts",
      )) as typeof import("../../templates/runtime/app.js");
      const app = await listen(
        createApp(withDiscovery(makeAgent()), { ...PRODUCTION, env: {}, logger: captureLogger() }),
      );
      try {
        expect(await expectNoA2a(app.url)).not.toMatch(/a2a/);
      } finally {
        await app.close();
      }
    } finally {
      copy.remove();
    }
  });
});
