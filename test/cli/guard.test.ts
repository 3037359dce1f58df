// The payer's guard (src/caller/guard.ts, guard-evm.ts), rule by rule: how an offer's amount is read, and what a payment
// must be before it may leave. The chain tests (test/chain/hostile.test.ts) show the same rules holding
// against a seller that settles whatever it gets.
import { describe, expect, it } from "vitest";
import { checkSignedPayment } from "../../src/caller/guard-evm.js";
import { offerAmount, offersOf402, readOffers, signingWindow } from "../../src/caller/guard.js";
import { readLimited } from "../../src/caller/guard-read.js";

const PAYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const PAYEE = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const offer = { scheme: "exact", network: "eip155:84532", asset: ASSET, payTo: PAYEE };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

describe("offerAmount reads the field the scheme of that version signs", () => {
  it("v2 signs amount, v1 signs maxAmountRequired", () => {
    expect(offerAmount(2, { amount: "10000" })).toBe(10000n);
    expect(offerAmount(1, { maxAmountRequired: "10000" })).toBe(10000n);
    expect(offerAmount(2, { amount: "10000", maxAmountRequired: "10000" })).toBe(10000n);
    expect(() => offerAmount(2, { maxAmountRequired: "10000" })).toThrow(
      '"amount" (the amount an x402 v2 payer signs) is missing',
    );
    expect(() => offerAmount(1, { amount: "10000" })).toThrow(
      '"maxAmountRequired" (the amount an x402 v1 payer signs) is missing',
    );
  });

  it.each([
    [1_000_000, "the number 1000000"],
    ["1e6", '"1e6"'],
    ["0xf4240", '"0xf4240"'],
    ["1000000.0", '"1000000.0"'],
    [" 1000000", '" 1000000"'],
    ["-1", '"-1"'],
    ["", '""'],
    [null, "a null"],
    [["1"], "an array"],
    ["1".repeat(79), `"${"1".repeat(40)}…"`],
  ])("refuses %j: not a decimal string of atomic units", (amount, shown) => {
    expect(() => offerAmount(2, { amount })).toThrow(
      `"amount" (the amount an x402 v2 payer signs) is ${shown}, not a decimal string`,
    );
    expect(() => offerAmount(1, { maxAmountRequired: amount })).toThrow("not a decimal string");
  });

  it("refuses an offer whose second amount field disagrees, or is not a decimal string", () => {
    expect(() => offerAmount(1, { amount: "1", maxAmountRequired: "1000000" })).toThrow(
      '"amount" is "1" while "maxAmountRequired" is "1000000": the offer states two amounts',
    );
    expect(() => offerAmount(2, { amount: "10000", maxAmountRequired: 10000 })).toThrow(
      '"maxAmountRequired" is the number 10000 while "amount" is "10000"',
    );
  });
});

describe("readOffers", () => {
  it("one bad entry refuses the whole answer, naming it", () => {
    expect(() =>
      readOffers({
        x402Version: 2,
        accepts: [
          { ...offer, amount: "1" },
          { ...offer, amount: 1e6 },
        ],
      }),
    ).toThrow('the service\'s payment offer accepts[1]: "amount"');
    expect(() => readOffers({ x402Version: 3, accepts: [] })).toThrow("x402 versions 1 and 2");
    expect(() => readOffers({ x402Version: 2, accepts: [] })).toThrow('has no "accepts" entries');
    // A 402 with no offer says why in its own "error" (a Solana-only service, a far deadline): shown, on one line.
    const why =
      "payment required; not payable on solana:EtWT: the job's deadline is 120 s away\u001b[2J\n";
    expect(() => readOffers({ x402Version: 2, accepts: [], error: why })).toThrow(
      'has no "accepts" entries (the service says: payment required; not payable on solana:EtWT: the job\'s deadline is 120 s away [2J )',
    );
    expect(() =>
      readOffers({ x402Version: 2, accepts: [{ ...offer, amount: "1", payTo: 5 }] }),
    ).toThrow('accepts[0]: "payTo" is the number 5');
  });

  it("offersOf402 reads where the official client reads: the header first, else a v1 body", () => {
    const header = new Headers({
      "payment-required": b64({ x402Version: 2, accepts: [{ ...offer, amount: "7" }] }),
    });
    const v1Body = JSON.stringify({
      x402Version: 1,
      accepts: [{ ...offer, maxAmountRequired: "9" }],
    });
    expect(offersOf402(header, v1Body)![0]!.amount).toBe(7n);
    expect(offersOf402(new Headers(), v1Body)![0]).toMatchObject({ x402Version: 1, amount: 9n });
    expect(offersOf402(new Headers(), '{"status":"failed"}')).toBeUndefined();
    expect(() => offersOf402(new Headers({ "payment-required": "%%%" }), "")).toThrow(
      "not base64 JSON",
    );
  });
});

describe("checkSignedPayment: the payment about to leave", () => {
  const offers = readOffers({ x402Version: 2, accepts: [{ ...offer, amount: "10000" }] });
  const authorization = (value: unknown, more: Record<string, unknown> = {}) => ({
    from: PAYER,
    to: PAYEE,
    value,
    validAfter: "0",
    validBefore: String(Math.floor(Date.now() / 1000) + 600), // the official client: now + maxTimeoutSeconds
    nonce: `0x${"11".repeat(32)}`,
    ...more,
  });
  const v2 = (
    value: unknown,
    more: Record<string, unknown> = {},
    accepted: object = { ...offer, amount: "10000" },
  ) =>
    b64({
      x402Version: 2,
      accepted,
      payload: { signature: "0x00", authorization: authorization(value, more) },
    });
  const limit = { maxAtomic: 10000n, payer: PAYER, validForAtMost: signingWindow(300) };

  it("passes the checked offer's authorization and reports what it signs", () => {
    expect(checkSignedPayment(v2("10000"), offers, limit)).toEqual({
      x402Version: 2,
      network: "eip155:84532",
      amount: 10000n,
      payer: PAYER,
      payTo: PAYEE,
      asset: ASSET,
    });
  });

  it.each([
    ["a value above the cap", v2("10001"), "signs 10001 atomic units, more than the 10000 allowed"],
    ["a number value", v2(10000), "signs a value of the number 10000"],
    ["a value unlike its offer", v2("5000"), "signs 5000 atomic units for an offer of 10000"],
    ["another payee", v2("10000", { to: PAYER }), "matches none of the offers that were checked"],
    ["another payer", v2("10000", { from: PAYEE }), `is signed for the account ${PAYEE}`],
    [
      "an offer never made",
      v2("10000", {}, { ...offer, network: "eip155:8453", amount: "10000" }),
      "matches none of the offers",
    ],
    [
      "a Permit2 payload",
      b64({
        x402Version: 2,
        accepted: { ...offer, amount: "10000" },
        payload: { signature: "0x", permit2Authorization: {} },
      }),
      "is not an EIP-3009 transfer authorization",
    ],
    ["not base64 JSON", "!!", "the payment header about to be sent is not base64 JSON"],
    [
      "a window of years (a hostile maxTimeoutSeconds)",
      v2("10000", { validBefore: String(Math.floor(Date.now() / 1000) + 100_000_000) }),
      "longer than the job's deadline plus an hour (3900 s)",
    ],
    [
      "a validBefore that is a number",
      v2("10000", { validBefore: 1 }),
      "is valid before the number 1, not a decimal string of Unix seconds",
    ],
  ])("refuses %s", (_, header, message) => {
    expect(() => checkSignedPayment(header, offers, limit)).toThrow(message);
  });

  it("v1: the payment must match an offer of v1 by network, payee and amount", () => {
    const v1Offers = readOffers({
      x402Version: 1,
      accepts: [{ ...offer, network: "base-sepolia", maxAmountRequired: "10000" }],
    });
    const v1 = (value: string) =>
      b64({
        x402Version: 1,
        scheme: "exact",
        network: "base-sepolia",
        payload: { signature: "0x00", authorization: authorization(value) },
      });
    expect(checkSignedPayment(v1("10000"), v1Offers, limit).amount).toBe(10000n);
    expect(() => checkSignedPayment(v1("9000"), v1Offers, limit)).toThrow(
      "matches none of the offers",
    );
  });
});

describe("readLimited", () => {
  it("reads an answer up to the limit and refuses one byte more, by Content-Length or as it streams", async () => {
    expect((await readLimited(new Response("x".repeat(1024)), 1024, "the answer")).length).toBe(
      1024,
    );
    await expect(readLimited(new Response("x".repeat(1025)), 1024, "the answer")).rejects.toThrow(
      "the answer is larger than 1 KiB, the most this caller reads of one answer",
    );
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(4096));
      },
    });
    await expect(readLimited(new Response(endless), 64 * 1024, "the result")).rejects.toThrow(
      "larger than 64 KiB",
    );
    expect(pulled).toBeLessThan(40);
  });
});
