// POST /mcp, called by the official MCP SDK client (Client + StreamableHTTPClientTransport): the tools
// are the capabilities, a call runs the same pipeline as POST /execute (same outputs, same typed errors),
// and in production an unpaid call gets the x402 v2 PaymentRequired for the same offer as the HTTP 402.
// Payments that move real USDC are in test/chain/mcp.test.ts.
import { validateDiscoveryExtension } from "@x402/extensions/bazaar";
import { describe, expect, it } from "vitest";
import { derivedJobId } from "../../templates/runtime/mcp/call.js";
import { withDiscovery } from "./discovery-fixture.js";
import {
  anvilAccount,
  makeAgent,
  nowSeconds,
  post,
  production,
  signAuthorization,
  startApp,
} from "./helpers.js";
import { mcpServers } from "./mcp-helpers.js";

const { running, serve, connect } = mcpServers("mcp-test");

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await sleep(25);
  expect(done()).toBe(true);
}

const decode = (header: string | null) =>
  JSON.parse(Buffer.from(header ?? "", "base64").toString("utf8"));

describe("MCP in dev mode", () => {
  it("names the agent and lists one tool per capability, with the input validator's schema", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    expect(client.getServerVersion()).toMatchObject({
      name: "test-agent",
      version: "1.2.3",
      description: "runtime tests",
    });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(Object.keys(agent.capabilities));
    for (const tool of tools) {
      const capability = agent.capabilities[tool.name]!;
      expect(tool.inputSchema).toEqual(capability.validateInput.schema);
      expect(tool.description).toBe("test capability");
      expect(tool.annotations?.title).toBeTruthy();
    }
  });

  it("returns the same output as POST /execute, as structuredContent and as text", async () => {
    const { url } = await serve();
    const client = await connect(url);
    await client.listTools(); // the client then checks results against each tool's outputSchema
    const input = { text: "ab", times: "3" }; // coerced, as /execute coerces it
    const result = await client.callTool({ name: "echo", arguments: input });
    const viaHttp = await post(url, {
      service_version: "1.0",
      job_id: "j1",
      task: { capability: "echo", input },
      deadline: nowSeconds() + 60,
    });
    expect(viaHttp.status).toBe(200);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(viaHttp.body.output);
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify(viaHttp.body.output) }]);
    expect((result._meta as Record<string, unknown>).job_id).toBe(
      derivedJobId("echo", input, undefined),
    );
  });

  it("answers every failure as isError with the spec's error body", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    await client.listTools();
    const call = async (
      name: string,
      args: Record<string, unknown>,
      meta?: Record<string, unknown>,
    ) => {
      const result = await client.callTool({ name, arguments: args, ...(meta && { _meta: meta }) });
      expect(result.isError).toBe(true);
      const content = result.content as Array<{ text: string }>;
      expect(JSON.parse(content[0]!.text)).toEqual(result.structuredContent);
      return result.structuredContent as { status: string; error_type: string; error: string };
    };
    const validation = await call("echo", { text: "" });
    expect(validation).toMatchObject({ status: "failed", error_type: "validation" });
    expect(validation.error).toMatch(/input\.text/);
    // An unknown tool is a JSON-RPC error, not a tool result: mcp-surface.test.ts.
    expect(await call("throws", { text: "boom" })).toMatchObject({ error_type: "internal" });
    expect(await call("throws", { text: "deadline" })).toMatchObject({ error_type: "deadline" });
    // A deadline sent in _meta (Unix seconds) bounds the handler as /execute's does.
    const late = await call("slow", { ms: 5000 }, { deadline: Date.now() / 1000 + 1 });
    expect(late).toMatchObject({ error_type: "deadline" });
    expect(await call("echo", { text: "x" }, { deadline: nowSeconds() - 5 })).toMatchObject({
      error_type: "deadline",
    });
    expect(agent.calls.echo).toBeUndefined(); // neither the bad input nor the late job ran
  });

  it("takes job_id from _meta, and derives the same id for an identical call", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    const mine = await client.callTool({
      name: "echo",
      arguments: { text: "a" },
      _meta: { job_id: "my-job" },
    });
    expect(mine._meta).toMatchObject({ job_id: "my-job" });
    expect(agent.seen.echo!.ctx.jobId).toBe("my-job");
    const a = await client.callTool({ name: "echo", arguments: { text: "a", times: 2 } });
    const b = await client.callTool({ name: "echo", arguments: { times: 2, text: "a" } });
    expect(a._meta!.job_id).toBe(b._meta!.job_id);
    const c = await client.callTool({ name: "echo", arguments: { text: "b", times: 2 } });
    expect(c._meta!.job_id).not.toBe(a._meta!.job_id);
  });

  it("stops a call its client cancels (notifications/cancelled) while the connection stays open", async () => {
    const { url, agent } = await serve();
    const client = await connect(url);
    const controller = new AbortController();
    const call = client.callTool({ name: "slow", arguments: { ms: 20_000 } }, undefined, {
      signal: controller.signal,
    });
    await until(() => agent.calls.slow === 1);
    controller.abort(); // the official client sends notifications/cancelled, its POST still open
    await expect(call).rejects.toThrow();
    expect(await Promise.race([agent.aborted.then(() => "stopped"), sleep(5_000)])).toBe("stopped");
  });

  it("does not stop a call on a cancel from another session", async () => {
    const { url, agent } = await serve();
    const buyer = await connect(url);
    const other = await connect(url);
    const call = buyer.callTool({ name: "slow", arguments: { ms: 1_500 } });
    await until(() => agent.calls.slow === 1);
    // Both clients number their requests alike (initialize 0, this call 1): the other names the buyer's id.
    for (const requestId of [0, 1, 2])
      await other.notification({ method: "notifications/cancelled", params: { requestId } });
    expect(await call).toMatchObject({ structuredContent: { text: "done" } });
  });

  it("answers GET and DELETE with 405, and is a 404 with MCP=off", async () => {
    const { url } = await serve();
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${url}/mcp`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
    const off = await serve({ devMode: true, env: { MCP: "off" } });
    const res = await fetch(`${off.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/MCP=off/);
    // Any other unknown path names the endpoints this instance serves: /mcp is not one of them.
    const lost = await fetch(`${off.url}/nope`);
    const endpoints = ((await lost.json()) as { error: string }).error.split("endpoints: ")[1];
    expect(endpoints).toContain("POST /execute");
    expect(endpoints).not.toContain("/mcp");
  });

  it("refuses a Host that is not local on a local server (DNS rebinding)", async () => {
    const { url } = await serve();
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${url}/mcp`,
        {
          method: "POST",
          headers: {
            host: "attacker.example",
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    });
    expect(status).toBe(403);
  });

  it("answers a body that is not JSON with a JSON-RPC parse error", async () => {
    const { url } = await serve();
    const res = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
    // A body that says it is compressed and is not: the same parse error, not a 500.
    for (const encoding of ["gzip", "br"]) {
      const bad = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-encoding": encoding,
          accept: "application/json, text/event-stream",
        },
        body: '{"jsonrpc":"2.0"}',
      });
      expect(bad.status, encoding).toBe(400);
      expect(await bad.json()).toMatchObject({
        error: {
          code: -32700,
          message: expect.stringContaining("does not decompress as its Content-Encoding says"),
        },
      });
    }
  });
});

describe("MCP in production", () => {
  it("answers an unpaid call with the PaymentRequired of the capability's HTTP 402, for mcp://tool/<name>", async () => {
    const { url, agent } = await serve(production());
    const client = await connect(url);
    await client.listTools();
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result.isError).toBe(true);
    const required = result.structuredContent as any;
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(required);
    expect(required).toMatchObject({
      x402Version: 2,
      resource: { url: "mcp://tool/echo", mimeType: "application/json" },
    });
    const http = await post(url, {
      service_version: "1.0",
      job_id: "j",
      task: { capability: "echo", input: { text: "hi" } },
      deadline: nowSeconds() + 60,
    });
    expect(http.status).toBe(402);
    expect(required.accepts).toEqual(decode(http.headers.get("payment-required")).accepts);
    expect(agent.calls.echo).toBeUndefined();
  });

  it("declares the tool for x402 Bazaar catalogues as an MCP tool", async () => {
    const { url } = await serve(production());
    const client = await connect(url);
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    const bazaar = (result.structuredContent as any).extensions.bazaar;
    expect(bazaar.info.input).toMatchObject({
      type: "mcp",
      toolName: "echo",
      transport: "streamable-http",
    });
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
  });

  it("refuses a bad payment with a PaymentRequired saying why, and runs nothing", async () => {
    const { url, agent } = await serve(production());
    const client = await connect(url);
    await client.listTools();
    const required = (await client.callTool({ name: "echo", arguments: { text: "hi" } }))
      .structuredContent as any;
    const { authorization, signature } = await signAuthorization(anvilAccount(), {
      value: "1", // not the price
      validBefore: String(nowSeconds() + 300),
    });
    const payload = {
      x402Version: 2,
      resource: required.resource,
      accepted: required.accepts[0],
      payload: { signature, authorization },
    };
    const result = await client.callTool({
      name: "echo",
      arguments: { text: "hi" },
      _meta: { "x402/payment": payload },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      x402Version: 2,
      status: "failed",
      error_type: "payment",
    });
    expect((result.structuredContent as any).error).toMatch(/not the price/);
    expect((result.structuredContent as any).accepts).toEqual(required.accepts);
    const malformed = await client.callTool({
      name: "echo",
      arguments: { text: "hi" },
      _meta: { "x402/payment": "not a payload" },
    });
    expect((malformed.structuredContent as any).error).toMatch(
      /_meta\["x402\/payment"\] is not a PaymentPayload object/,
    );
    expect(agent.calls.echo).toBeUndefined();
  });
});

describe("MCP in the discovery documents", () => {
  const documents = async (env: Record<string, string>) => {
    // A2A off: only the job endpoint and MCP in the documents.
    const app = await startApp(withDiscovery(makeAgent()), {
      devMode: true,
      env: { A2A: "off", ...env },
    });
    running.push(app);
    const text = async (path: string, headers?: Record<string, string>) =>
      (await fetch(`${app.url}${path}`, { headers })).text();
    return {
      url: app.url,
      card: JSON.parse(await text("/.well-known/agent-card.json", { "A2A-Version": "1.0" })),
      openapi: JSON.parse(await text("/openapi.json")),
      llms: await text("/llms.txt"),
    };
  };

  it("lists /mcp beside /execute and tells an assistant how to connect, set a deadline and pay", async () => {
    const on = await documents({ MCP_DEADLINE_SECONDS: "90" });
    expect(on.card.supportedInterfaces.map((i: { url: string }) => i.url)).toEqual([
      `${on.url}/execute`,
      `${on.url}/mcp`,
    ]);
    expect(on.openapi.paths["/mcp"].post.operationId).toBe("mcp");
    expect(on.llms).toContain(`## MCP`);
    expect(on.llms).toContain(`\`${on.url}/mcp\``);
    expect(on.llms).toContain("`params._meta.deadline`");
    expect(on.llms).toContain("default now + 90 s");
    expect(on.llms).toContain("`params._meta.job_id`");

    const off = await documents({ MCP: "off" });
    expect(off.card.supportedInterfaces).toHaveLength(1);
    expect(off.openapi.paths["/mcp"]).toBeUndefined();
    expect(off.llms).not.toContain("/mcp");
  });
});
