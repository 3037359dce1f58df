// The payment gate through the real app: real viem accounts sign real EIP-712 authorizations,
// and every refusal must name its reason and leave the handler un-run.
import { request as httpRequest } from "node:http";
import { declarePaymentIdentifierExtension } from "@x402/extensions/payment-identifier";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GENERIC_INTERNAL_MESSAGE } from "../../templates/runtime/errors.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../../templates/runtime/payments/gate.js";
import {
  OTHER_ADDRESS,
  PAY_TO,
  PRODUCTION,
  anvilAccount,
  b64,
  job,
  logText,
  makeAgent,
  nowSeconds,
  offerV2,
  post,
  recordingSettler,
  settledReceipt,
  signAuthorization,
  startApp,
  unb64,
  v1Header,
  v2Header,
  type AuthorizationParams,
  type TestAgent,
  withApp,
} from "./helpers.js";

let agent: TestAgent;
let app: Awaited<ReturnType<typeof startApp>>;
const payer = anvilAccount();
const stranger = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  agent = makeAgent();
  app = await startApp(agent, PRODUCTION);
});
afterAll(() => app.close());

const calls = (name: string): number => agent.calls[name] ?? 0;

/** Sends a job with a v2 PAYMENT-SIGNATURE built from `accepted` and a fresh authorization. */
async function payV2(
  capability: string,
  input: unknown,
  auth: AuthorizationParams = {},
  accepted = offerV2(),
  extra: Record<string, unknown> = {},
) {
  const payload = await signAuthorization(payer, auth);
  return post(app.url, job(capability, input, extra), {
    "payment-signature": v2Header(accepted, payload),
  });
}

/** Expects a 402 payment error whose message matches `reason`, and that `capability` did not run. */
async function expectRefused(
  send: () => Promise<Awaited<ReturnType<typeof post>>>,
  reason: RegExp | string,
  capability = "echo",
) {
  const before = calls(capability);
  const res = await send();
  expect(res.status).toBe(402);
  expect(res.body).toEqual({ status: "failed", error_type: "payment", error: expect.any(String) });
  if (typeof reason === "string") expect(res.body.error).toContain(reason);
  else expect(res.body.error).toMatch(reason);
  expect(calls(capability)).toBe(before);
  return res;
}

/** A v1 X-PAYMENT of `payload` for an echo job is refused for `reason`, the handler not run. */
const refusedV1 = (payload: unknown, reason: RegExp | string) =>
  expectRefused(
    () => post(app.url, job("echo", { text: "x" }), { "x-payment": v1Header(payload) }),
    reason,
  );

describe("payment missing", () => {
  it("402 with the v1 payment-required body and the v2 PAYMENT-REQUIRED header", async () => {
    const before = calls("echo");
    const res = await post(app.url, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const resource = `${app.url}/execute`;
    expect(res.body).toEqual({
      x402Version: 1,
      error: expect.any(String),
      accepts: [
        {
          scheme: "exact",
          network: "base-sepolia",
          maxAmountRequired: "10000",
          resource,
          description: "test capability",
          mimeType: "application/json",
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
          extra: { name: "USDC", version: "2" },
        },
      ],
    });
    expect(unb64(res.headers.get("payment-required")!)).toEqual({
      x402Version: 2,
      error: expect.any(String),
      resource: { url: resource, description: "test capability", mimeType: "application/json" },
      accepts: [offerV2("10000")],
      // Checked against the x402 package's own declaration (projects do not depend on it).
      extensions: { "payment-identifier": declarePaymentIdentifierExtension(false) },
    });
    expect(calls("echo")).toBe(before);
  });

  it("quotes each capability's own price in atomic units", async () => {
    const res = await post(app.url, job("cheap", { text: "x" }));
    expect(res.body.accepts[0].maxAmountRequired).toBe("1000");
    expect(unb64(res.headers.get("payment-required")!).accepts[0].amount).toBe("1000");
  });

  it("uses PUBLIC_URL for the resource when set", async () => {
    await withApp(
      { ...PRODUCTION, env: { PUBLIC_URL: "https://agent.example.com/" } },
      async (other) => {
        const res = await post(other.url, job("echo", { text: "x" }));
        expect(res.body.accepts[0].resource).toBe("https://agent.example.com/execute");
      },
    );
  });

  it("identical 402s are built once a second; the window, URL and capability each get their own", async () => {
    const deadline = nowSeconds() + 60;
    const send = (capability: string, extra: Record<string, unknown> = {}) =>
      post(app.url, job(capability, { text: "x" }, { deadline, ...extra }));
    const [a, b] = await Promise.all([send("echo"), send("echo")]);
    expect(a.text).toBe(b.text);
    expect(a.headers.get("payment-required")).toBe(b.headers.get("payment-required"));
    // A job due in two hours needs a longer window than the default 300 s.
    const far = await send("echo", { deadline: nowSeconds() + 7200 });
    expect(far.body.accepts[0].maxTimeoutSeconds).toBeGreaterThan(7200);
    expect(unb64(far.headers.get("payment-required")!).accepts[0].maxTimeoutSeconds).toBe(
      far.body.accepts[0].maxTimeoutSeconds,
    );
    const cheap = await send("cheap");
    expect(cheap.body.accepts[0].maxAmountRequired).toBe("1000");
    // fetch cannot set Host: node:http can.
    const elsewhere = await new Promise<any>((resolve, reject) => {
      const body = JSON.stringify(job("echo", { text: "x" }, { deadline }));
      const { port } = new URL(app.url);
      const headers = { host: "agent.test", "content-type": "application/json" };
      const req = httpRequest({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/execute",
        headers,
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve(JSON.parse(text)));
      });
      req.on("error", reject);
      req.end(body);
    });
    expect(elsewhere.accepts[0].resource).toBe("http://agent.test/execute");
    expect((await send("echo")).body.accepts[0].resource).toBe(`${app.url}/execute`);
  });

  it("an empty header counts as missing", async () => {
    const res = await post(app.url, job("echo", { text: "x" }), { "payment-signature": "" });
    expect(res.status).toBe(402);
    expect(res.body.x402Version).toBe(1);
  });

  it("capability and input are checked before payment; payment before the deadline", async () => {
    expect((await post(app.url, job("nope", {}))).body.error_type).toBe("capability");
    expect((await post(app.url, job("echo", {}))).body.error_type).toBe("validation");
    const late = await post(app.url, job("echo", { text: "x" }, { deadline: nowSeconds() - 5 }));
    expect(late.status).toBe(402);
    expect(late.body.x402Version).toBe(1);
  });
});

describe("valid payments", () => {
  it("a v2 client flow: read PAYMENT-REQUIRED, sign, retry with PAYMENT-SIGNATURE", async () => {
    const request = job("echo", { text: "paid" });
    const first = await fetch(`${app.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    const required = unb64(first.headers.get("payment-required")!);
    const accepted = required.accepts[0];
    const payload = await signAuthorization(payer, {
      to: accepted.payTo,
      value: accepted.amount,
      validBefore: String(nowSeconds() + accepted.maxTimeoutSeconds),
      domain: {
        name: accepted.extra.name,
        version: accepted.extra.version,
        chainId: 84532,
        verifyingContract: accepted.asset,
      },
    });
    const before = calls("echo");
    const res = await post(app.url, request, { "PAYMENT-SIGNATURE": v2Header(accepted, payload) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "completed",
      job_id: request.job_id,
      output: { text: "paid" },
    });
    expect(calls("echo")).toBe(before + 1);
    expect(agent.seen.echo!.ctx.payment).toEqual({
      family: "evm",
      x402Version: 2,
      scheme: "exact",
      network: "eip155:84532",
      payer: payer.address,
      amount: "10000",
      validBefore: Number(payload.authorization.validBefore),
      authorization: payload.authorization,
      signature: payload.signature,
      chainId: 84532,
      asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      payload: {
        x402Version: 2,
        resource: { url: "http://example.test/execute" },
        accepted,
        payload,
      },
      requirement: accepted,
    });
    // Settled, and the receipt is in PAYMENT-RESPONSE (v2).
    expect(unb64(res.headers.get("payment-response")!)).toEqual(settledReceipt(payer.address));
    expect(res.headers.get("x-payment-response")).toBeNull();
  });

  it("a v1 X-PAYMENT from another account is accepted", async () => {
    const payload = await signAuthorization(stranger);
    const res = await post(app.url, job("echo", { text: "v1" }), {
      "x-payment": v1Header(payload),
    });
    expect(res.status).toBe(200);
    expect(agent.seen.echo!.ctx.payment).toMatchObject({
      x402Version: 1,
      network: "base-sepolia",
      payer: stranger.address,
      requirement: {
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "10000",
        resource: `${app.url}/execute`,
        payTo: PAY_TO,
      },
    });
    expect(unb64(res.headers.get("x-payment-response")!)).toMatchObject({
      success: true,
      network: "base-sepolia",
      payer: stranger.address,
    });
    expect(res.headers.get("payment-response")).toBeNull();
  });

  it("a v1 payload in PAYMENT-SIGNATURE is accepted too (the spec names that header)", async () => {
    const payload = await signAuthorization(payer);
    const res = await post(app.url, job("echo", { text: "x" }), {
      "payment-signature": v1Header(payload),
    });
    expect(res.status).toBe(200);
  });

  it("a custom eip155 chain works with its configured token domain", async () => {
    const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const custom = await startApp(makeAgent(), {
      devMode: false,
      payment: {
        payTo: PAY_TO,
        network: "eip155:31337",
        asset: token,
        assetName: "Local USD",
        assetVersion: "2",
        settler: recordingSettler(),
      },
    });
    try {
      const domain = {
        name: "Local USD",
        version: "2",
        chainId: 31337,
        verifyingContract: token,
      } as const;
      const payload = await signAuthorization(payer, { domain });
      const accepted = {
        ...offerV2(),
        network: "eip155:31337",
        asset: token,
        extra: { name: "Local USD", version: "2" },
      };
      const ok = await post(custom.url, job("echo", { text: "x" }), {
        "payment-signature": v2Header(accepted, payload),
      });
      expect(ok.status).toBe(200);
      const missing = await post(custom.url, job("echo", { text: "x" }));
      expect(missing.body.accepts[0].network).toBe("eip155:31337");
    } finally {
      await custom.close();
    }
  });
});

describe("refused payments (402 payment, handler not run)", () => {
  it("tampered value", async () => {
    const payload = await signAuthorization(payer, { value: "10000" });
    payload.authorization.value = "20000";
    await refusedV1(payload, "signature does not match authorization.from");
  });

  it("wrong signer (from names someone else)", async () => {
    const payload = await signAuthorization(stranger);
    payload.authorization.from = payer.address;
    await refusedV1(payload, "signature does not match");
  });

  it("malformed signature bytes", async () => {
    const payload = await signAuthorization(payer);
    payload.signature = "0x1234";
    await refusedV1(payload, "signature is malformed");
  });

  // A v2 payment of echo, signed with `params` (made when the test runs) for `accepted` (default: our offer).
  it.each<
    [string, () => AuthorizationParams, ReturnType<typeof offerV2> | undefined, string | RegExp]
  >([
    [
      "wrong payee",
      () => ({ to: OTHER_ADDRESS }),
      undefined,
      `authorization pays ${OTHER_ADDRESS}`,
    ],
    [
      "wrong network (v2 accepted)",
      () => ({}),
      { ...offerV2(), network: "eip155:8453" },
      'network "eip155:8453"',
    ],
    [
      "wrong asset domain (signed for Base mainnet USDC)",
      () => ({
        domain: {
          name: "USD Coin",
          version: "2",
          chainId: 8453,
          verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        },
      }),
      undefined,
      /signature does not match .*name: "USDC".*chainId: 84532/,
    ],
    [
      "wrong asset in v2 accepted",
      () => ({}),
      { ...offerV2(), asset: OTHER_ADDRESS },
      /accepted requirement does not match.*asset/,
    ],
    [
      "expired",
      () => ({ validBefore: String(nowSeconds() - 10) }),
      undefined,
      "authorization expired",
    ],
    [
      "not yet valid",
      () => ({ validAfter: String(nowSeconds() + 60) }),
      undefined,
      "not valid yet",
    ],
    [
      "paid for a cheaper capability (v2: the cheap offer copied verbatim)",
      () => ({ value: "1000" }),
      offerV2("1000"),
      /accepted requirement does not match.*amount 1000/,
    ],
    [
      "paid for a cheaper capability (v2: accepted forged to the right price, value still cheap)",
      () => ({ value: "1000" }),
      offerV2("10000"),
      "pay exactly 10000",
    ],
    [
      "unsupported scheme",
      () => ({}),
      { ...offerV2(), scheme: "upto" },
      'unsupported payment scheme "upto"',
    ],
  ])("%s", async (_name, params, accepted, reason) => {
    await expectRefused(() => payV2("echo", { text: "x" }, params(), accepted), reason);
  });

  it("wrong network (v1 name)", async () => {
    const payload = await signAuthorization(payer);
    await expectRefused(
      () => post(app.url, job("echo", { text: "x" }), { "x-payment": v1Header(payload, "base") }),
      'payment is for network "base"',
    );
  });

  it("validBefore too close to the job deadline", async () => {
    const deadline = nowSeconds() + 60;
    await expectRefused(
      () =>
        payV2(
          "echo",
          { text: "x" },
          { validBefore: String(deadline + SETTLEMENT_MARGIN_SECONDS - 2) },
          offerV2(),
          {
            deadline,
          },
        ),
      /expires too early.*deadline plus 15 s/,
    );
  });

  it("validBefore exactly deadline + margin is enough", async () => {
    const deadline = nowSeconds() + 60;
    const res = await payV2(
      "echo",
      { text: "x" },
      { validBefore: String(deadline + SETTLEMENT_MARGIN_SECONDS) },
      offerV2(),
      { deadline },
    );
    expect(res.status).toBe(200);
  });

  it("underpaid", async () => {
    const payload = await signAuthorization(payer, { value: "9999" });
    await refusedV1(
      payload,
      'authorization value 9999 is not the price of "echo": pay exactly 10000 atomic units',
    );
  });

  it("overpaid (v1 too): the amount must be exact", async () => {
    const payload = await signAuthorization(payer, { value: "20000" });
    await refusedV1(payload, "pay exactly 10000");
  });

  it("a signature that is not from `from`, without an RPC: names the contract-wallet limit", async () => {
    const payload = await signAuthorization(stranger);
    payload.authorization.from = payer.address;
    await refusedV1(
      payload,
      "smart-contract wallets cannot be checked here: this service has no X402_RPC_URL configured",
    );
  });

  it("invalid payments also carry PAYMENT-REQUIRED so a client can retry", async () => {
    const res = await expectRefused(
      () => payV2("echo", { text: "x" }, { validBefore: "1" }),
      "expired",
    );
    expect(unb64(res.headers.get("payment-required")!).accepts[0].amount).toBe("10000");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  // Oversized headers: Node itself answers 431 above its 16 KiB header limit; x402.test.ts covers ours.
  describe("malformed header", () => {
    const valid = async () => ({
      x402Version: 2,
      accepted: offerV2(),
      payload: await signAuthorization(payer),
    });
    it.each<[string, () => Promise<string>, string | RegExp]>([
      ["not base64", async () => "%%%", "PAYMENT-SIGNATURE header is not standard base64"],
      [
        "base64url",
        async () =>
          b64(await valid())
            .replace(/\+/g, "-")
            .replace(/\//g, "_")
            .replace(/=+$/, "") + "-_",
        "not standard base64",
      ],
      ["not JSON", async () => Buffer.from("hello").toString("base64"), "not base64 of JSON"],
      ["a JSON array", async () => b64([1, 2]), "not base64 of a JSON object"],
      [
        "unsupported version",
        async () => b64({ ...(await valid()), x402Version: 3 }),
        "unsupported x402Version 3",
      ],
      [
        "no payload",
        async () => b64({ ...(await valid()), payload: undefined }),
        "no `payload` object",
      ],
      [
        "no accepted",
        async () => b64({ ...(await valid()), accepted: undefined }),
        "missing `accepted`",
      ],
      [
        "numeric value",
        async () => {
          const v = await valid();
          return b64({
            ...v,
            payload: { ...v.payload, authorization: { ...v.payload.authorization, value: 10000 } },
          });
        },
        "payload.authorization.value that is not a decimal string",
      ],
      [
        "short nonce",
        async () => {
          const v = await valid();
          return b64({
            ...v,
            payload: { ...v.payload, authorization: { ...v.payload.authorization, nonce: "0x01" } },
          });
        },
        "payload.authorization.nonce",
      ],
    ])("%s", async (_name, header, reason) => {
      const value = await header();
      await expectRefused(
        () => post(app.url, job("echo", { text: "x" }), { "payment-signature": value }),
        reason,
      );
    });
  });
});

describe("paid jobs still go through the rest of the pipeline", () => {
  it("output mismatch in production -> 500 internal, generic message, details logged", async () => {
    const request = job("bad_output", { text: "x" });
    const payload = await signAuthorization(payer);
    const res = await post(app.url, request, { "payment-signature": v2Header(offerV2(), payload) });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      status: "failed",
      error_type: "internal",
      error: GENERIC_INTERNAL_MESSAGE,
    });
    expect(res.text).not.toContain("secret");
    const logged = app.logger.lines.find(
      (l) => l.level === "error" && l.fields.job_id === request.job_id,
    );
    expect(String(logged?.fields.problem)).toContain('output: unknown field "secret"');
  });

  it("handler timing out after payment -> 408", async () => {
    const deadline = Date.now() / 1000 + 0.4;
    const payload = await signAuthorization(payer);
    const res = await post(app.url, job("slow", { ms: 3000 }, { deadline }), {
      "payment-signature": v2Header(offerV2(), payload),
    });
    expect(res.status).toBe(408);
    expect(res.body.error_type).toBe("deadline");
  });

  it("deadline passed on arrival with a valid payment -> 408, handler not run", async () => {
    const before = calls("echo");
    const res = await payV2("echo", { text: "x" }, {}, offerV2(), { deadline: nowSeconds() - 2 });
    expect(res.status).toBe(408);
    expect(calls("echo")).toBe(before);
  });

  it("production does not log the dev-mode warning", () => {
    expect(logText(app.logger)).not.toMatch(/bypassed/);
  });

  it("production logs its settlement route at startup, and no 'not settled' warning", () => {
    expect(logText(app.logger)).toMatch(/payments settle through the custom settler/);
    expect(logText(app.logger)).not.toMatch(/not settled/);
  });
});
