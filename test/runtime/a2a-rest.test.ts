// A2A's HTTP+JSON (REST) binding at /a2a/rest (templates/runtime/a2a/: the official @a2a-js/sdk
// 1.3.0 restHandler over the same request handler as POST /a2a), without a chain: the SDK's
// ClientFactory made from the agent card's URL with only the HTTP+JSON transport (every URL it
// fetched is recorded: no JSON-RPC). Dev mode: a task completes with the output as a DataPart
// artifact, GetTask reads it back. Production: the same refusals as JSON-RPC (a wrong DataPart, a
// call without a2a-x402: before any offer, nothing run); turn 1 is an input-required task with
// the HTTP 402's offer for the resource /a2a (the one JSON-RPC offers), readable on both bindings.
// The body limits and shutdown answer in the binding's error shape; CORS preflights; the card (1.0
// and 0.3 shapes) lists the interface and the SDK reaches it from either; A2A=off: 404.
// Paid turns on a chain: test/chain/a2a.test.ts.
import { randomUUID } from "node:crypto";
import { AgentCard } from "@a2a-js/sdk";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { describe, expect, it } from "vitest";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { createApp, runtimeOf } from "../../templates/runtime/app.js";
import { dataMessage, expectDevEcho, rpc03 } from "./a2a-helpers.js";
import { devAndProdForTests } from "./dev-and-prod.js";
import { withDiscovery } from "./discovery-fixture.js";
import {
  captureLogger,
  job,
  listen,
  makeAgent,
  post,
  PRODUCTION,
  startApp,
  unb64,
} from "./helpers.js";

const apps = devAndProdForTests(PRODUCTION);

const CARD = "/.well-known/agent-card.json";
const ACTIVATED = { "A2A-Extensions": X402_EXTENSION_URI };

/** The SDK's client from the card at `url`, speaking only HTTP+JSON; `urls`: every request it sent. */
async function restClient(url: string, legacy = false) {
  const urls: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (legacy) headers.delete("A2A-Version"); // as a 0.3 client: no version
    urls.push(`${init?.method ?? "GET"} ${String(input)}`);
    const res = await fetch(input, { ...init, headers });
    if (!legacy || !String(input).endsWith(CARD)) return res;
    // A 0.3-only reader does not know the 1.0 interfaces the 0.3 card also carries.
    const { supportedInterfaces: _v1, ...v03 } = (await res.json()) as Record<string, unknown>;
    return Response.json(v03, res);
  };
  const compat = legacy ? { legacyCompat: { enabled: true } } : {};
  const factory = new ClientFactory({
    transports: [new RestTransportFactory({ ...compat, fetchImpl: recording })],
    cardResolver: new DefaultAgentCardResolver({ ...compat, fetchImpl: recording }),
  });
  return { client: await factory.createFromUrl(url), urls };
}

/** A raw A2A 1.0 HTTP+JSON request under /a2a/rest. */
async function rest(url: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${url}/a2a/rest${path}`, {
    method,
    headers: { "content-type": "application/json", "A2A-Version": "1.0", ...headers },
    ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A 1.0 SendMessageRequest as ProtoJSON (what the REST binding takes). */
const send = (data: unknown, more: Record<string, unknown> = {}) => ({
  message: {
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts: [{ data }],
    ...more,
  },
});

describe("HTTP+JSON in dev mode", () => {
  it("the SDK's HTTP+JSON client from the card runs a job (completed, DataPart artifact) and GetTask reads it, all under /a2a/rest", async () => {
    const { client, urls } = await restClient(apps.dev.url);
    const result = await expectDevEcho(client, apps.devAgent, "re", 3);
    expect(urls).toEqual([
      `GET ${apps.dev.url}${CARD}`,
      `POST ${apps.dev.url}/a2a/rest/message:send`,
      `GET ${apps.dev.url}/a2a/rest/tasks/${result.id}`,
    ]);
    // The task is in the one task store: JSON-RPC reads it too.
    const { body } = await rpc03(apps.dev.url, "tasks/get", { id: result.id });
    expect(body.result.status.state).toBe("completed");
  });

  it("a 0.3 client (no A2A-Version, the card's 0.3 shape) reaches it at /a2a/rest/v1/message:send", async () => {
    const { client, urls } = await restClient(apps.dev.url, true);
    const result: any = await client.sendMessage({
      message: dataMessage({ capability: "cheap", input: { text: "old" } }),
    } as any);
    expect(result.status.state).toBe(3);
    expect(result.artifacts[0].parts[0].content.value).toEqual({ text: "old" });
    expect(urls).toEqual([
      `GET ${apps.dev.url}${CARD}`,
      `POST ${apps.dev.url}/a2a/rest/v1/message:send`,
    ]);
  });
});

describe("HTTP+JSON with payments on: the same checks as JSON-RPC", () => {
  it("a wrong DataPart is refused naming the capabilities, before any offer; nothing runs", async () => {
    const unknown = await rest(
      apps.prod.url,
      "POST",
      "/message:send",
      send({ capability: "nope", input: {} }),
      ACTIVATED,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/unknown capability "nope"; available: "echo"/);
    const invalid = await rest(
      apps.prod.url,
      "POST",
      "/message:send",
      send({ capability: "echo", input: { times: 2 } }),
      ACTIVATED,
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({
      status: "INVALID_ARGUMENT",
      message: expect.stringMatching(/nothing was run or charged/),
    });
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });

  it("a call without the a2a-x402 extension is refused; the SDK client gets the error", async () => {
    const refused = await rest(
      apps.prod.url,
      "POST",
      "/message:send",
      send({ capability: "echo", input: { text: "a" } }),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/A2A-Extensions/);
    const { client } = await restClient(apps.prod.url);
    await expect(
      client.sendMessage({
        message: dataMessage({ capability: "echo", input: { text: "a" } }),
      } as any),
    ).rejects.toThrow(/A2A-Extensions/);
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });

  it("turn 1: input-required with the HTTP 402's offer for /a2a; GetTask on either binding; a turn 2 without payment refused", async () => {
    const { client, urls } = await restClient(apps.prod.url);
    const options = { serviceParameters: ACTIVATED } as any;
    const task: any = await client.sendMessage(
      { message: dataMessage({ capability: "echo", input: { text: "a" } }) } as any,
      options,
    );
    expect(task.status.state).toBe(6); // TASK_STATE_INPUT_REQUIRED
    const metadata = task.status.message.metadata;
    expect(metadata["x402.payment.status"]).toBe("payment-required");
    const offer = metadata["x402.payment.required"];
    const http = await post(apps.prod.url, job("echo", { text: "a" }));
    expect(http.status).toBe(402);
    const strip = (o: any) => o.accepts.map(({ maxTimeoutSeconds: _, ...a }: any) => a);
    expect(strip(offer)).toEqual(strip(unb64(http.headers.get("payment-required")!)));
    // The resource of both bindings (a payment offered on one is taken on the other).
    expect(offer.resource.url).toBe(`${apps.prod.url}/a2a`);

    const got: any = await client.getTask({ id: task.id } as any, options);
    expect(got.status.state).toBe(6);
    expect(got.status.message.metadata["x402.payment.required"]).toEqual(offer);
    const viaRpc = await rpc03(apps.prod.url, "tasks/get", { id: task.id }, ACTIVATED);
    expect(viaRpc.body.result.status.state).toBe("input-required");
    expect(urls.every((u) => u.includes("/a2a/rest/") || u.endsWith(CARD))).toBe(true);

    const unpaid = await rest(
      apps.prod.url,
      "POST",
      "/message:send",
      send({}, { taskId: task.id, contextId: task.contextId }),
      ACTIVATED,
    );
    expect(unpaid.status).toBe(400);
    expect(unpaid.body.error.message).toMatch(/payment-submitted/);
    expect(apps.prodAgent.calls.echo).toBeUndefined();
  });
});

describe("HTTP+JSON bodies and shutdown, refused in the binding's error shape", () => {
  const note = (n: number) => ({ metadata: { note: "x".repeat(n) } });

  it("a body above the SDK's 100 kB but within MAX_BODY_BYTES runs the job, also as application/a2a+json", async () => {
    const before = apps.devAgent.calls.echo ?? 0;
    const big = send({ capability: "echo", input: { text: "big" } }, note(200_000));
    for (const type of ["application/json", "application/a2a+json"]) {
      const res = await rest(apps.dev.url, "POST", "/message:send", big, { "content-type": type });
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    }
    expect(apps.devAgent.calls.echo).toBe(before + 2);
  });

  it("above MAX_BODY_BYTES: 413; not JSON: 400; nested 5,000 deep: 400 naming the limit; nothing run", async () => {
    const before = apps.devAgent.calls.echo ?? 0;
    const large = send({ capability: "echo", input: { text: "big" } }, note(1_100_000));
    for (const type of ["application/json", "application/a2a+json"]) {
      const res = await rest(apps.dev.url, "POST", "/message:send", large, {
        "content-type": type,
      });
      expect(res.status).toBe(413);
      expect(res.body.error).toMatchObject({ code: 413, message: expect.stringMatching(/larger/) });
    }
    const notJson = await rest(apps.dev.url, "POST", "/message:send", "{nope");
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    const deep = "[".repeat(5000) + "]".repeat(5000);
    const text = JSON.stringify(send({ capability: "echo", input: { text: "d" } })).replace(
      '"text":"d"',
      `"text":${deep}`,
    );
    const nested = await rest(apps.dev.url, "POST", "/message:send", text);
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatchObject({
      status: "INVALID_ARGUMENT",
      message: expect.stringMatching(/nested more than \d+ levels/),
    });
    expect(apps.devAgent.calls.echo ?? 0).toBe(before);
  });

  it("while the server shuts down: 503 with Retry-After, nothing run", async () => {
    const agent = withDiscovery(makeAgent());
    const app = createApp(agent, { devMode: true, env: {}, logger: captureLogger() });
    const running = await listen(app);
    try {
      const drained = runtimeOf(app).drain.drain(1000);
      const res = await rest(
        running.url,
        "POST",
        "/message:send",
        send({ capability: "echo", input: { text: "late" } }),
      );
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(res.body.error).toMatchObject({
        code: 503,
        status: "UNAVAILABLE",
        message: expect.stringMatching(/shutting down.*nothing was run or charged/),
      });
      expect(agent.calls.echo).toBeUndefined();
      await drained;
    } finally {
      await running.close();
    }
  });
});

describe("CORS for the HTTP+JSON binding", () => {
  const preflight = (path: string, method: string) =>
    fetch(`${apps.prod.url}${path}`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example",
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "content-type, a2a-version, a2a-extensions",
      },
    });

  it.each([
    ["/a2a/rest/message:send", "POST"],
    ["/a2a/rest/tasks/some-id", "GET"],
    ["/a2a/rest/tasks/some-id:cancel", "POST"],
  ])("a preflight of %s allows %s and A2A's headers", async (path, method) => {
    const res = await preflight(path, method);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toContain(method);
    expect(res.headers.get("access-control-allow-headers")).toMatch(/A2A-Version/);
    expect(res.headers.get("access-control-allow-headers")).toMatch(/A2A-Extensions/);
  });
});

describe("the card lists the HTTP+JSON interface", () => {
  it("1.0: JSON-RPC first (preferred), then HTTP+JSON at /a2a/rest; the SDK's round trip keeps it", async () => {
    const v1: any = await (
      await fetch(`${apps.prod.url}${CARD}`, { headers: { "A2A-Version": "1.0" } })
    ).json();
    expect(v1.supportedInterfaces.map((i: any) => i.protocolBinding)).toEqual([
      "JSONRPC",
      "HTTP+JSON",
      "x402-job",
      "MCP",
    ]);
    expect(v1.supportedInterfaces.slice(0, 2)).toEqual([
      { url: `${apps.prod.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${apps.prod.url}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    expect(AgentCard.toJSON(AgentCard.fromJSON(v1))).toStrictEqual(v1);
    // A client speaking both bindings keeps JSON-RPC: the card lists it first.
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    const both = new ClientFactory({
      transports: [
        new RestTransportFactory({ fetchImpl: recording }),
        new JsonRpcTransportFactory({ fetchImpl: recording }),
      ],
    });
    const client = await both.createFromUrl(apps.dev.url);
    const result: any = await client.sendMessage({
      message: dataMessage({ capability: "cheap", input: { text: "rpc" } }),
    } as any);
    expect(result.status.state).toBe(3);
    expect(urls).toEqual([`${apps.dev.url}/a2a`]);
  });

  it("0.3: url and preferredTransport stay JSON-RPC; additionalInterfaces lists HTTP+JSON; the SDK's 0.3 parser reads it", async () => {
    const v03: any = await (await fetch(`${apps.prod.url}${CARD}`)).json();
    expect(v03.url).toBe(`${apps.prod.url}/a2a`);
    expect(v03.preferredTransport).toBe("JSONRPC");
    expect(v03.additionalInterfaces).toContainEqual({
      url: `${apps.prod.url}/a2a/rest`,
      transport: "HTTP+JSON",
    });
    const parsed = parseLegacyAgentCard(v03);
    expect(parsed.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: `${apps.prod.url}/a2a/rest`, protocolBinding: "HTTP+JSON" }),
    );
  });

  it("the card is also served under /a2a and /a2a/rest: a client given only an A2A URL resolves it there", async () => {
    for (const version of [{}, { "A2A-Version": "1.0" }] as Record<string, string>[]) {
      const root = await fetch(`${apps.prod.url}${CARD}`, { headers: version });
      for (const under of ["/a2a", "/a2a/rest"]) {
        const res = await fetch(`${apps.prod.url}${under}${CARD}`, { headers: version });
        expect(res.status, under).toBe(200);
        expect(res.headers.get("etag")).toBe(root.headers.get("etag"));
        expect(await res.text()).toBe(await root.clone().text());
      }
    }
    // A browser's preflight (the SDK's resolver sends A2A-Version) is answered, as at the root.
    const preflight = await fetch(`${apps.prod.url}/a2a${CARD}`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-headers": "a2a-version" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("A2A-Version");
    // The official SDK's resolver, given the JSON-RPC URL, finds the card and reaches the job.
    const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory()] });
    const client = await factory.createFromUrl(`${apps.dev.url}/a2a`);
    const result: any = await client.sendMessage({
      message: dataMessage({ capability: "cheap", input: { text: "from /a2a" } }),
    } as any);
    expect(result.status.state).toBe(3);
  });

  it("/llms.txt names both bindings", async () => {
    const text = await (await fetch(`${apps.prod.url}/llms.txt`)).text();
    expect(text).toContain(`A2A: JSON-RPC \`${apps.prod.url}/a2a\`, HTTP+JSON \`/a2a/rest\``);
  });
});

describe("A2A=off", () => {
  it("the REST paths are 404 and in no document", async () => {
    const off = await startApp(withDiscovery(makeAgent()), { ...PRODUCTION, env: { A2A: "off" } });
    try {
      const sent = await rest(off.url, "POST", "/message:send", send({}));
      expect(sent.status).toBe(404);
      expect(sent.body.error).toMatch(/A2A=off/);
      expect((await rest(off.url, "GET", "/tasks/x")).status).toBe(404);
      expect((await rest(off.url, "POST", "/v1/message:send", send({}))).status).toBe(404);
      for (const under of ["/a2a", "/a2a/rest"])
        expect((await fetch(`${off.url}${under}${CARD}`)).status, under).toBe(404);
      const card = await (
        await fetch(`${off.url}${CARD}`, { headers: { "A2A-Version": "1.0" } })
      ).text();
      expect(card).not.toContain("HTTP+JSON");
      expect(await (await fetch(`${off.url}/llms.txt`)).text()).not.toContain("/a2a/rest");
    } finally {
      await off.close();
    }
  });
});
