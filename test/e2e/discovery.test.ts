// Discovery and calling, end to end on a generated project: the documents it serves (A2A agent card, OpenAPI,
// llms.txt, the Bazaar extension in its 402) pass the official validators, follow agent.json through a
// regeneration, and the project's own `npm run call` calls it free in dev mode and pays it in production.
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AgentCard } from "@a2a-js/sdk";
import { DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { isLegacyAgentCard, parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { validate as validateOpenApi } from "@readme/openapi-parser";
import {
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from "@x402/extensions/bazaar";
import { execa } from "execa";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PAYEE, SETTLER_KEY } from "../chain/accounts.js";
import { ensureBaseSepoliaUsdc, mintUsdc, usdcBalance } from "../chain/usdc.js";
import {
  buildProject,
  copyProject,
  decodeHeader,
  post,
  startServer,
  summarizeJob,
} from "./helpers.js";

const shared = inject("projectDir");
const chain = inject("chain");
// `call` pays with the official x402 client, which pays only USDC contracts it knows: the server asks for
// Circle's USDC placed at Base Sepolia's real address (X402_NETWORK=base-sepolia, no X402_ASSET).
let usdc: `0x${string}`;
const balance = (address: `0x${string}`) => usdcBalance(chain.rpcUrl, usdc, address);

let projectDir = "";
beforeAll(async () => {
  usdc = await ensureBaseSepoliaUsdc(chain.rpcUrl);
  projectDir = await copyProject(shared, "create-agent-discovery-");
  await buildProject(projectDir);
});
afterAll(async () => {
  if (projectDir) await rm(dirname(projectDir), { recursive: true, force: true });
});

const devEnv = () => ({ PATH: process.env.PATH ?? "", SERVICE_DEV_MODE: "true" });
const productionEnv = () => ({
  PATH: process.env.PATH ?? "",
  NODE_ENV: "production",
  PAY_TO: PAYEE,
  X402_NETWORK: "base-sepolia",
  X402_RPC_URL: chain.rpcUrl,
  X402_SETTLER_KEY: SETTLER_KEY,
});

/** What an A2A 1.0 client sends: the agent card in A2A 1.0's shape. */
const V1 = { "A2A-Version": "1.0" };

async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ body: any; etag: string | null }> {
  const res = await fetch(url, { headers });
  expect(res.status, `GET ${url}`).toBe(200);
  return { body: await res.json(), etag: res.headers.get("etag") };
}

/** The project's `npm run call -- ...`, as a user types it. */
function npmCall(args: string[], env: Record<string, string>) {
  return execa("npm", ["run", "--silent", "call", "--", ...args], {
    cwd: projectDir,
    env,
    reject: false,
  });
}

describe("a generated project's discovery documents", () => {
  it("serve an A2A card, OpenAPI 3.1 and llms.txt that the official tools accept, matching agent.json", async () => {
    const server = await startServer(projectDir, devEnv());
    try {
      const card = await getJson(`${server.url}/.well-known/agent-card.json`, V1);
      expect(AgentCard.toJSON(AgentCard.fromJSON(card.body))).toEqual(card.body);
      // A client naming no A2A-Version (every A2A 0.3 client) gets the same card in 0.3's shape, with
      // the 1.0 interfaces embedded as the SDK's own 0.3 card handler does.
      const v03 = await getJson(`${server.url}/.well-known/agent-card.json`);
      const { supportedInterfaces, ...v03Only } = v03.body;
      expect(supportedInterfaces).toEqual(card.body.supportedInterfaces);
      expect(isLegacyAgentCard(v03Only)).toBe(true);
      expect(parseLegacyAgentCard(v03Only).skills).toEqual(AgentCard.fromJSON(card.body).skills);
      const resolved = await new DefaultAgentCardResolver().resolve(server.url);
      expect(resolved.skills.map((s) => s.id)).toEqual(["summarize", "classify-review"]);
      expect(resolved.name).toBe("shop-agent");

      const openapi = await getJson(`${server.url}/openapi.json`);
      await validateOpenApi(structuredClone(openapi.body));
      expect(openapi.body.openapi).toMatch(/^3\.1\./);
      expect(openapi.body.servers).toEqual([{ url: server.url }]);
      const offline = JSON.parse(
        await readFile(join(projectDir, "src/generated/openapi.json"), "utf8"),
      );
      // Dev mode takes no payment: the generated document, except that /execute requires none, and so
      // the payment headers' schemes go; the job token's stays with GET /jobs/{id} (the queue feature).
      const { securitySchemes: schemes, ...others } = offline.components;
      expect(openapi.body.paths["/jobs/{id}"].get.security).toEqual([{ jobToken: [] }]);
      const components = { ...others, securitySchemes: { jobToken: schemes.jobToken } };
      const execute = openapi.body.paths["/execute"].post;
      expect(execute.security).toEqual([]);
      expect(execute.description).toMatch(/^This server runs in dev mode: jobs are free/);
      // The offline copy has POST /mcp, which the server serves by default (MCP=off drops it).
      expect(offline.paths["/mcp"].post).toMatchObject({ operationId: "mcp", security: [] });
      expect(openapi.body).toEqual({
        ...offline,
        servers: [{ url: server.url }],
        components,
        paths: {
          ...offline.paths,
          "/execute": {
            post: {
              ...offline.paths["/execute"].post,
              security: [],
              description: execute.description,
            },
          },
        },
      });
      // Production serves the generated document as it is, with its URL.
      const paid = await startServer(projectDir, productionEnv());
      try {
        const served = await getJson(`${paid.url}/openapi.json`);
        expect(served.body).toEqual({
          ...offline,
          servers: [{ url: paid.url }],
        });
        expect(served.body.paths["/execute"].post.security).toEqual([
          { "PAYMENT-SIGNATURE": [] },
          { "X-PAYMENT": [] },
        ]);
      } finally {
        await paid.stop();
      }

      const llms = await fetch(`${server.url}/llms.txt`);
      expect(llms.headers.get("content-type")).toMatch(/^text\/plain/);
      const text = await llms.text();
      for (const expected of [
        "# shop-agent",
        "summarize",
        "classify-review",
        "0.01",
        "0.25",
        "/execute",
      ])
        expect(text).toContain(expected);

      // GET /about keeps exactly the spec's shape.
      const about = await getJson(`${server.url}/about`);
      expect(Object.keys(about.body)).toEqual(["service_version", "name", "capabilities"]);
      expect(Object.keys(about.body.capabilities.summarize).sort()).toEqual(
        ["description", "input_schema", "output_schema", "pricing"].sort(),
      );
    } finally {
      await server.stop();
    }
  });

  it("change with agent.json: after a regeneration the served documents differ and show the change", async () => {
    let server = await startServer(projectDir, devEnv());
    const before = {
      openapi: await getJson(`${server.url}/openapi.json`),
      card: await getJson(`${server.url}/.well-known/agent-card.json`, V1),
      llms: await (await fetch(`${server.url}/llms.txt`)).text(),
    };
    await server.stop();

    const manifestPath = join(projectDir, "agent.json");
    const original = await readFile(manifestPath, "utf8");
    try {
      const manifest = JSON.parse(original);
      manifest.capabilities.summarize.pricing.amount = "0.02";
      manifest.capabilities.summarize.input_schema.tone = {
        type: "string",
        description: "Tone of voice",
      };
      manifest.capabilities.summarize.tags = ["text", "summaries"];
      await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
      const generate = await execa("npm", ["run", "generate"], {
        cwd: projectDir,
        reject: false,
        all: true,
      });
      expect(generate.exitCode, generate.all).toBe(0);
      await buildProject(projectDir);

      server = await startServer(projectDir, devEnv());
      try {
        const openapi = await getJson(`${server.url}/openapi.json`);
        const card = await getJson(`${server.url}/.well-known/agent-card.json`, V1);
        const llms = await (await fetch(`${server.url}/llms.txt`)).text();
        expect(openapi.etag).not.toBe(before.openapi.etag);
        expect(card.etag).not.toBe(before.card.etag);
        expect(llms).not.toBe(before.llms);
        await validateOpenApi(structuredClone(openapi.body));
        expect(JSON.stringify(openapi.body)).toContain("Tone of voice");
        expect(JSON.stringify(before.openapi.body)).not.toContain("Tone of voice");
        const skill = card.body.skills.find((s: { id: string }) => s.id === "summarize");
        expect(skill.tags).toEqual(["text", "summaries"]);
        expect(JSON.stringify(card.body)).toContain("0.02");
        expect(llms).toContain("0.02");
        expect(llms).toContain("tone");
      } finally {
        await server.stop();
      }
    } finally {
      await writeFile(manifestPath, original);
      await execa("npm", ["run", "generate"], { cwd: projectDir });
      await buildProject(projectDir);
    }
  });
});

describe("a generated project in production", () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer(projectDir, productionEnv());
  });
  afterAll(() => server?.stop());

  it("lists itself for Bazaar: the 402's extensions.bazaar passes the official validator", async () => {
    const res = await fetch(
      `${server.url}/execute`,
      post(summarizeJob("hello", `bazaar-${Date.now()}`)),
    );
    expect(res.status).toBe(402);
    const required = decodeHeader<{ extensions?: { bazaar?: any } }>(
      res.headers.get("payment-required"),
    );
    const bazaar = required.extensions?.bazaar;
    expect(bazaar, "PAYMENT-REQUIRED has no extensions.bazaar").toBeDefined();
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar).valid).toBe(true);
    expect(bazaar.info.input.body.task.capability).toBe("summarize");
  });

  it("is paid by the project's own `npm run call`: the payee gains exactly the price, once", async () => {
    const key = generatePrivateKey();
    const payer = privateKeyToAddress(key);
    await mintUsdc(chain.rpcUrl, usdc, payer, 1_000_000n);
    const [payeeBefore, payerBefore] = [await balance(PAYEE), await balance(payer)];
    const call = await npmCall(
      ["summarize", "--input", "text=hello there", "--input", "max_words=5"],
      {
        PATH: process.env.PATH ?? "",
        AGENT_URL: server.url,
        X402_PAYER_KEY: key,
      },
    );
    expect(call.exitCode, `${call.stdout}\n${call.stderr}`).toBe(0);
    expect(JSON.parse(call.stdout)).toHaveProperty("summary");
    expect(call.stderr).toMatch(/0x[0-9a-f]{64}/);
    expect(call.stderr).not.toContain(key.slice(2));
    expect(await balance(PAYEE)).toBe(payeeBefore + 10_000n);
    expect(await balance(payer)).toBe(payerBefore - 10_000n);
  });

  it("`npm run call` refuses a price above --max-price and signs nothing", async () => {
    const key = generatePrivateKey();
    const payer = privateKeyToAddress(key);
    await mintUsdc(chain.rpcUrl, usdc, payer, 1_000_000n);
    const before = await balance(payer);
    const call = await npmCall(["summarize", "--input", "text=hi", "--max-price", "0.005"], {
      PATH: process.env.PATH ?? "",
      AGENT_URL: server.url,
      X402_PAYER_KEY: key,
    });
    expect(call.exitCode).toBe(1);
    expect(call.stderr).toMatch(/max-price/);
    expect(await balance(payer)).toBe(before);
  });
});
