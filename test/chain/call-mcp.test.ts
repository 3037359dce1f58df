// `create-agent call --mcp`: the same job as an MCP tools/call to /mcp (x402 v2 MCP transport), paid by the
// real CLI with the official x402 client through the official MCP SDK client, on anvil with Circle's USDC at
// Base Sepolia's address and the reference facilitator (the shared chain and test agent of call.test.ts).
// A hostile seller's /mcp (hostile-server.ts, hostile-mcp.ts) settles whatever it is given, so a payer that
// signed too much would lose the money here. Balances are read on chain.
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { callAgent, type CountingServer, runCall, startCounted } from "../cli/call-helpers.js";
import { unb64 } from "../runtime/helpers.js";
import { extractPaymentIdentifier } from "@x402/extensions/payment-identifier";
import {
  balance,
  beforePaidCall,
  type CallSeller,
  fundedPayer,
  expectLocalReceipt,
  LOST_ANSWERS,
  startCallSeller,
  throughLostAnswer,
} from "./call-seller.js";
import { expectResentVerbatim } from "./call-proxy.js";
import {
  HOSTILE_PRICE,
  type HostileAsk,
  type HostileMode,
  hostileOffer,
  startHostile,
} from "./hostile-server.js";
import { BASE_SEPOLIA_USDC, deployUsdc } from "./usdc.js";

const { rpcUrl } = inject("chain");
let server: CountingServer;
let callSeller: CallSeller;
const posts = (s: CountingServer, path: string) =>
  s.requests.filter((r) => r.method === "POST" && r.path.startsWith(path)).length;

beforeAll(async () => {
  callSeller = await startCallSeller();
  server = callSeller.server;
});
afterAll(() => server?.close());

describe("create-agent call --mcp against a production server on chain", () => {
  it("pays over MCP: exactly the price, once; prints the output and the receipt (no public explorer on loopback)", async () => {
    const payer = await fundedPayer(1_000_000n);
    const paid = await beforePaidCall(callSeller, payer.address, "echo");
    const executesBefore = server.executes();

    const r = await runCall([server.url, "echo", "--input", "message=over mcp", "--mcp"], {
      env: { X402_PAYER_KEY: payer.key },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "over mcp" });

    await paid.chargedOnce();
    // It went over MCP: no POST /execute reached the server.
    expect(server.executes()).toBe(executesBefore);

    await expectLocalReceipt(r, payer);
  });

  it("a URL ending in /mcp calls over MCP too; --json prints one document with the payment", async () => {
    const payer = await fundedPayer(1_000_000n);
    const executesBefore = server.executes();
    const r = await runCall([`${server.url}/mcp`, "greet", "--input", "name=mcp", "--json"], {
      env: { X402_PAYER_KEY: payer.key },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      capability: "greet",
      output: { greeting: "hello mcp" },
      payment: { network: "eip155:84532", payer: payer.address, amount: "0.002", localAgent: true },
    });
    expect(server.executes()).toBe(executesBefore);
  });

  it("--max-price below the price: refused before anything is sent, no USDC moves", async () => {
    const payer = await fundedPayer(1_000_000n);
    const payerBefore = await balance(payer.address);
    const mcpBefore = posts(server, "/mcp");
    const r = await runCall(
      [server.url, "echo", "--input", "message=dear", "--max-price", "0.005", "--mcp", "--json"],
      { env: { X402_PAYER_KEY: payer.key } },
    );
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error_type: "price" });
    expect(posts(server, "/mcp")).toBe(mcpBefore);
    expect(await balance(payer.address)).toBe(payerBefore);
  });

  it.each(LOST_ANSWERS)(
    "the answer is lost %s: the identical tool call (same payment, same id) is re-sent; one run, one charge",
    async (_when, mode, capability) => {
      await throughLostAnswer(callSeller, mode, capability, async (payer, proxy, paid) => {
        const r = await runCall(
          [proxy.url, capability, "--input", "message=once", "--mcp", "--json"],
          { env: { X402_PAYER_KEY: payer.key } },
        );
        expect(r.exitCode, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({
          ok: true,
          output: { text: "once" },
          payment: { network: "eip155:84532", payer: payer.address, amount: "0.01" },
        });
        expectResentVerbatim(proxy, r.stderr, mode);
        expect(extractPaymentIdentifier(unb64(proxy.paid[0]!))).toMatch(/^pay_[0-9a-f]{32}$/);
        await paid.chargedOnce();
      });
    },
  );
});

describe("create-agent call --mcp against a dev-mode server", () => {
  let dev: CountingServer;
  beforeAll(async () => {
    dev = await startCounted(callAgent(), { devMode: true });
  });
  afterAll(() => dev?.close());

  it("calls the tool without payment: the output, no receipt, no key needed", async () => {
    const r = await runCall([dev.url, "echo", "--input", "message=free", "--mcp"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ text: "free" });
    expect(r.stderr).toContain("asked for no payment (a service in dev mode)");
    expect(r.stderr).not.toContain("create-agent: paid");
    expect(posts(dev, "/mcp")).toBeGreaterThan(0);
    expect(dev.executes()).toBe(0);
  });

  it("a tool's error is the CLI's typed error: its error_type and message, exit code 1, no HTTP status", async () => {
    const r = await runCall([dev.url, "refuse", "--input", "message=x", "--mcp", "--json"]);
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      error_type: "validation",
      error: "message: the handler does not like it",
    });
    expect(r.stderr).toContain("MCP tool error validation: message: the handler does not like it");
  });

  it("a service with MCP off: its HTTP 404 is named with what it says, exit code 1", async () => {
    const off = await startCounted(callAgent(), { devMode: true, env: { MCP: "off" } });
    try {
      const r = await runCall([off.url, "echo", "--input", "message=x", "--mcp", "--json"]);
      expect(r.exitCode).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({
        ok: false,
        status: 404,
        error_type: "validation",
      });
      expect(r.stderr).toContain("MCP is off on this service (MCP=off)");
      expect(off.executes()).toBe(0);
    } finally {
      await off.close();
    }
  });

  it("--async with --mcp is refused before anything is sent", async () => {
    const before = dev.requests.length;
    const r = await runCall([dev.url, "echo", "--input", "message=x", "--mcp", "--async"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("--async with --mcp");
    expect(dev.requests.length).toBe(before);
  });
});

describe("create-agent call --mcp against a hostile seller's /mcp", () => {
  /** call --mcp against a hostile seller asking `ask`; what the payer lost and what reached the seller. */
  async function against(
    ask: ((url: string) => HostileAsk) | undefined,
    args: string[] = [],
    token?: Hex,
    mode: HostileMode = "honest",
  ) {
    const seller = await startHostile(mode, rpcUrl, ask);
    try {
      const payer = await fundedPayer(5_000_000n, token);
      const before = await balance(payer.address, token);
      const r = await runCall(
        [seller.url, "echo", "--input", "message=hi", "--max-price", "0.01", "--mcp", ...args],
        { env: { X402_PAYER_KEY: payer.key } },
      );
      const lost = before - (await balance(payer.address, token));
      const { payments, elsewhere } = seller;
      return { r, lost, payments: payments.length, elsewhere, message: r.stderr };
    } finally {
      await seller.close();
    }
  }
  const asking = (fields: Record<string, unknown>) => (url: string) => ({
    header: { x402Version: 2, resource: { url }, accepts: [hostileOffer(fields)] },
    body: {},
  });

  it("an honest ask is paid exactly its declared price, once (the control)", async () => {
    const { r, lost, payments } = await against(undefined);
    expect(r.exitCode, r.stderr).toBe(0);
    expect([lost, payments]).toEqual([HOSTILE_PRICE, 1]);
    expect(r.stderr).toContain("paid 0.01 USDC on eip155:84532");
  });

  it("an ask above the declared price and --max-price is refused before signing: nothing sent, nothing moved", async () => {
    const { r, lost, payments, message } = await against(asking({ amount: "1000000" }));
    expect(r.exitCode).toBe(1);
    expect(message).toContain("asks 1 USDC, more than");
    expect(message).toContain("nothing was signed");
    expect([lost, payments]).toEqual([0n, 0]);
  });

  it("an amount that is a JSON number is refused before signing: nothing sent, nothing moved", async () => {
    const { r, lost, payments, message } = await against(asking({ amount: 1_000_000 }));
    expect(r.exitCode).toBe(1);
    expect(message).toContain('"amount" (the amount an x402 v2 payer signs) is the number 1000000');
    expect([lost, payments]).toEqual([0n, 0]);
  });

  it("an ask in another ERC-20 than the network's USDC is refused before signing; --asset allows it", async () => {
    const other = await deployUsdc(rpcUrl, { name: "Tether USD", version: "2" });
    const ask = asking({ asset: other, extra: { name: "Tether USD", version: "2" } });
    const refused = await against(ask, [], other);
    expect(refused.r.exitCode).toBe(1);
    expect(refused.message).toContain(
      `asks to be paid in the token ${other} on eip155:84532, which is not that network's USDC (${BASE_SEPOLIA_USDC})`,
    );
    expect(refused.message).toContain("nothing was signed");
    expect([refused.lost, refused.payments]).toEqual([0n, 0]);

    const paid = await against(ask, ["--asset", other], other);
    expect(paid.r.exitCode, paid.message).toBe(0);
    expect(paid.message).toContain(`paid 10000 atomic units of the token ${other}`);
    expect([paid.lost, paid.payments]).toEqual([HOSTILE_PRICE, 1]);
  });

  it("a redirect of the MCP POST is never followed, and is named: nothing sent there, nothing moved", async () => {
    const { r, lost, payments, elsewhere, message } = await against(
      undefined,
      [],
      undefined,
      "redirect",
    );
    expect(r.exitCode).toBe(1);
    expect(message).toContain("a redirect to /elsewhere");
    expect([lost, payments, elsewhere]).toEqual([0n, 0, 0]);
  });
});
