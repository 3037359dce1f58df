// The facilitator HTTP client and settler against a local stand-in server: what is sent, and how
// each kind of failure is reported (refused, not charged, or outcome unknown). The real reference
// facilitator on a real chain is exercised in test/chain/settlement.test.ts.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentError } from "../../templates/runtime/errors.js";
import { createFacilitatorSettler } from "../../templates/runtime/payments/facilitator.js";
import { SettlementError } from "../../templates/runtime/payments/settlement.js";
import type { VerifiedPayment } from "../../templates/runtime/types.js";
import { offerV2 } from "./helpers.js";
import { closedUrl as unusedUrl, closeServer, listenLocal } from "./servers.js";

const TX = `0x${"ab".repeat(32)}`;
const payment = {
  x402Version: 2,
  scheme: "exact",
  network: "eip155:84532",
  payer: "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  payload: { x402Version: 2, accepted: offerV2(), payload: { signature: "0x01" }, extra: "kept" },
  requirement: offerV2(),
} as unknown as VerifiedPayment;

/** What the stand-in answers next, per path. */
let answer: (path: string, res: ServerResponse) => void;
const received: Array<{ path: string; body: unknown }> = [];
let url: string;
/** A port nothing listens on (connection refused). */
let closedUrl: string;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res) => {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    received.push({ path: req.url ?? "", body: JSON.parse(text) });
    answer(req.url ?? "", res);
  });
  url = `${await listenLocal(server)}/facilitator/`;
  closedUrl = await unusedUrl();
});
afterAll(() => closeServer(server));

const json = (status: number, body: unknown) => (_path: string, res: ServerResponse) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

async function settleError(timeoutMs = 2000): Promise<SettlementError> {
  const err = await createFacilitatorSettler(url, timeoutMs)
    .settle(payment)
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SettlementError);
  return err as SettlementError;
}

describe("requests", () => {
  it("POSTs {x402Version, paymentPayload verbatim, paymentRequirements} to <url>/verify and /settle", async () => {
    received.length = 0;
    answer = (path, res) =>
      json(
        200,
        path.endsWith("/verify")
          ? { isValid: true }
          : {
              success: true,
              transaction: TX,
              network: "eip155:84532",
              payer: payment.payer,
            },
      )(path, res);
    const settler = createFacilitatorSettler(url, 2000);
    await settler.verify!(payment);
    const result = await settler.settle(payment);
    expect(result).toEqual({ transaction: TX, network: "eip155:84532", payer: payment.payer });
    expect(received.map((r) => r.path)).toEqual(["/facilitator/verify", "/facilitator/settle"]);
    for (const r of received)
      expect(r.body).toEqual({
        x402Version: 2,
        paymentPayload: payment.payload,
        paymentRequirements: payment.requirement,
      });
  });
});

describe("verify", () => {
  it("isValid false -> PaymentError with the facilitator's reason", async () => {
    answer = json(200, {
      isValid: false,
      invalidReason: "insufficient_funds",
      invalidMessage: "balance 0",
    });
    const err = await createFacilitatorSettler(url, 2000).verify!(payment).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentError);
    expect((err as Error).message).toBe(
      "the facilitator refused the payment: insufficient_funds: balance 0",
    );
  });

  it("facilitator unreachable -> PaymentError (fail closed), saying to try later", async () => {
    const err = await createFacilitatorSettler(closedUrl, 2000).verify!(payment).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PaymentError);
    expect((err as Error).message).toMatch(
      /could not be verified, so the job was not run: .*unreachable \(ECONNREFUSED\); try again later/,
    );
  });

  it("non-2xx -> PaymentError naming the status", async () => {
    answer = json(503, { error: "maintenance" });
    const err = await createFacilitatorSettler(url, 2000).verify!(payment).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/answered HTTP 503/);
  });
});

describe("settle failures", () => {
  it("a multi-paragraph errorMessage is cut to its first paragraph, on one line", async () => {
    answer = json(200, {
      success: false,
      errorReason: "invalid_exact_evm_insufficient_balance",
      errorMessage:
        "The contract function reverted:\nERC20: too low\n\nContract Call:\n  sender: 0x1",
    });
    expect((await settleError()).message).toBe(
      "the facilitator could not settle the payment: invalid_exact_evm_insufficient_balance: The contract function reverted: ERC20: too low",
    );
  });

  it("success false -> not charged, with the reason and the tx if any", async () => {
    answer = json(200, {
      success: false,
      errorReason: "invalid_transaction_state",
      transaction: TX,
    });
    const err = await settleError();
    expect(err.uncertain).toBe(false);
    expect(err.message).toBe(
      `the facilitator could not settle the payment: invalid_transaction_state (transaction ${TX})`,
    );
    // Kept for a later look at an unconfirmed settlement (payments/evm/resettle.ts).
    expect([err.permanent, err.reason, err.transaction]).toEqual([
      true,
      "invalid_transaction_state",
      TX,
    ]);
  });

  it("facilitator down (connection refused) -> not charged", async () => {
    const err = await createFacilitatorSettler(closedUrl, 2000)
      .settle(payment)
      .catch((e: unknown) => e);
    if (!(err instanceof SettlementError)) throw new Error("expected a SettlementError");
    expect(err.uncertain).toBe(false);
    expect(err.message).toMatch(/unreachable \(ECONNREFUSED\)/);
  });

  it("HTTP 400 -> not charged, naming the status", async () => {
    answer = json(400, { error: "bad request" });
    const err = await settleError();
    expect(err.uncertain).toBe(false);
    expect(err.message).toMatch(/answered HTTP 400/);
  });

  // A gateway that gave up waiting (502/504), or a facilitator that failed after sending the
  // transfer: it may have been settled, so never "nothing was charged, pay again".
  it.each([500, 502, 504, 408])("HTTP %i -> uncertain, naming the status", async (status) => {
    answer = json(status, { error: "oops" });
    const err = await settleError();
    expect(err.uncertain).toBe(true);
    expect(err.message).toMatch(new RegExp(`answered HTTP ${status}`));
  });

  // Sent, its receipt not seen in time; or so, but the facilitator could not keep it for a retry
  // (its reason is then another, its message says settlement_pending).
  it.each([
    ["settlement_pending", "Timed out while waiting for transaction"],
    ["invalid_exact_evm_transaction_failed", "settlement_pending, but failed to persist for retry"],
  ])("%s (%s) -> uncertain, with its transaction", async (errorReason, errorMessage) => {
    answer = json(200, { success: false, errorReason, errorMessage, transaction: TX });
    const err = await settleError();
    expect([err.uncertain, err.broadcastTx]).toEqual([true, TX]);
    expect(err.message).toMatch(/sent the transfer but has not seen it confirmed/);
  });

  it("no answer within the timeout -> uncertain (it may have settled)", async () => {
    answer = () => undefined; // never answers
    const err = await settleError(200);
    expect(err.uncertain).toBe(true);
    expect(err.message).toMatch(
      /did not answer within 0.2 s; the payment may or may not have been settled/,
    );
  });

  it("a 2xx that is not JSON -> uncertain", async () => {
    answer = (_p, res) => res.writeHead(200).end("<html>");
    expect((await settleError()).uncertain).toBe(true);
  });

  it("success without a transaction hash -> uncertain", async () => {
    answer = json(200, { success: true, transaction: "" });
    expect((await settleError()).uncertain).toBe(true);
  });
});
