// POST /mcp at its edges, over real HTTP with the official MCP SDK client where a client can say it:
// JSON-RPC batches (duplicate ids, size, tools/list answers) refused before anything runs or is charged,
// arguments nested too deep answered as invalid params (as /execute answers 400), the Host check on every
// interface (through the machine's non-loopback address), unknown tools as JSON-RPC errors, a dev-mode
// output that breaks its schema delivered in a form the SDK client accepts, and clients that accept JSON only.
import { networkInterfaces } from "node:os";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  anvilAccount,
  captureLogger,
  makeAgent,
  nowSeconds,
  offerV2,
  production,
  recordingSettler,
  signAuthorization,
} from "./helpers.js";
import { mcpServers } from "./mcp-helpers.js";

const { running, serve, connect } = mcpServers("mcp-surface-test");

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** POST /mcp with a raw body (what the SDK client cannot send: batches, odd Accept headers). */
async function rpc(url: string, body: unknown, headers: Record<string, string> = MCP_HEADERS) {
  const res = await fetch(`${url}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

/** A paid tools/call of echo with a fresh, valid authorization (verified by a recording settler). */
async function paidCall(id: number) {
  const { authorization, signature } = await signAuthorization(anvilAccount(), {
    value: "10000",
    validBefore: String(nowSeconds() + 300),
  });
  const payment = {
    x402Version: 2,
    resource: { url: "mcp://tool/echo" },
    accepted: offerV2("10000"),
    payload: { signature, authorization },
  };
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "hi" }, _meta: { "x402/payment": payment } },
  };
}

describe("JSON-RPC batches on /mcp", () => {
  it("refuses two requests with the same id before anything runs: nothing charged", async () => {
    const settler = recordingSettler();
    const { url, agent } = await serve(production(settler));
    const refused = await rpc(url, [await paidCall(1), await paidCall(1)]);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect(refused.body.error.message).toMatch(/two requests in this batch have the id 1/);
    expect(agent.calls.echo).toBeUndefined();
    expect(settler.calls).toEqual([]); // not even verified
    // The same two paid calls with their own ids: both run, both are answered, each charged once.
    const answered = await rpc(url, [await paidCall(1), await paidCall(2)]);
    expect(answered.status).toBe(200);
    expect(answered.body.map((a: { id: number }) => a.id).sort()).toEqual([1, 2]);
    expect(agent.calls.echo).toBe(2);
    expect(settler.settled()).toBe(2);
  });

  it("bounds a batch's size and its tools/list requests, with JSON-RPC errors", async () => {
    const { url, logger } = await serve();
    const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
    const many = await rpc(
      url,
      Array.from({ length: 21 }, (_, i) => ping(i)),
    );
    expect(many.status).toBe(400);
    expect(many.body.error).toMatchObject({ code: -32600 });
    expect(many.body.error.message).toMatch(/at most 20 messages \(this one has 21\)/);
    const lists = await rpc(url, [list(1), list(2)]);
    expect(lists.status).toBe(400);
    expect(lists.body.error.message).toMatch(/at most 1 tools\/list/);
    expect(logger.lines.filter((l) => l.message === "request refused")).toHaveLength(2);
    // Within the bounds a batch is answered in full.
    const fine = await rpc(url, [list(1), ...Array.from({ length: 19 }, (_, i) => ping(i + 2))]);
    expect(fine.status).toBe(200);
    expect(fine.body).toHaveLength(20);
    expect(fine.body.find((a: { id: number }) => a.id === 1).result.tools).toHaveLength(5);
  });
});

describe("a message that is no JSON-RPC 2.0 message", () => {
  const call = { method: "tools/call", params: { name: "echo", arguments: { text: "x" } } };
  it.each([
    ["jsonrpc 1.0", { jsonrpc: "1.0", id: 1, ...call }, /`jsonrpc` must be "2.0"/],
    ["no jsonrpc", { id: 1, ...call }, /`jsonrpc` must be "2.0"/],
    [
      "an object id",
      { jsonrpc: "2.0", id: { a: 1 }, ...call },
      /`id` must be a string or a number/,
    ],
    ["a null id", { jsonrpc: "2.0", id: null, ...call }, /`id` must be a string or a number/],
    ["no method, no result", { jsonrpc: "2.0", id: 1 }, /needs a string `method`/],
    ["a bare JSON string", "tools/list", /JSON but not a JSON-RPC message/],
    ["a bare null", null, /JSON but not a JSON-RPC message/],
    ["a number in a batch", [1], /must be a JSON-RPC object/],
    [
      "in a batch",
      [
        { jsonrpc: "2.0", id: 1, ...call },
        { id: 2, ...call },
      ],
      /`jsonrpc`/,
    ],
  ])(
    "%s: -32600 Invalid Request (the SDK said -32700 parse error); nothing run",
    async (_, body, named) => {
      const { url, agent } = await serve();
      const res = await rpc(url, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      expect(res.body.error.message).toMatch(named);
      expect(agent.calls.echo).toBeUndefined();
    },
  );

  it("a client's response (an id and a result, no method) is still a message the SDK takes", async () => {
    const { url } = await serve();
    const res = await rpc(url, { jsonrpc: "2.0", id: 1, result: {} });
    expect(res.status).toBe(202);
  });
});

describe("a tools/call whose params are not {name, arguments?, _meta?}", () => {
  it.each([
    [
      "arguments an array",
      { name: "echo", arguments: ["x"] },
      /params\.arguments must be an object/,
    ],
    ["arguments null", { name: "echo", arguments: null }, /params\.arguments must be an object/],
    ["no name", { arguments: { text: "x" } }, /params\.name must be the tool's name/],
    [
      "_meta a string",
      { name: "echo", arguments: { text: "x" }, _meta: "x" },
      /params\._meta must be an object/,
    ],
    ["params missing", undefined, /params must be an object/],
    // An own key, as JSON.parse makes it: the SDK would drop it and run the job on { text: "x" }.
    [
      "a __proto__ key in the arguments",
      { name: "echo", arguments: { text: "x", opts: { ["__proto__"]: { admin: true } } } },
      /a key named "__proto__" in params, which the MCP SDK drops[\s\S]*POST \/execute/,
    ],
  ])(
    "%s: invalid params (-32602) under its id, saying what is wrong; nothing run",
    async (_what, params, named) => {
      const { url, agent } = await serve();
      const res = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          ...(params !== undefined && { params }),
        }),
      });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { error: { message: string } };
      expect(answer).toMatchObject({ jsonrpc: "2.0", id: 9, error: { code: -32602 } });
      expect(answer.error.message).toMatch(named);
      expect(answer.error.message).toMatch(/nothing was run or charged/);
      expect(agent.calls.echo).toBeUndefined();
    },
  );
});

describe("tool arguments nested too deep", () => {
  const nested = (levels: number) => {
    let deep: Record<string, unknown> = { text: "x" };
    for (let i = 0; i < levels; i++) deep = { nested: deep };
    return deep;
  };

  it("5,000 levels are invalid params (-32602) under the request's id, as /execute answers 400", async () => {
    const { url, agent } = await serve();
    // As JSON text: deeper than JSON.stringify (and the SDK client) can go here.
    const deep = `${'{"nested":'.repeat(5000)}{"text":"x"}${"}".repeat(5000)}`;
    const args = `{"text":"hi","deep":${deep}}`;
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":${args}}}`,
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { error: { message: string } };
    expect(answer).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32602 } });
    expect(answer.error.message).toMatch(/nested more than 64 levels deep/);
    const viaHttp = await fetch(`${url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"service_version":"1.0","job_id":"deep","deadline":${nowSeconds() + 60},"task":{"capability":"echo","input":${args}}}`,
    });
    expect(viaHttp.status).toBe(400);
    expect(((await viaHttp.json()) as { error: string }).error).toMatch(/nested more than 64/);
    expect(agent.calls.echo).toBeUndefined();
  });

  it("are a JSON-RPC error for the official SDK client too, and the connection keeps working", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    const error = await client
      .callTool({ name: "echo", arguments: { text: "hi", deep: nested(1000) } })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect(agent.calls.echo).toBeUndefined();
    expect((await client.callTool({ name: "echo", arguments: { text: "a" } })).isError).toBeFalsy();
  });
});

/** The machine's first non-loopback address (IPv4 preferred), if it has one. */
function outsideAddress(): string | undefined {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  const outside = all.filter((a) => !a.internal);
  return (outside.find((a) => a.family === "IPv4") ?? outside[0])?.address;
}

/** tools/list to `address`:`port` with the given Host header: the HTTP status. */
function listWithHost(address: string, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: address, port, path: "/mcp", method: "POST", headers: { ...MCP_HEADERS, host } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
  });
}

const address = outsideAddress();

describe.skipIf(address === undefined)(
  `the Host check through ${address ?? "no"} (not loopback)`,
  () => {
    it("refuses a Host that is not this server's, logs it, and serves its names", async () => {
      const logger = captureLogger();
      const app = createApp(makeAgent(), {
        devMode: true,
        env: { ALLOWED_HOSTS: "agent.internal, Other.Example" },
        publicUrl: "https://agent.example.com",
        logger,
      });
      const server = await new Promise<import("node:http").Server>((resolve) => {
        const s = app.listen(0, address!, () => resolve(s));
      });
      running.push({
        url: "",
        server,
        close: () =>
          new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
      });
      const { port } = server.address() as AddressInfo;
      expect(await listWithHost(address!, port, "evil.example")).toBe(403);
      expect(await listWithHost(address!, port, `evil.example:${port}`)).toBe(403);
      const refusal = logger.lines.find((l) => l.message === "request refused");
      expect(refusal?.fields).toMatchObject({ status: 403, host: "evil.example", path: "/mcp" });
      expect(refusal?.fields.request_id).toEqual(expect.any(String));
      // Its names: PUBLIC_URL's host, ALLOWED_HOSTS (any case), the loopback names, an IP address.
      for (const host of [
        "agent.example.com",
        `agent.internal:${port}`,
        "other.example",
        `localhost:${port}`,
        `${address!.includes(":") ? `[${address}]` : address}:${port}`,
      ])
        expect(await listWithHost(address!, port, host), host).toBe(200);
    });
  },
);

describe("MCP answers the SDK client accepts", () => {
  it("an unknown tool is a JSON-RPC error -32602 naming the tools, and runs nothing", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    const error = await client.callTool({ name: "nope", arguments: {} }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toMatch(/Unknown tool: "nope"; available: "echo"/);
    expect(Object.keys(agent.calls)).toEqual([]);
  });

  it("dev mode: an output that breaks its schema reaches the client as text with a warning", async () => {
    const { url } = await serve();
    const client = await connect(url);
    await client.listTools(); // the client now checks structured results against the output schema
    const result = await client.callTool({ name: "bad_output", arguments: { text: "hi" } });
    expect(result.structuredContent).toBeUndefined();
    expect(result.isError).toBe(true);
    const content = result.content as Array<{ type: string; text: string }>;
    expect(JSON.parse(content[0]!.text)).toEqual({ text: "hi", secret: "extra" }); // as /execute delivers it
    expect(content[1]!.text).toMatch(/warning \(dev mode\): this output does not match.*secret/);
    // A good output is still structured.
    const good = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(good.structuredContent).toEqual({ text: "hi" });
  });

  it("serves a client that accepts JSON only, or sends no Accept; one that takes no JSON gets 406", async () => {
    const { url } = await serve();
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    for (const accept of ["application/json", "*/*"]) {
      const res = await rpc(url, list, { "content-type": "application/json", accept });
      expect(res.status, accept).toBe(200);
      expect(res.body.result.tools).toHaveLength(5);
    }
    const none = await rpc(url, list, { "content-type": "application/json" });
    expect(none.status).toBe(200);
    const html = await rpc(url, list, { "content-type": "application/json", accept: "text/html" });
    expect(html.status).toBe(406);
  });

  it("a call asking for progress is an event stream only for a client that takes one; a JSON-only client gets JSON", async () => {
    const { url } = await serve();
    const call = {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" }, _meta: { progressToken: "p" } },
    };
    const post = (accept: string) =>
      fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept },
        body: JSON.stringify(call),
      });
    const json = await post("application/json");
    expect(json.headers.get("content-type")).toMatch(/^application\/json/);
    expect(
      ((await json.json()) as { result: { structuredContent: unknown } }).result,
    ).toMatchObject({ structuredContent: { text: "hi" } });
    const stream = await post("application/json, text/event-stream");
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await stream.text();
    expect(events).toContain('"method":"notifications/progress"');
    expect(events).toContain('"structuredContent":{"text":"hi"}');
  });

  it("progress starts with the job: an unpaid call gets its PaymentRequired alone, the paid one progress", async () => {
    const settler = recordingSettler();
    const { url, agent } = await serve(production(settler));
    // As an event stream (the client takes one): what a progress notification would come in.
    const streamed = async (call: { params: { _meta?: object } }) => {
      const _meta = { ...call.params._meta, progressToken: 1 };
      const body = JSON.stringify({ ...call, params: { ...call.params, _meta } });
      const res = await fetch(`${url}/mcp`, { method: "POST", headers: MCP_HEADERS, body });
      expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      return res.text();
    };
    const paid = await paidCall(6);
    const unpaid = await streamed({ ...paid, params: { ...paid.params, _meta: {} } });
    expect(unpaid).toContain('"x402Version":2');
    expect(unpaid).not.toContain("notifications/progress");
    expect(agent.calls.echo).toBeUndefined();
    const answered = await streamed(paid);
    expect(answered).toContain('"method":"notifications/progress"');
    expect(answered).toContain('"structuredContent":{"text":"hi"}');
    expect(settler.settled()).toBe(1);
  });
});
