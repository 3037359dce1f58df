// Several networks in one offer, through the real app: one 402 lists one "exact" offer per network in
// the seller's order, and a payment is verified, keyed and settled on the network it names.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import {
  PAY_TO,
  anvilAccount,
  job,
  makeAgent,
  offerV2,
  post,
  recordingSettler,
  signAuthorization,
  startApp,
  unb64,
  v1Header,
  v2Header,
  type TestAgent,
} from "./helpers.js";

const ARB = KNOWN_NETWORKS["arbitrum-sepolia"];
const LOCAL_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const settler = recordingSettler();
let agent: TestAgent;
let app: Awaited<ReturnType<typeof startApp>>;
const payer = anvilAccount();

const arbDomain = {
  name: ARB.assetName,
  version: ARB.assetVersion,
  chainId: ARB.chainId,
  verifyingContract: ARB.asset,
} as const;
const localDomain = {
  name: "Local USD",
  version: "7",
  chainId: 31337,
  verifyingContract: LOCAL_TOKEN,
} as const;
const offerOn = (domain: {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}) => ({
  ...offerV2(),
  network: `eip155:${domain.chainId}`,
  asset: domain.verifyingContract,
  extra: { name: domain.name, version: domain.version },
});

beforeAll(async () => {
  agent = makeAgent();
  app = await startApp(agent, {
    devMode: false,
    payment: { payTo: PAY_TO, settler },
    env: {
      X402_NETWORKS: "arbitrum-sepolia, base-sepolia,eip155:31337",
      X402_ASSET_EIP155_31337: LOCAL_TOKEN,
      X402_ASSET_NAME_EIP155_31337: "Local USD",
      X402_ASSET_VERSION_EIP155_31337: "7",
    },
  });
});
afterAll(() => app.close());

describe("one offer per network", () => {
  it("the 402 lists every network in the seller's order, same price; the v1 body only those v1 clients know", async () => {
    const res = await post(app.url, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    const required = unb64(res.headers.get("payment-required")!);
    expect(required.accepts).toEqual([offerOn(arbDomain), offerV2(), offerOn(localDomain)]);
    expect(res.body.accepts.map((a: { network: string }) => a.network)).toEqual(["base-sepolia"]);
    expect(res.body.accepts[0].maxAmountRequired).toBe("10000");
  });

  it("a payment on the second network is checked against that network's token and settled there", async () => {
    const before = settler.settled();
    const payload = await signAuthorization(payer, { domain: arbDomain });
    const res = await post(app.url, job("echo", { text: "arb" }), {
      "payment-signature": v2Header(offerOn(arbDomain), payload),
    });
    expect(res.status).toBe(200);
    expect(settler.settled()).toBe(before + 1);
    const settled = settler.calls.at(-1)!.payment;
    expect(settled).toMatchObject({ network: "eip155:421614", chainId: 421614, asset: ARB.asset });
    expect(unb64(res.headers.get("payment-response")!).network).toBe("eip155:421614");
  });

  it("a custom chain with its own token settings, and x402 v1 on a network v1 knows", async () => {
    const local = await signAuthorization(payer, { domain: localDomain });
    const res = await post(app.url, job("echo", { text: "local" }), {
      "payment-signature": v2Header(offerOn(localDomain), local),
    });
    expect(res.status).toBe(200);
    expect(settler.calls.at(-1)!.payment).toMatchObject({ chainId: 31337, asset: LOCAL_TOKEN });
    const v1 = await post(app.url, job("echo", { text: "v1" }), {
      "x-payment": v1Header(await signAuthorization(payer)),
    });
    expect(v1.status).toBe(200);
    expect(settler.calls.at(-1)!.payment).toMatchObject({
      network: "base-sepolia",
      chainId: 84532,
    });
  });

  it("an authorization signed for one network is refused when sent as a payment on another, and nothing runs", async () => {
    const before = agent.calls.echo ?? 0;
    const settledBefore = settler.settled();
    const payload = await signAuthorization(payer, { domain: arbDomain });
    const res = await post(app.url, job("echo", { text: "x" }), {
      "payment-signature": v2Header(offerV2(), payload),
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/signature/i);
    expect(agent.calls.echo ?? 0).toBe(before);
    expect(settler.settled()).toBe(settledBefore);
  });

  it("a payment on a network not offered is refused, naming every offered network", async () => {
    const before = agent.calls.echo ?? 0;
    const payload = await signAuthorization(payer, { domain: { ...arbDomain, chainId: 1 } });
    const res = await post(app.url, job("echo", { text: "x" }), {
      "payment-signature": v2Header({ ...offerOn(arbDomain), network: "eip155:1" }, payload),
    });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(
      /payment is for network "eip155:1" but this service takes payments on "eip155:421614", "eip155:84532" \(base-sepolia\), "eip155:31337"/,
    );
    expect(agent.calls.echo ?? 0).toBe(before);
  });

  it("one authorization pays for one job: its replay is refused on the same network", async () => {
    const payload = await signAuthorization(payer, { domain: arbDomain });
    const header = { "payment-signature": v2Header(offerOn(arbDomain), payload) };
    expect((await post(app.url, job("echo", { text: "a" }), header)).status).toBe(200);
    const again = await post(app.url, job("echo", { text: "b" }), header);
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/already used/);
  });
});

describe("one payment, one run, on every network", () => {
  it("the same authorization on the second network sent twice at once: one run, one settlement", async () => {
    const runs = agent.calls.echo ?? 0;
    const settled = settler.settled();
    const payload = await signAuthorization(payer, { domain: arbDomain });
    const header = { "payment-signature": v2Header(offerOn(arbDomain), payload) };
    const body = job("echo", { text: "twice" });
    const answers = await Promise.all([post(app.url, body, header), post(app.url, body, header)]);
    const statuses = answers.map((a) => a.status).sort();
    // The second is the cached result (identical retry) or refused while the first runs: never a second run.
    expect(statuses[0]).toBe(200);
    expect([200, 402]).toContain(statuses[1]);
    expect(agent.calls.echo).toBe(runs + 1);
    expect(settler.settled()).toBe(settled + 1);
  });

  it("networks x402 v1 clients do not know: the v1 body lists them under their CAIP-2 ids", async () => {
    const unknownToV1 = await startApp(makeAgent(), {
      devMode: false,
      payment: { payTo: PAY_TO, settler: recordingSettler() },
      env: { X402_NETWORKS: "arbitrum,arbitrum-sepolia" },
    });
    try {
      const res = await post(unknownToV1.url, job("echo", { text: "x" }));
      expect(res.body.accepts.map((a: { network: string }) => a.network)).toEqual([
        "eip155:42161",
        "eip155:421614",
      ]);
    } finally {
      await unknownToV1.close();
    }
  });
});

describe("MCP offers the same networks", () => {
  it("the tool's PaymentRequired lists every network; a payment on the second pays once across /mcp and /execute", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } =
      await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client({ name: "networks-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`)));
    try {
      const required = (await client.callTool({ name: "echo", arguments: { text: "m" } }))
        .structuredContent as { accepts: Array<Record<string, unknown>>; resource: unknown };
      expect(required.accepts).toEqual([
        { ...offerOn(arbDomain), maxTimeoutSeconds: expect.any(Number) },
        { ...offerV2(), maxTimeoutSeconds: expect.any(Number) },
        { ...offerOn(localDomain), maxTimeoutSeconds: expect.any(Number) },
      ]);
      const runs = agent.calls.echo ?? 0;
      const settled = settler.settled();
      const payload = await signAuthorization(payer, { domain: arbDomain });
      const paid = await client.callTool({
        name: "echo",
        arguments: { text: "m" },
        _meta: {
          "x402/payment": {
            x402Version: 2,
            resource: required.resource,
            accepted: required.accepts[0],
            payload,
          },
        },
      });
      expect(paid.isError).toBeFalsy();
      expect(
        (paid._meta as Record<string, { network?: string }>)["x402/payment-response"]?.network,
      ).toBe("eip155:421614");
      // The same authorization on POST /execute, for another job: refused, nothing runs again.
      const again = await post(app.url, job("echo", { text: "other" }), {
        "payment-signature": v2Header(offerOn(arbDomain), payload),
      });
      expect(again.status).toBe(402);
      expect(agent.calls.echo).toBe(runs + 1);
      expect(settler.settled()).toBe(settled + 1);
    } finally {
      await client.close();
    }
  });
});

describe("discovery lists every offered network", () => {
  it("agent card x402 extension, OpenAPI x-x402 and /llms.txt, in the seller's order", async () => {
    const { withDiscovery } = await import("./discovery-fixture.js");
    const several = await startApp(withDiscovery(makeAgent()), {
      devMode: false,
      payment: { payTo: PAY_TO, settler: recordingSettler() },
      env: { X402_NETWORKS: "arbitrum-sepolia,base-sepolia" },
    });
    try {
      const card: any = await (await fetch(`${several.url}/.well-known/agent-card.json`)).json();
      const x402 = card.capabilities.extensions.find(
        (e: { params?: { x402Version?: number } }) => e.params?.x402Version === 2,
      );
      expect(x402.params.networks).toEqual([
        { network: "eip155:421614", asset: ARB.asset, payTo: PAY_TO },
        {
          network: "eip155:84532",
          networkV1: "base-sepolia",
          asset: KNOWN_NETWORKS["base-sepolia"].asset,
          payTo: PAY_TO,
        },
      ]);
      expect(x402.description).toContain("on eip155:421614 or base-sepolia (eip155:84532)");
      const openapi: any = await (await fetch(`${several.url}/openapi.json`)).json();
      expect(openapi["x-x402"].networks.map((n: { network: string }) => n.network)).toEqual([
        "eip155:421614",
        "eip155:84532",
      ]);
      const llms = await (await fetch(`${several.url}/llms.txt`)).text();
      expect(llms).toContain(
        'one offer per network, scheme "exact", in the seller\'s order of preference: "eip155:421614", "eip155:84532"',
      );
    } finally {
      await several.close();
    }
  });
});
