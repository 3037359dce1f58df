// The discovery documents (A2A agent card, OpenAPI 3.1, llms.txt) served by real apps, in dev mode and in
// production, checked with the official tools: @a2a-js/sdk (types, ProtoJSON codec, card resolver) and
// @readme/openapi-parser. Plus their HTTP behaviour: ETag/304, HEAD, CORS, Cache-Control, 404 without
// discovery data, bounded memory for Host headers, and GET /about left exactly as it was.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { request } from "node:http";
import { promisify } from "node:util";
import { AgentCard, type AgentExtension, type AgentInterface, type AgentSkill } from "@a2a-js/sdk";
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { validate as validateOpenApi } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import * as Served from "../../templates/runtime/discovery/agent-card.js";
import { buildAgentCard } from "../../templates/runtime/discovery/agent-card.js";
import { X402_EXTENSION_URI } from "../../templates/runtime/a2a/x402.js";
import { paymentFacts } from "../../templates/runtime/discovery/facts.js";
import {
  BoundedCache,
  createDiscovery,
  MAX_CACHED_BASES,
} from "../../templates/runtime/discovery/routes.js";
import { resolveConfig } from "../../templates/runtime/config.js";
import { discoveryFor, only, withDiscovery } from "./discovery-fixture.js";
import { devAndProdForTests } from "./dev-and-prod.js";
import { createApp, runtimeOf } from "../../templates/runtime/app.js";
import {
  captureLogger,
  listen,
  PAY_TO,
  PRODUCTION,
  job,
  makeAgent,
  post,
  production,
  startApp,
} from "./helpers.js";

const CARD = "/.well-known/agent-card.json";
const PATHS = [CARD, "/openapi.json", "/llms.txt"] as const;
/** What an A2A 1.0 client sends: the card's 1.0 shape (agent-card-versions.test.ts has the 0.3 one). */
const V1 = { "A2A-Version": "1.0" };

const apps = devAndProdForTests(production());

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString("utf8") };
}

// ---- type-level: the card the runtime builds is an A2A 1.0 AgentCard, as the SDK types it ----

/** ProtoJSON of T: a field at its default value ("" / false / [] / {}) may be left out. */
type ProtoJson<T> = T extends (infer U)[]
  ? ProtoJson<U>[]
  : T extends object
    ? { [K in keyof T]?: ProtoJson<Exclude<T[K], undefined>> }
    : T;
/** Keys of A that B does not have (never when A only uses B's fields). */
type Extra<A, B> = Exclude<keyof A, keyof B>;
const noExtraFields: [
  Extra<Served.AgentCard, AgentCard>,
  Extra<Served.AgentSkill, AgentSkill>,
  Extra<Served.AgentInterface, AgentInterface>,
  Extra<Served.AgentExtension, AgentExtension>,
] extends [never, never, never, never]
  ? true
  : false = true;

describe("GET /.well-known/agent-card.json (A2A 1.0)", () => {
  it("is an AgentCard to the official SDK: types, ProtoJSON round trip, and its card resolver", async () => {
    const res = await get(`${apps.prod.url}${CARD}`, V1);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    // What a TypeScript client does with it.
    const card: AgentCard = JSON.parse(res.text);
    // The SDK reads every field we wrote (unknown or mistyped fields would be dropped or changed) and
    // writes back exactly the served card: it is canonical ProtoJSON.
    expect(AgentCard.toJSON(AgentCard.fromJSON(card))).toStrictEqual(card);
    const parsed = AgentCard.fromJSON(card);
    // A2A 1.0 reads the first interface as the preferred one: A2A's JSON-RPC endpoint and its HTTP+JSON one
    // (the `a2a` feature: a2a/) lead, then the job endpoint and MCP, which A2A clients skip.
    expect(parsed.supportedInterfaces).toEqual([
      {
        url: `${apps.prod.url}/a2a`,
        protocolBinding: "JSONRPC",
        protocolVersion: "1.0",
        tenant: "",
      },
      {
        url: `${apps.prod.url}/a2a/rest`,
        protocolBinding: "HTTP+JSON",
        protocolVersion: "1.0",
        tenant: "",
      },
      {
        url: `${apps.prod.url}/execute`,
        protocolBinding: "x402-job",
        protocolVersion: "1.0",
        tenant: "",
      },
      {
        url: `${apps.prod.url}/mcp`,
        protocolBinding: "MCP",
        protocolVersion: "2025-11-25",
        tenant: "",
      },
    ]);
    expect(parsed.securitySchemes).toEqual({});
    expect(parsed.securityRequirements).toEqual([]);
    expect(parsed.signatures).toEqual([]);

    const resolved = await new DefaultAgentCardResolver().resolve(apps.prod.url);
    expect(AgentCard.toJSON(AgentCard.fromJSON(resolved))).toStrictEqual(card);
    expect(noExtraFields).toBe(true);
  });

  it("the builder's output type fits the SDK's AgentCard (type-checked by tsc)", () => {
    const agent = withDiscovery(makeAgent());
    const config = resolveConfig({ ...PRODUCTION, env: {} });
    const built = buildAgentCard(
      agent,
      agent.discovery!,
      paymentFacts(agent, config),
      "https://a.example",
    );
    const typed: ProtoJson<AgentCard> = built;
    expect(AgentCard.toJSON(AgentCard.fromJSON(typed))).toStrictEqual(
      JSON.parse(JSON.stringify(built)),
    );
  });

  it("has one skill per capability, in order, with tags, a runnable example task and JSON modes", async () => {
    const card = JSON.parse((await get(`${apps.prod.url}${CARD}`, V1)).text);
    expect(card.name).toBe("test-agent");
    expect(card.description).toBe("runtime tests");
    expect(card.version).toBe("1.2.3");
    expect(card.documentationUrl).toBe(`${apps.prod.url}/llms.txt`);
    expect(card.capabilities.streaming).toBe(false);
    expect(card.capabilities.pushNotifications).toBe(false);
    expect(card.defaultInputModes).toEqual(["application/json"]);
    expect(card.defaultOutputModes).toEqual(["application/json"]);
    const names = Object.keys(apps.prodAgent.capabilities);
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(names);
    for (const skill of AgentCard.fromJSON(card).skills) {
      const discovery = apps.prodAgent.discovery!.capabilities[skill.id]!;
      expect(skill.name).toBe(skill.id);
      expect(skill.description).toBe("test capability");
      expect(skill.tags).toEqual(discovery.tags);
      expect(skill.examples.map((e) => JSON.parse(e))).toEqual([
        { capability: skill.id, input: discovery.exampleInput },
      ]);
      expect(skill.inputModes).toEqual(["application/json"]);
      expect(skill.outputModes).toEqual(["application/json"]);
      expect(skill.securityRequirements).toEqual([]);
    }
    // A skill's example task really runs (dev mode: free).
    const echo = JSON.parse(card.skills[0].examples[0]);
    const ran = await post(apps.dev.url, job(echo.capability, echo.input));
    expect(ran.status, ran.text).toBe(200);
    expect(ran.body.output).toEqual(apps.devAgent.discovery!.capabilities.echo!.exampleOutput);
  });

  it("production: the x402 extension is required and states network, asset, payee, endpoint and every price", async () => {
    const card = AgentCard.fromJSON(JSON.parse((await get(`${apps.prod.url}${CARD}`, V1)).text));
    // x402's, then async jobs' (the queue feature; a project without it: async-without-queue.test.ts).
    expect(card.capabilities!.extensions).toHaveLength(2);
    const x402 = card.capabilities!.extensions[0]!;
    const async = card.capabilities!.extensions[1]!;
    expect(async.uri).toBe("https://www.rfc-editor.org/rfc/rfc7240#section-4.1");
    expect(async.required).toBe(false);
    expect(async.description).toContain("`Prefer: respond-async`");
    expect(async.description).toContain(`GET ${apps.prod.url}/jobs/{id}`);
    expect(async.params).toEqual({
      prefer: "respond-async",
      poll: `${apps.prod.url}/jobs/{id}`,
      authorization: "Bearer <job_token>",
    });
    expect(x402.uri).toBe(X402_EXTENSION_URI);
    expect(x402.required).toBe(true);
    expect(x402.description).toMatch(/USDC/);
    expect(x402.params).toEqual({
      x402Version: 2,
      scheme: "exact",
      network: "eip155:84532",
      networkV1: "base-sepolia",
      asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      payTo: PAY_TO,
      currency: "USDC",
      endpoint: `${apps.prod.url}/a2a`, // paid in band over A2A (a2a/)
      prices: Object.fromEntries(
        Object.values(apps.prodAgent.capabilities).map((c) => [
          c.name,
          { amount: c.declaration.pricing.amount, atomic: c.priceAtomic },
        ]),
      ),
    });
    expect(x402.params!.prices.echo).toEqual({ amount: "0.01", atomic: "10000" });
    expect(x402.params!.prices.cheap).toEqual({ amount: "0.001", atomic: "1000" });
  });

  it("dev mode: the extension is not required, says jobs are free, and leaves out what is not configured", async () => {
    const text = (await get(`${apps.dev.url}${CARD}`, V1)).text;
    const served = JSON.parse(text);
    expect(served.capabilities.extensions[0]).not.toHaveProperty("required"); // false: ProtoJSON omits it
    const x402 = AgentCard.fromJSON(served).capabilities!.extensions[0]!;
    expect(x402.required).toBe(false);
    expect(x402.description).toMatch(/dev mode/);
    expect(x402.description).toMatch(/free/);
    expect(x402.params).not.toHaveProperty("network");
    expect(x402.params).not.toHaveProperty("payTo");
    expect(x402.params).not.toHaveProperty("asset");
    expect(x402.params!.prices.echo).toEqual({ amount: "0.01", atomic: "10000" });
    expect(AgentCard.toJSON(AgentCard.fromJSON(served))).toStrictEqual(served);

    // Dev mode with payment settings (validated, unused): those facts are known, so stated.
    const configured = await startApp(withDiscovery(makeAgent()), {
      devMode: true,
      payment: { payTo: PAY_TO, network: "base" },
    });
    try {
      const card = JSON.parse((await get(`${configured.url}${CARD}`, V1)).text);
      expect(card.capabilities.extensions[0].params).toMatchObject({
        network: "eip155:8453",
        networkV1: "base",
        payTo: PAY_TO,
      });
      expect(card.capabilities.extensions[0]).not.toHaveProperty("required");
    } finally {
      await configured.close();
    }
  });

  it("without descriptions, the card builds them from the names", async () => {
    const agent = withDiscovery(only(makeAgent(), "echo", "slow"));
    delete agent.description;
    delete agent.capabilities.echo!.declaration.description;
    const app = await startApp(agent, { devMode: true });
    try {
      const card = JSON.parse((await get(`${app.url}${CARD}`, V1)).text);
      expect(card.description).toBe(
        "test-agent: a pay-per-job agent service offering echo and slow.",
      );
      expect(card.skills[0].description).toMatch(/"echo"/);
      expect(card.skills[1].description).toBe("test capability");
    } finally {
      await app.close();
    }
  });
});

describe("GET /openapi.json", () => {
  it("is the generated document plus servers: valid OpenAPI 3.1 to @readme/openapi-parser", async () => {
    for (const app of [apps.dev, apps.prod]) {
      const res = await get(`${app.url}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const doc = JSON.parse(res.text);
      const result = await validateOpenApi(structuredClone(doc));
      expect(result.valid, JSON.stringify(result)).toBe(true);
      expect(doc.openapi).toBe("3.1.0");
      expect(doc.servers).toEqual([{ url: app.url }]);
      expect(doc.servers[0].url).toBe(app.url);
      // Plus POST /mcp (MCP is on by default), as one JSON-RPC operation needing no HTTP credential.
      expect(doc.paths["/mcp"].post.requestBody.content["application/json"]).toBeDefined();
      expect(doc.paths["/mcp"].post.security).toEqual([]);
    }
    const generated = discoveryFor(makeAgent()).openapi as any;
    expect(generated.paths["/mcp"]).toBeDefined(); // the generated document has it (MCP is on by default)
    expect(JSON.parse((await get(`${apps.prod.url}/openapi.json`)).text)).toEqual({
      ...generated,
      servers: [{ url: apps.prod.url }],
    });
    // Dev mode runs jobs for free: the same document, except that /execute asks for no payment.
    const devDoc = JSON.parse((await get(`${apps.dev.url}/openapi.json`)).text);
    const { security: _, description: devNote, ...devExecute } = devDoc.paths["/execute"].post;
    const { security: required, ...execute } = generated.paths["/execute"].post;
    expect(devDoc.paths["/execute"].post.security).toEqual([]);
    expect(devNote).toMatch(/^This server runs in dev mode: jobs are free/);
    expect(devExecute).toEqual(execute);
    expect(required).toEqual([{ "PAYMENT-SIGNATURE": [] }, { "X-PAYMENT": [] }]);
    // ... and declares no payment scheme, which nothing would use.
    const { securitySchemes: schemes, ...components } = generated.components;
    expect(Object.keys(schemes)).toEqual(["PAYMENT-SIGNATURE", "X-PAYMENT"]);
    expect({ ...devDoc, paths: { ...devDoc.paths, "/execute": undefined } }).toEqual({
      ...generated,
      paths: { ...generated.paths, "/execute": undefined },
      components,
      servers: [{ url: apps.dev.url }],
    });
    // The shared document is not changed by serving it.
    expect(apps.prodAgent.discovery!.openapi).not.toHaveProperty("servers");
    expect(apps.devAgent.discovery!.openapi.paths).toEqual(generated.paths);
  });

  it("an invalid document fails the same validator (the check can fail)", async () => {
    const doc = { ...discoveryFor(makeAgent()).openapi, servers: [{ url: apps.dev.url }] } as any;
    doc.paths["/execute"].post.responses = { "200": { content: {} } }; // a response needs a description
    const result = await validateOpenApi(doc);
    expect(result.valid).toBe(false);
  });
});

describe("GET /llms.txt", () => {
  it("names the agent, every capability with its price and fields, and how to call and pay", async () => {
    const res = await get(`${apps.prod.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = res.text;
    expect(text.startsWith("# test-agent\n\n> runtime tests\n")).toBe(true);
    for (const c of Object.values(apps.prodAgent.capabilities))
      expect(text).toContain(`### ${c.name}: ${c.declaration.pricing.amount} USDC per job`);
    expect(text).toContain("- `text` (string, required)");
    expect(text).toContain(`POST ${apps.prod.url}/execute`);
    for (const phrase of [
      "PAYMENT-REQUIRED",
      "PAYMENT-SIGNATURE",
      "402",
      "exact",
      "EIP-3009",
      "@x402/fetch",
      "wrapFetchWithPayment",
      "eip155:84532",
      "charged only when the job succeeds",
      "Long job? Add `Prefer: respond-async`",
      "default now + 45 s. Longer: send it on the unpaid call too, and a progressToken.",
      "Assistants (Claude, Cursor, VS Code) connect here",
      "but cannot pay: their paid calls stop at the PaymentRequired",
      "`x402Client.createPaymentPayload` of `@x402/fetch`; Python: `x402MCPSession` of `x402`, over Streamable HTTP",
      "same signature, capability, input; on any endpoint",
      "invalid or expired payment; with `Retry-After` (job still running, settlement unconfirmed): resend it identically then, never re-sign",
      "| 408 | deadline |",
      `A2A: JSON-RPC \`${apps.prod.url}/a2a\`, HTTP+JSON \`/a2a/rest\`; DataPart \`{capability, input}\` (or a text part holding that JSON); a2a-x402 v0.2, a task paid once; long job: return_immediately + GetTask.`,
      `(${apps.prod.url}/openapi.json)`,
      `(${apps.prod.url}/.well-known/agent-card.json)`,
      `(${apps.prod.url}/about)`,
      "optional features: solana, onchain, mcp, a2a, console, redis, queue, metrics, facilitator-auth (its owner adds one with `npm run add -- <feature>`)",
    ])
      expect(text).toContain(phrase);
    expect(text).not.toMatch(/free/);
    expect(text.length).toBeLessThan(6200); // an LLM context, not a manual (five capabilities here)
  });

  it("dev mode says jobs are free and asks for no payment", async () => {
    const text = (await get(`${apps.dev.url}/llms.txt`)).text;
    expect(text).toContain("jobs are free and no payment is needed");
    expect(text).not.toContain("PAYMENT-SIGNATURE");
    expect(text).toContain("### echo: 0.01 USDC per job (free in dev mode)");
  });

  it("its curl example runs as written: a dev-mode job completes", async () => {
    const text = (await get(`${apps.dev.url}/llms.txt`)).text;
    const script = /```sh\n([\s\S]*?)```/.exec(text)![1]!;
    expect(script).toMatch(/^curl /);
    const { stdout } = await promisify(execFile)("sh", ["-c", `${script.trim()} --silent`]);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ status: "completed", job_id: "job-0001" });
    expect(result.output).toEqual(apps.devAgent.discovery!.capabilities.echo!.exampleOutput);
  });
});

describe("HTTP behaviour of the discovery documents", () => {
  it.each(PATHS)(
    "%s: strong ETag of the exact bytes, Cache-Control, and If-None-Match -> 304",
    async (path) => {
      const first = await get(`${apps.prod.url}${path}`);
      expect(first.status).toBe(200);
      const etag = first.headers.get("etag")!;
      expect(etag).toBe(`"${createHash("sha256").update(first.bytes).digest("base64url")}"`);
      // No PUBLIC_URL: the URLs inside come from Host, so no shared cache may keep it, and it varies by Host.
      expect(first.headers.get("cache-control")).toBe("private, max-age=300");
      expect(first.headers.get("vary")).toMatch(/\bHost\b/);
      expect(first.headers.get("content-length")).toBe(String(first.bytes.length));

      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = await get(`${apps.prod.url}${path}`, { "If-None-Match": ifNoneMatch });
        expect(again.status, ifNoneMatch).toBe(304);
        expect(again.bytes.length).toBe(0);
        expect(again.headers.get("etag")).toBe(etag);
        expect(again.headers.get("cache-control")).toBe("private, max-age=300");
        expect(again.headers.get("access-control-allow-origin")).toBe("*");
      }
      const changed = await get(`${apps.prod.url}${path}`, { "If-None-Match": '"stale"' });
      expect(changed.status).toBe(200);
      expect(changed.bytes).toEqual(first.bytes);
    },
  );

  it.each(PATHS)("%s: HEAD answers the headers without a body", async (path) => {
    const full = await get(`${apps.prod.url}${path}`);
    const head = await fetch(`${apps.prod.url}${path}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(head.headers.get("etag")).toBe(full.headers.get("etag"));
    expect(head.headers.get("content-type")).toBe(full.headers.get("content-type"));
    expect(head.headers.get("content-length")).toBe(String(full.bytes.length));
  });

  it.each(PATHS)("%s: CORS-open like /about, preflight included", async (path) => {
    const about = await fetch(`${apps.prod.url}/about`);
    const res = await fetch(`${apps.prod.url}${path}`, {
      headers: { Origin: "https://app.example.com" },
    });
    for (const header of ["access-control-allow-origin", "access-control-expose-headers"])
      expect(res.headers.get(header), header).toBe(about.headers.get(header));
    const preflight = await fetch(`${apps.prod.url}${path}`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example.com",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": path === CARD ? "a2a-version" : "x-request-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    const allowed = preflight.headers.get("access-control-allow-headers")!.toLowerCase();
    expect(allowed).toContain("x-request-id");
    if (path === CARD) expect(allowed).toContain("a2a-version"); // the A2A SDK's resolver sends it
  });

  it.each(PATHS)("%s: other methods are 405 naming GET, HEAD", async (path) => {
    const res = await fetch(`${apps.prod.url}${path}`, { method: "POST", body: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(await res.json()).toMatchObject({ status: "failed", error_type: "validation" });
  });

  it.each(PATHS)("%s: free in production (no payment asked)", async (path) => {
    const res = await fetch(`${apps.prod.url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("payment-required")).toBeNull();
  });

  it("without discovery data (an older registry) every document is a 404 in the spec's error shape", async () => {
    const old = await startApp(makeAgent(), PRODUCTION);
    try {
      for (const path of PATHS) {
        const res = await fetch(`${old.url}${path}`);
        expect(res.status, path).toBe(404);
        const body: any = await res.json();
        expect(body).toEqual({
          status: "failed",
          error_type: "validation",
          error: expect.any(String),
        });
        expect(body.error).toMatch(/generate/);
        expect(res.headers.get("access-control-allow-origin")).toBe("*");
      }
    } finally {
      await old.close();
    }
  });

  it("GET /about is byte-identical with and without discovery data", async () => {
    const plainDev = await startApp(makeAgent(), { devMode: true });
    const plainProd = await startApp(makeAgent(), PRODUCTION);
    try {
      for (const [withData, without] of [
        [apps.dev, plainDev],
        [apps.prod, plainProd],
      ] as const) {
        const a = await get(`${withData.url}/about`);
        const b = await get(`${without.url}/about`);
        expect(a.bytes.equals(b.bytes)).toBe(true);
        expect(a.headers.get("content-type")).toBe(b.headers.get("content-type"));
        expect(a.headers.get("etag")).toBe(b.headers.get("etag"));
        expect(a.headers.get("cache-control")).toBe(b.headers.get("cache-control"));
        expect(Object.keys(JSON.parse(a.text))).toEqual([
          "service_version",
          "name",
          "capabilities",
        ]);
      }
    } finally {
      await plainDev.close();
      await plainProd.close();
    }
  });
});

/** GET with a Host header of our choosing (fetch does not let us set one). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Host: host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("base URL and memory", () => {
  it("each Host gets documents with its own URLs; an invalid Host is a 400; memory stays bounded", async () => {
    for (let i = 0; i < 3 * MAX_CACHED_BASES; i++) {
      const host = `agent-${i}.example.com:8080`;
      const res = await getWithHost(`${apps.prod.url}/openapi.json`, host);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).servers).toEqual([{ url: `http://${host}` }]);
    }
    for (const host of ['evil.com/"><x', "a b", "x.com:99999999"]) {
      const res = await getWithHost(`${apps.prod.url}/llms.txt`, host);
      expect(res.status, host).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ status: "failed", error_type: "validation" });
    }
  });

  it("PUBLIC_URL wins over the Host header", async () => {
    const app = await startApp(withDiscovery(makeAgent()), {
      ...PRODUCTION,
      publicUrl: "https://agent.example.com/",
    });
    try {
      const res = await getWithHost(`${app.url}${CARD}?A2A-Version=1.0`, "attacker.example");
      const card = JSON.parse(res.body);
      expect(card.supportedInterfaces[0].url).toBe("https://agent.example.com/a2a");
      expect(res.body).not.toContain("attacker");
      const llms = await getWithHost(`${app.url}/llms.txt`, "attacker.example");
      expect(llms.body).toContain("https://agent.example.com/execute");
      expect(llms.body).not.toContain("attacker");
      // The same for everyone: shared caches may keep it.
      const fetched = await fetch(`${app.url}${CARD}`);
      expect(fetched.headers.get("cache-control")).toBe("public, max-age=300");
      expect(fetched.headers.get("vary") ?? "").not.toMatch(/\bHost\b/);
    } finally {
      await app.close();
    }
  });

  it("documents are built once per base and at most MAX_CACHED_BASES bases are kept", async () => {
    const agent = withDiscovery(makeAgent());
    const discovery = createDiscovery(agent, resolveConfig({ ...PRODUCTION, env: {} }));
    await discovery.loaded(); // the builders load with the first document
    const first = discovery.document("card", "http://a.example");
    expect(discovery.document("card", "http://a.example")).toBe(first);
    expect(discovery.stats()).toEqual({ bases: 1, builds: 1 });
    for (let i = 0; i < 1000; i++) discovery.document("llms", `http://h${i}.example`);
    expect(discovery.stats().bases).toBe(MAX_CACHED_BASES);
    expect(discovery.stats().builds).toBe(1001);
    // The most recent bases are still cached; the first one was dropped and is rebuilt.
    discovery.document("llms", "http://h999.example");
    expect(discovery.stats().builds).toBe(1001);
    const rebuilt = discovery.document("card", "http://a.example");
    expect(discovery.stats().builds).toBe(1002);
    expect(rebuilt.etag).toBe(first.etag);
  });

  it("BoundedCache drops the least recently used entry", () => {
    const cache = new BoundedCache<number>(2);
    cache.get("a", () => 1);
    cache.get("b", () => 2);
    cache.get("a", () => -1); // a is now the most recent
    cache.get("c", () => 3); // drops b
    expect(cache.size).toBe(2);
    expect(cache.get("a", () => -1)).toBe(1);
    expect(cache.get("b", () => 20)).toBe(20);
  });
});

describe("discovery data imported when first needed (registry loadDiscovery)", () => {
  /** An agent whose registry gives a loader instead of the data, counting its calls. */
  function lazyAgent(fail = 0) {
    const data = discoveryFor(makeAgent());
    const agent = makeAgent();
    let loads = 0;
    agent.loadDiscovery = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      if (loads <= fail) throw new Error("cannot import discovery.js");
      return data;
    };
    return { agent, loads: () => loads };
  }

  it("dev mode: nothing is loaded until a document is asked for, then once for concurrent requests", async () => {
    const { agent, loads } = lazyAgent();
    const app = await startApp(agent, { devMode: true });
    try {
      expect((await fetch(`${app.url}/health`)).status).toBe(200);
      expect((await fetch(`${app.url}/about`)).status).toBe(200);
      expect(loads()).toBe(0);
      const answers = await Promise.all(PATHS.map((path) => get(`${app.url}${path}`)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(loads()).toBe(1);
      const again = await get(`${app.url}/openapi.json`);
      expect(again.headers.get("etag")).toBe(answers[1]!.headers.get("etag"));
      expect(loads()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("a loader that fails answers 500 in the spec's shape, and the next request tries again", async () => {
    const { agent, loads } = lazyAgent(1);
    const app = await startApp(agent, { devMode: true });
    try {
      const failed = await fetch(`${app.url}/openapi.json`);
      expect(failed.status).toBe(500);
      expect(await failed.json()).toMatchObject({ status: "failed", error_type: "internal" });
      expect((await fetch(`${app.url}/openapi.json`)).status).toBe(200);
      expect(loads()).toBe(2);
    } finally {
      await app.close();
    }
  });

  it("production: ready resolves once the data is in, and the 402s then carry the Bazaar extension", async () => {
    const { agent, loads } = lazyAgent();
    const app = createApp(agent, { ...production(), env: {}, logger: captureLogger() });
    await runtimeOf(app).ready;
    expect(loads()).toBe(1);
    const served = await listen(app);
    try {
      const input = { text: "hi" };
      const res = await post(served.url, job("echo", input));
      expect(res.status).toBe(402);
      const required = JSON.parse(
        Buffer.from(res.headers.get("payment-required")!, "base64").toString("utf8"),
      );
      expect(required.extensions?.bazaar?.info?.input?.type).toBe("http");
    } finally {
      await served.close();
    }
  });
});
