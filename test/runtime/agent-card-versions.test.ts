// The agent card negotiated by A2A-Version: a 1.x client gets the A2A 1.0 card (supportedInterfaces), a
// client that names no version (every A2A 0.3 client) or a 0.x one gets the same card in A2A 0.3's shape
// (url, preferredTransport, additionalInterfaces, protocolVersion) plus the 1.0 card's supportedInterfaces, as
// the SDK's own 0.3 card handler embeds them; each shape with its own ETag and every answer varying by A2A-Version. Checked with @a2a-js/sdk 1.3.0: the 1.0 ProtoJSON codec and ClientFactory,
// and its 0.3 compatibility layer (card detection and translation, the 0.3 JSON-RPC client transport).
// Until the A2A transport (a2a/) is in this tree, the transport list holds a stand-in whose card interface
// is A2A JSON-RPC at /a2a, served there by the SDK's own JSON-RPC handler (0.3 compatibility on).
import { randomUUID } from "node:crypto";
import express from "express";
import { AgentCard, SendMessageRequest } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from "@a2a-js/sdk/client";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";
import {
  isLegacyAgentCard,
  LegacyJsonRpcTransport,
  parseLegacyAgentCard,
} from "@a2a-js/sdk/compat/v0_3/client";
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from "@a2a-js/sdk/server";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../templates/runtime/config.js";
import { createDiscovery, mountDiscovery } from "../../templates/runtime/discovery/routes.js";
import { MCP_TRANSPORT } from "../../templates/runtime/mcp/transport.js";
import type { Transport } from "../../templates/runtime/transport.js";
import { withDiscovery } from "./discovery-fixture.js";
import { captureLogger, listen, makeAgent, PRODUCTION, type Running, startApp } from "./helpers.js";

const CARD = "/.well-known/agent-card.json";
const V1 = { "A2A-Version": "1.0" };

/** Stand-in for the A2A transport: its card interface only (the SDK answers at /a2a, see serveA2a). */
const A2A_STAND_IN: Transport = {
  name: "a2a",
  routes: [{ path: "/a2a", methods: "POST" }],
  mount: () => undefined,
  discovery: {
    cardInterface: (base) => ({
      url: `${base}/a2a`,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    }),
  },
};

/** An executor that answers every message with one agent message. */
const replies: AgentExecutor = {
  async execute(ctx, bus) {
    bus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        contextId: ctx.contextId,
        taskId: "",
        role: 2, // ROLE_AGENT
        parts: [
          {
            content: { $case: "text", value: "pong" },
            metadata: undefined,
            filename: "",
            mediaType: "",
          },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
    bus.finished();
  },
  async cancelTask() {},
};

/**
 * A production app serving the discovery documents for POST /execute, MCP and the A2A stand-in, and the
 * SDK's JSON-RPC handler at /a2a, whose card is the served 1.0 card plus a 0.3 JSON-RPC mirror (the SDK
 * answers a 0.3 request only when its card declares one).
 */
async function serveA2a(): Promise<Running> {
  const agent = withDiscovery(makeAgent());
  const config = resolveConfig({ ...PRODUCTION, env: {} });
  const transports = [MCP_TRANSPORT, A2A_STAND_IN];
  const discovery = createDiscovery(agent, config, {
    transports,
    paths: new Set(["/execute", "/mcp", "/a2a"]),
    unusedSchemas: [],
  });
  const app = express();
  app.set("etag", false);
  mountDiscovery(app, discovery, config, captureLogger());
  let base = "";
  const handler = async () => {
    await discovery.loaded();
    const card = AgentCard.fromJSON(JSON.parse(discovery.document("card", base).body.toString()));
    card.supportedInterfaces = duplicateInterfacesForLegacy(card.supportedInterfaces, ["JSONRPC"]);
    return new DefaultRequestHandler(card, new InMemoryTaskStore(), replies);
  };
  let rpc: Promise<express.RequestHandler> | undefined;
  app.use("/a2a", async (req, res, next) => {
    rpc ??= handler().then((requestHandler) =>
      jsonRpcHandler({
        requestHandler,
        userBuilder: UserBuilder.noAuthentication,
        legacyCompat: { enabled: true },
      }),
    );
    (await rpc)(req, res, next);
  });
  const running = await listen(app as never);
  base = running.url;
  return running;
}

/** What a 0.3-only reader sees of the 0.3 card: all but the embedded 1.0 interfaces. */
function legacyOnly(card: any): any {
  const { supportedInterfaces: _v1, ...v03 } = card;
  return v03;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** Every field A2A 0.3.0's JSON schema requires of an AgentCard and of each AgentSkill. */
const V03_CARD_REQUIRED = [
  "capabilities",
  "defaultInputModes",
  "defaultOutputModes",
  "description",
  "name",
  "protocolVersion",
  "skills",
  "url",
  "version",
];
const V03_SKILL_REQUIRED = ["description", "id", "name", "tags"];

const ping = () =>
  SendMessageRequest.fromJSON({
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "ping" }] },
  });

/** A message sent as a client that read `card`: declaring the extensions it requires. */
async function sendPing(client: Awaited<ReturnType<ClientFactory["createFromUrl"]>>) {
  const card = await client.getAgentCard();
  const required = (card.capabilities?.extensions ?? [])
    .filter((e) => e.required)
    .map((e) => e.uri);
  return client.sendMessage(ping(), {
    serviceParameters: ServiceParameters.create(withA2AExtensions(...required)),
  });
}

let a2a: Running;
let plain: Awaited<ReturnType<typeof startApp>>;
beforeAll(async () => {
  a2a = await serveA2a();
  // The real app without A2A: /execute and /mcp.
  plain = await startApp(withDiscovery(makeAgent()), { ...PRODUCTION, env: { A2A: "off" } });
});
afterAll(async () => {
  await a2a.close();
  await plain.close();
});

describe("the agent card by A2A-Version", () => {
  it("no A2A-Version (a 0.3 client): the 0.3 card, its url the A2A JSON-RPC endpoint, only A2A transports, every field 0.3 requires", async () => {
    const res = await get(`${a2a.url}${CARD}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("vary")).toMatch(/\bA2A-Version\b/);
    const card = JSON.parse(res.text);
    // 0.3 readers (the A2A TCK) refuse a transport they do not know: /execute and /mcp are in the 1.0 card.
    expect(card).toMatchObject({
      protocolVersion: "0.3.0",
      url: `${a2a.url}/a2a`,
      preferredTransport: "JSONRPC",
      additionalInterfaces: [{ url: `${a2a.url}/a2a`, transport: "JSONRPC" }],
    });
    // The 1.0 interfaces ride along, as @a2a-js/sdk's 0.3 card handler embeds them: a 1.0 reader that
    // sends no A2A-Version (the A2A TCK) finds its field; 0.3 readers ignore it.
    const v1 = JSON.parse((await get(`${a2a.url}${CARD}`, V1)).text);
    expect(card.supportedInterfaces).toEqual(v1.supportedInterfaces);
    for (const field of V03_CARD_REQUIRED) expect(card, field).toHaveProperty(field);
    for (const skill of card.skills)
      for (const field of V03_SKILL_REQUIRED) expect(skill, field).toHaveProperty(field);
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual([
      "echo",
      "cheap",
      "slow",
      "bad_output",
      "throws",
    ]);
  });

  it("0.3 and 1.0 are the same card: the SDK's 0.3 translation gives the 1.0 card's skills, capabilities and endpoints", async () => {
    const card03 = JSON.parse((await get(`${a2a.url}${CARD}`, { "A2A-Version": "0.3" })).text);
    const v1 = JSON.parse((await get(`${a2a.url}${CARD}`, V1)).text);
    // The SDK reads a card with supportedInterfaces as 1.0 (its own 0.3 card too); a 0.3-only reader
    // sees the rest of it.
    expect(isLegacyAgentCard(card03)).toBe(false);
    const v03 = legacyOnly(card03);
    expect(isLegacyAgentCard(v03)).toBe(true);
    expect(isLegacyAgentCard(v1)).toBe(false);
    expect(AgentCard.toJSON(AgentCard.fromJSON(v1))).toStrictEqual(v1); // canonical 1.0 ProtoJSON
    const fromV03 = parseLegacyAgentCard(v03);
    const fromV1 = AgentCard.fromJSON(v1);
    for (const field of ["name", "description", "version", "documentationUrl", "skills"] as const)
      expect(fromV03[field], field).toEqual(fromV1[field]);
    expect(fromV03.capabilities).toEqual(fromV1.capabilities); // the x402 extension, unchanged
    // The same A2A endpoints; the 1.0 card also lists the service's other protocols.
    const endpoints = (card: AgentCard) =>
      card.supportedInterfaces.map((i) => [i.url, i.protocolBinding]);
    const a2aOnly = endpoints(fromV1).filter(([, binding]) => binding === "JSONRPC");
    expect(new Set(endpoints(fromV03).map(String))).toEqual(new Set(a2aOnly.map(String)));
    expect(endpoints(fromV1).map(([, binding]) => binding)).toEqual(["JSONRPC", "x402-job", "MCP"]);
    expect(fromV03.supportedInterfaces[0]).toMatchObject({
      url: `${a2a.url}/a2a`,
      protocolBinding: "JSONRPC",
      protocolVersion: "0.3.0",
    });
  });

  it("A2A clients of both versions reach the A2A endpoint from the card: 0.3 (no A2A-Version, message/send at `url`) and 1.0 (SendMessage)", async () => {
    // What every 0.3 client does: the card without A2A-Version, then JSON-RPC message/send at its url.
    const v03 = legacyOnly(JSON.parse((await get(`${a2a.url}${CARD}`)).text));
    expect(v03.preferredTransport).toBe("JSONRPC");
    const required = (v03.capabilities.extensions ?? [])
      .filter((e: { required?: boolean }) => e.required)
      .map((e: { uri: string }) => e.uri);
    const raw = new LegacyJsonRpcTransport({ endpoint: v03.url });
    const answer = await raw.sendMessage(ping(), {
      serviceParameters: { "X-A2A-Extensions": required.join(",") },
    });
    expect(JSON.stringify(answer)).toContain("pong");

    // The SDK in 0.3 compatibility mode, fetching the card as a 0.3 client (no A2A-Version, and only
    // 0.3's fields) and recording the JSON-RPC methods it sends: the 0.3 card leads it to message/send.
    const methods: string[] = [];
    const as03: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      headers.delete("A2A-Version");
      if (typeof init?.body === "string") methods.push(JSON.parse(init.body).method);
      const res = await fetch(input, { ...init, headers });
      if (!String(input).endsWith(CARD)) return res;
      return Response.json(legacyOnly(await res.json()), res);
    };
    const legacy = { legacyCompat: { enabled: true } };
    const compat = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ ...legacy, fetchImpl: as03 })],
        cardResolver: new DefaultAgentCardResolver({ ...legacy, fetchImpl: as03 }),
      }),
    );
    expect(JSON.stringify(await sendPing(await compat.createFromUrl(a2a.url)))).toContain("pong");
    expect(methods).toEqual(["message/send"]);

    // A 1.0 client (the SDK's default ClientFactory sends A2A-Version 1.0): the 1.0 card, SendMessage.
    const client = await new ClientFactory().createFromUrl(a2a.url);
    expect(JSON.stringify(await sendPing(client))).toContain("pong");
  });

  it("A2A-Version picks the shape: absent, empty or 0.x -> 0.3; 1.x and anything else -> 1.0", async () => {
    const shapes: [string | undefined, "0.3" | "1.0"][] = [
      [undefined, "0.3"],
      ["", "0.3"],
      ["0.3", "0.3"],
      ["0.3.0", "0.3"],
      ["0.2", "0.3"],
      ["1.0", "1.0"],
      [" 1.0 ", "1.0"],
      ["1.1", "1.0"],
      ["2.0", "1.0"],
      ["latest", "1.0"],
    ];
    for (const [version, shape] of shapes) {
      const headers: Record<string, string> =
        version === undefined ? {} : { "A2A-Version": version };
      const card = JSON.parse((await get(`${a2a.url}${CARD}`, headers)).text);
      if (shape === "0.3") expect(card.url, version).toBe(`${a2a.url}/a2a`);
      expect("preferredTransport" in card, version).toBe(shape === "0.3");
      expect(card.supportedInterfaces[0], version).toEqual(
        A2A_STAND_IN.discovery!.cardInterface!(a2a.url),
      );
    }
  });

  it("the version may be a query parameter, as A2A 1.0 allows; the header wins", async () => {
    const query = JSON.parse((await get(`${a2a.url}${CARD}?A2A-Version=1.0`)).text);
    expect(query.supportedInterfaces).toBeDefined();
    const both = JSON.parse(
      (await get(`${a2a.url}${CARD}?A2A-Version=1.0`, { "A2A-Version": "0.3" })).text,
    );
    expect(both.url).toBe(`${a2a.url}/a2a`);
  });
});

describe("caching per shape", () => {
  it("each shape has its own strong ETag; If-None-Match matches only its own shape; 200 and 304 both vary by A2A-Version", async () => {
    const v03 = await get(`${a2a.url}${CARD}`);
    const v1 = await get(`${a2a.url}${CARD}`, V1);
    const [etag03, etag1] = [v03.headers.get("etag")!, v1.headers.get("etag")!];
    expect(etag03).not.toBe(etag1);
    for (const res of [v03, v1]) {
      expect(res.headers.get("vary")).toMatch(/\bA2A-Version\b/);
      expect(res.headers.get("vary")).toMatch(/\bHost\b/);
      expect(res.headers.get("cache-control")).toBe("private, max-age=300");
    }
    const again03 = await get(`${a2a.url}${CARD}`, { "If-None-Match": etag03 });
    expect(again03.status).toBe(304);
    expect(again03.headers.get("vary")).toMatch(/\bA2A-Version\b/);
    const again1 = await get(`${a2a.url}${CARD}`, { ...V1, "If-None-Match": etag1 });
    expect(again1.status).toBe(304);
    // A cached 1.0 card does not stand for the 0.3 one, nor the other way round.
    const cross03 = await get(`${a2a.url}${CARD}`, { "If-None-Match": etag1 });
    expect(cross03.status).toBe(200);
    expect(cross03.text).toBe(v03.text);
    const cross1 = await get(`${a2a.url}${CARD}`, { ...V1, "If-None-Match": etag03 });
    expect(cross1.status).toBe(200);
    expect(cross1.text).toBe(v1.text);
  });

  it("with PUBLIC_URL (shared caches may keep it): Vary names A2A-Version, so a shared cache keeps the two shapes apart", async () => {
    const app = await startApp(withDiscovery(makeAgent()), {
      ...PRODUCTION,
      publicUrl: "https://agent.example.com",
    });
    try {
      for (const headers of [{}, V1]) {
        const res = await get(`${app.url}${CARD}`, headers);
        expect(res.headers.get("cache-control")).toBe("public, max-age=300");
        expect(res.headers.get("vary")).toBe("A2A-Version");
      }
    } finally {
      await app.close();
    }
  });
});

describe("without an A2A JSON-RPC interface (no a2a feature, or A2A=off)", () => {
  it("the 0.3 card's url is the first interface, POST /execute, named by its own binding; a 0.3 client refuses it instead of misusing it", async () => {
    const res = await get(`${plain.url}${CARD}`);
    const card = JSON.parse(res.text);
    expect(card).toMatchObject({
      protocolVersion: "0.3.0",
      url: `${plain.url}/execute`,
      preferredTransport: "x402-job",
      additionalInterfaces: [
        { url: `${plain.url}/execute`, transport: "x402-job" },
        { url: `${plain.url}/mcp`, transport: "MCP" },
      ],
    });
    for (const field of V03_CARD_REQUIRED) expect(card, field).toHaveProperty(field);
    expect(isLegacyAgentCard(legacyOnly(card))).toBe(true);
    const parsed = parseLegacyAgentCard(legacyOnly(card));
    expect(parsed.skills.map((s) => s.id)).toEqual(card.skills.map((s: { id: string }) => s.id));
    const legacy = { legacyCompat: { enabled: true } };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory(legacy)],
      }),
    );
    await expect(factory.createFromAgentCard(parsed)).rejects.toThrow(/No compatible transport/);
  });
});
