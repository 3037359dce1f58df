// The gate accepts exactly what USDC's transferWithAuthorization accepts, so a payment the token
// would refuse never runs a handler: signature encodings, validAfter, address checksums, ERC-6492;
// a refusal at settlement burns the authorization; long jobs are offered a long enough window.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { timeoutFor } from "../../templates/runtime/payments/gate.js";
import { SettlementError } from "../../templates/runtime/payments/settlement.js";
import {
  anvilAccount,
  job,
  makeAgent,
  nowSeconds,
  offerV2,
  post,
  production,
  recordingSettler,
  signAuthorization,
  startApp,
  unb64,
  v2Header,
  type RecordingSettler,
  type TestAgent,
  paymentSignature,
} from "./helpers.js";

const payer = anvilAccount();
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let agent: TestAgent;
let settler: RecordingSettler;
let app: Awaited<ReturnType<typeof startApp>>;
beforeEach(async () => {
  agent = makeAgent();
  settler = recordingSettler();
  app = await startApp(agent, production(settler));
});
afterEach(() => app.close());

/** A signed payment whose signature or authorization is then altered. */
async function altered(
  change: (p: { signature: `0x${string}`; authorization: Record<string, string> }) => void,
  params: Parameters<typeof signAuthorization>[1] = {},
) {
  const payload = await signAuthorization(payer, params);
  change(payload as never);
  return v2Header(offerV2(), payload);
}

const withSignature = (signature: `0x${string}`) => (p: { signature: `0x${string}` }) => {
  p.signature = signature;
};

async function expectRefused(header: string, reason: RegExp) {
  const res = await post(app.url, job("echo", { text: "x" }), { "payment-signature": header });
  expect(res.status, res.text).toBe(402);
  expect(res.body.error_type).toBe("payment");
  expect(res.body.error).toMatch(reason);
  expect(agent.calls.echo ?? 0).toBe(0);
  return res;
}

describe("signatures the token would refuse are refused before anything runs", () => {
  it("a high-s signature (s' = n - s, v flipped), though it recovers the payer", async () => {
    const { signature } = await signAuthorization(payer);
    const r = signature.slice(2, 66);
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const v = parseInt(signature.slice(130, 132), 16);
    const high =
      `0x${r}${(N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}` as const;
    const header = await altered((p) => {
      p.signature = high;
    });
    await expectRefused(header, /high s value/);
  });

  it("v = 0/1 instead of 27/28", async () => {
    const header = await altered((p) => {
      const v = parseInt(p.signature.slice(130, 132), 16);
      p.signature = `${p.signature.slice(0, 130)}0${v - 27}` as `0x${string}`;
    });
    await expectRefused(header, /v = [01]: USDC accepts only v = 27 or 28/);
  });

  it("an ERC-6492-wrapped signature gets its own reason", async () => {
    const { signature } = await signAuthorization(payer);
    const wrapped = `0x${"00".repeat(96)}${signature.slice(2)}${"6492".repeat(16)}` as const;
    await expectRefused(await altered(withSignature(wrapped)), /ERC-6492/);
  });

  it("a from address with a bad EIP-55 checksum gets its own reason", async () => {
    const header = await altered((p) => {
      const lower = p.authorization.from!.toLowerCase();
      // Flip the case of the first letter: mixed case, wrong checksum.
      const i = lower.slice(2).search(/[a-f]/) + 2;
      const mixed = p.authorization.from!.split("");
      mixed[i] =
        mixed[i] === mixed[i]!.toUpperCase() ? mixed[i]!.toLowerCase() : mixed[i]!.toUpperCase();
      p.authorization.from = mixed.join("");
    });
    await expectRefused(header, /EIP-55/);
  });

  it("validAfter equal to the current second: the token needs the block time strictly after it", async () => {
    // Start early in a second, so signing and sending stay within it on a busy machine.
    await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));
    const header = await altered(() => undefined, { validAfter: String(nowSeconds()) });
    await expectRefused(header, /strictly before now/);
  });
});

describe("a refusal at settlement", () => {
  it("by the token (permanent): nothing charged, and the same authorization never runs the handler again", async () => {
    settler.behave.fail = new SettlementError(
      "the transfer would fail: Blacklistable: account is blacklisted",
      {
        permanent: true,
      },
    );
    const header = await paymentSignature(payer);
    const res = await post(app.url, job("echo", { text: "x" }), { "payment-signature": header });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/will not be accepted again: sign a new one/);
    settler.behave.fail = undefined;
    const again = await post(app.url, job("echo", { text: "y" }), { "payment-signature": header });
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/refused at settlement/);
    expect(agent.calls.echo).toBe(1);
  });

  it("by an outage (transient): the same authorization may be sent again", async () => {
    settler.behave.fail = new SettlementError(
      "facilitator http://f/settle is unreachable (ECONNREFUSED)",
    );
    const header = await paymentSignature(payer);
    const res = await post(app.url, job("echo", { text: "x" }), { "payment-signature": header });
    expect(res.body.error).toMatch(/may be sent again/);
    settler.behave.fail = undefined;
    expect(
      (await post(app.url, job("echo", { text: "y" }), { "payment-signature": header })).status,
    ).toBe(200);
  });
});

describe("long jobs", () => {
  it("the 402 for a job an hour away offers a window covering its deadline plus the settlement margin", async () => {
    const deadline = nowSeconds() + 3600;
    const res = await post(app.url, job("echo", { text: "x" }, { deadline }));
    expect(res.status).toBe(402);
    const offered = unb64(res.headers.get("payment-required")!).accepts[0].maxTimeoutSeconds;
    expect(offered).toBeGreaterThanOrEqual(3600 + 15);
    expect(res.body.accepts[0].maxTimeoutSeconds).toBe(offered);
    // A client signing validBefore = now + offered pays for it.
    const header = v2Header(
      { ...offerV2(), maxTimeoutSeconds: offered },
      await signAuthorization(payer, { validBefore: String(nowSeconds() + offered) }),
    );
    const paid = await post(app.url, job("echo", { text: "x" }, { deadline }), {
      "payment-signature": header,
    });
    expect(paid.status, paid.text).toBe(200);
  });

  it("short jobs keep the configured window", () => {
    expect(timeoutFor(300, nowSeconds() + 60)).toBe(300);
    expect(timeoutFor(300, undefined)).toBe(300);
    expect(timeoutFor(300, Date.now() / 1000 + 3600, Date.now())).toBe(3600 + 15 + 30);
  });
});
