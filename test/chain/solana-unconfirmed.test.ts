// A Solana settlement that was sent but not confirmed in time (issue 26, finding 2, second bullet), on the
// Solana kit (LiteSVM behind the loopback JSON-RPC) with the official @x402/svm client paying and this server
// settling directly (SOLANA_FEE_PAYER_KEY, X402_SETTLE_TIMEOUT_SECONDS 2) or through the reference facilitator
// (which answers `settlement_pending` with the signature after its own 30 s). The kit holds the transaction sent
// unlanded (a node that has not processed it yet): the settlement times out, the answer is withheld and held,
// naming the transaction. Then the chain decides, asked by the identical retry or by the reconciler: landed,
// the retry gets the output and a receipt naming the signature, charged once, the handler run once; never
// landed and its blockhash expired, the retry hears that nothing was charged and a new payment is needed; landed
// with an error on chain (the payer's token account frozen by the mint's authority), the same. When the signature
// is not known (our request to the facilitator timed out, or an x402 v1 facilitator named none), the transaction is
// found by its message among the payer's recent transactions (svm/landed.ts).
import { createPaymentHeader } from "x402/client";
import { createSigner, decodeXPaymentResponse } from "x402-fetch";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { job, logText, post, unb64 } from "../runtime/helpers.js";
import type { SolanaAccount, SolanaKit } from "../solana/kit.js";
import {
  type SolanaServer,
  type SolanaServers,
  solanaPaymentHeader,
  startSolanaServers,
} from "./solana-servers.js";

const base = inject("chain");
const PRICE = 10_000n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let servers: SolanaServers;
let kit: SolanaKit;
let payer: SolanaAccount;
/** Resolved by identical retries only (its reconciler looks once an hour). */
let byRetry: SolanaServer;
/** Its reconciler looks every second. */
let byReconciler: SolanaServer;
/** Settles through the facilitator, waiting longer than the facilitator's own confirmation. */
let viaFacilitator: SolanaServer;
/** Settles directly, waiting longer than the official scheme's own confirmation (30 s). */
let patient: SolanaServer;
/** Settles through the facilitator but gives up on it after 2 s: the signature stays unknown here. */
let impatient: SolanaServer;
/** The same, its reconciler looking every second. */
let impatientReconciler: SolanaServer;

const settings = (reconcileSeconds: number) => ({
  X402_FACILITATOR_URL: base.facilitatorUrl,
  SOLANA_FEE_PAYER_KEY: servers.feePayer.secretKey,
  X402_SETTLE_TIMEOUT_SECONDS: "2",
  SETTLEMENT_RECONCILE_SECONDS: String(reconcileSeconds),
});

beforeAll(async () => {
  servers = await startSolanaServers();
  kit = servers.kit;
  payer = await kit.fundedPayer(1_000_000n);
  byRetry = await servers.start(settings(3600));
  byReconciler = await servers.start(settings(1));
  viaFacilitator = await servers.start({
    X402_FACILITATOR_URL: `${base.facilitatorUrl},${servers.facilitator.url}`,
    X402_SETTLE_TIMEOUT_SECONDS: "45",
    SETTLEMENT_RECONCILE_SECONDS: "3600",
  });
  patient = await servers.start({ ...settings(3600), X402_SETTLE_TIMEOUT_SECONDS: "45" });
  const impatientSettings = (reconcileSeconds: number) => ({
    X402_FACILITATOR_URL: `${base.facilitatorUrl},${servers.facilitator.url}`,
    X402_SETTLE_TIMEOUT_SECONDS: "2",
    SETTLEMENT_RECONCILE_SECONDS: String(reconcileSeconds),
  });
  impatient = await servers.start(impatientSettings(3600));
  impatientReconciler = await servers.start(impatientSettings(1));
}, 120_000);

afterAll(async () => {
  kit?.dropHeld();
  await byRetry?.running.close();
  await byReconciler?.running.close();
  await viaFacilitator?.running.close();
  await patient?.running.close();
  await impatient?.running.close();
  await impatientReconciler?.running.close();
  await servers?.close();
});

const soon = () => ({ deadline: Math.floor(Date.now() / 1000) + 20 });

/** The official client's payment for the server's Solana offer for `body`, as a PAYMENT-SIGNATURE value. */
const pay = (server: SolanaServer, body: unknown, by = payer) =>
  solanaPaymentHeader(server.running.url, body, kit, by);

/** The official v1 client's X-PAYMENT for the server's solana-devnet offer for `body`. */
async function payV1(server: SolanaServer, body: unknown): Promise<string> {
  const offer = await post(server.running.url, body);
  const requirement = offer.body.accepts.find(
    (a: { network: string }) => a.network === "solana-devnet",
  );
  expect(requirement).toBeDefined();
  const signer = await createSigner("solana-devnet", payer.secretKey);
  return createPaymentHeader(signer, 1, requirement as never, {
    svmConfig: { rpcUrl: kit.rpcUrl },
  });
}

/**
 * A job echoing `text`, paid for `server` (by `by`, or with the official v1 client when "v1"), with the
 * payee's balance and the handler's runs before it is sent.
 */
async function paidJob(server: SolanaServer, text: string, by: SolanaAccount | "v1" = payer) {
  const body = job("echo", { text }, soon());
  const header = by === "v1" ? await payV1(server, body) : await pay(server, body, by);
  const before = await kit.usdcBalance(servers.payTo);
  return { body, header, before, runs: server.agent.calls.echo ?? 0 };
}

/**
 * Sends `body` paid by the v1 X-PAYMENT `header` while the kit holds transactions: a 402 saying `error`,
 * not that nothing was charged (the transaction was sent: it may still land).
 */
async function unconfirmedV1(server: SolanaServer, body: unknown, header: string, error: RegExp) {
  kit.holdSends();
  const first = await post(server.running.url, body, { "X-PAYMENT": header });
  expect(first.status, first.text).toBe(402);
  expect(first.body.error).toMatch(error);
  expect(first.body.error).not.toMatch(/Nothing was charged/);
}

/** Sends `body` paid by `header` while the kit holds transactions: the settlement goes unconfirmed. */
async function unconfirmed(server: SolanaServer, body: unknown, header: string) {
  kit.holdSends();
  const first = await post(server.running.url, body, { "payment-signature": header });
  expect(first.status, first.text).toBe(402);
  expect(first.body.error).toMatch(/unconfirmed.*send the identical request again later/);
  expect(first.body.output).toBeUndefined();
}

/** What the identical retry of a held payment must get once its transaction landed as `signature`. */
interface Delivered {
  output: unknown;
  signature: string | undefined;
  /** The payee's balance before the payment. */
  before: bigint;
  /** The handler's runs before the payment. */
  runs: number;
  /** Also send it a third time: the same answer, nothing more charged. */
  again?: boolean;
}

/**
 * The identical retry (`paid`: the PAYMENT-SIGNATURE or X-PAYMENT header) gets a 200 with the output and a
 * receipt naming the landed transaction (x402 v2's PAYMENT-RESPONSE, or v1's X-PAYMENT-RESPONSE); the payee
 * gained the price once, the handler ran once.
 */
async function expectDelivered(
  server: SolanaServer,
  body: unknown,
  paid: Record<string, string>,
  expected: Delivered,
) {
  const retry = await post(server.running.url, body, paid);
  expect(retry.status, retry.text).toBe(200);
  expect(retry.body.output).toEqual(expected.output);
  if ("X-PAYMENT" in paid)
    expect(decodeXPaymentResponse(retry.headers.get("x-payment-response")!)).toMatchObject({
      success: true,
      transaction: expected.signature,
    });
  else
    expect(unb64(retry.headers.get("payment-response")!)).toMatchObject({
      success: true,
      transaction: expected.signature,
      network: kit.network,
    });
  if (expected.again) {
    const again = await post(server.running.url, body, paid);
    expect(again.status, again.text).toBe(200);
  }
  expect(await kit.usdcBalance(servers.payTo)).toBe(expected.before + PRICE);
  expect(server.agent.calls.echo).toBe(expected.runs + 1);
}

/** What the identical retry hears when `signature` landed but failed on chain. */
const failedOnChain = (signature: string | undefined) =>
  new RegExp(`transaction ${signature} failed on Solana.*nothing was charged; sign a new payment`);

/** The identical retry hears a 402 saying `error` (nothing was charged), and the payee got nothing. */
async function expectNothingCharged(
  server: SolanaServer,
  body: unknown,
  header: string,
  error: RegExp,
  before: bigint,
) {
  const retry = await post(server.running.url, body, { "payment-signature": header });
  expect(retry.status, retry.text).toBe(402);
  expect(retry.body.error).toMatch(error);
  expect(retry.body.output).toBeUndefined();
  expect(await kit.usdcBalance(servers.payTo)).toBe(before);
}

describe("a Solana settlement sent but not confirmed in time", () => {
  it("is held; once the transaction lands, the identical retry gets the output and a receipt naming it, charged once", async () => {
    const { body, header, before, runs } = await paidJob(byRetry, "unconfirmed");

    await unconfirmed(byRetry, body, header);
    // Not landed yet: the retry is told to wait; nothing is sent or charged again.
    const waiting = await post(byRetry.running.url, body, { "payment-signature": header });
    expect(waiting.status, waiting.text).toBe(402);
    expect(waiting.body.error).toMatch(/still unconfirmed/);
    expect(await kit.usdcBalance(servers.payTo)).toBe(before);

    const [signature] = kit.landHeld();
    expect(await kit.usdcBalance(servers.payTo)).toBe(before + PRICE);
    // Then again: the same answer, nothing more charged, the handler run once in all.
    await expectDelivered(
      byRetry,
      body,
      { "payment-signature": header },
      { output: { text: "unconfirmed" }, signature, before, runs, again: true },
    );
  }, 60_000);

  it("never landed and its blockhash expired: the identical retry hears that nothing was charged", async () => {
    const { body, header, before } = await paidJob(byRetry, "lost");

    await unconfirmed(byRetry, body, header);
    kit.dropHeld();
    kit.advanceBlocks(151); // the transaction's blockhash expires: it can never land
    await expectNothingCharged(
      byRetry,
      body,
      header,
      /blockhash has expired.*nothing was charged; sign a new payment/,
      before,
    );
    expect(await kit.usdcBalance(payer.address)).toBeGreaterThanOrEqual(PRICE);
  }, 60_000);

  it("the reconciler resolves it without a retry: the next identical request gets the output", async () => {
    const { body, header, before, runs } = await paidJob(byReconciler, "reconciled");

    await unconfirmed(byReconciler, body, header);
    const [signature] = kit.landHeld();
    const log = () => logText(byReconciler.logger!);
    for (let i = 0; i < 100 && !/unconfirmed settlement confirmed/.test(log()); i++)
      await sleep(50);
    expect(log()).toMatch(/unconfirmed settlement confirmed/);
    expect(log()).toContain(signature);
    await expectDelivered(
      byReconciler,
      body,
      { "payment-signature": header },
      { output: { text: "reconciled" }, signature, before, runs },
    );
  }, 60_000);

  it("through a facilitator: its pending settlement names the signature, and the identical retry gets the output once it lands", async () => {
    const { body, header, before, runs } = await paidJob(viaFacilitator, "facilitated");

    await unconfirmed(viaFacilitator, body, header); // the facilitator gives up after its 30 s
    const [signature] = kit.landHeld();
    await expectDelivered(
      viaFacilitator,
      body,
      { "payment-signature": header },
      { output: { text: "facilitated" }, signature, before, runs },
    );
  }, 90_000);

  it("x402 v1, settled directly: a transaction the official v1 scheme could not confirm is held under its signature, not called 'not landed'", async () => {
    const { body, header, before, runs } = await paidJob(patient, "v1", "v1");

    await unconfirmedV1(
      patient,
      body,
      header,
      /unconfirmed.*send the identical request again later/,
    );
    const [signature] = kit.landHeld();
    expect(await kit.usdcBalance(servers.payTo)).toBe(before + PRICE);
    await expectDelivered(
      patient,
      body,
      { "X-PAYMENT": header },
      { output: { text: "v1" }, signature, before, runs },
    );
  }, 90_000);

  it("x402 v1 through a facilitator that could not confirm and names no transaction: found by its message once it lands; the identical retry gets the output and a receipt naming it", async () => {
    const { body, header, before, runs } = await paidJob(viaFacilitator, "v1 facilitated", "v1");

    await unconfirmedV1(viaFacilitator, body, header, /unconfirmed/);
    const [signature] = kit.landHeld(); // it was sent: it lands, and the payee is paid
    expect(await kit.usdcBalance(servers.payTo)).toBe(before + PRICE);
    // Its signature unknown here, the transaction is found among the payer's: the retry gets the output.
    await expectDelivered(
      viaFacilitator,
      body,
      { "X-PAYMENT": header },
      { output: { text: "v1 facilitated" }, signature, before, runs },
    );
  }, 90_000);

  it("through a facilitator that did not answer in time (the signature unknown here): found by its message once it lands; the identical retry gets the output and a receipt naming it, charged once", async () => {
    const { body, header, before, runs } = await paidJob(impatient, "timed out");

    await unconfirmed(impatient, body, header);
    const waiting = await post(impatient.running.url, body, { "payment-signature": header });
    expect(waiting.status, waiting.text).toBe(402);
    expect(waiting.body.error).toMatch(/still unconfirmed.*has not landed yet/);
    const [signature] = kit.landHeld();
    await expectDelivered(
      impatient,
      body,
      { "payment-signature": header },
      { output: { text: "timed out" }, signature, before, runs, again: true },
    );
  }, 60_000);

  it("through a facilitator that did not answer in time, never landed and its blockhash expired: the identical retry hears that nothing was charged", async () => {
    const { body, header, before } = await paidJob(impatient, "timed out, lost");
    const paying = await kit.usdcBalance(payer.address);

    await unconfirmed(impatient, body, header);
    kit.dropHeld();
    kit.advanceBlocks(151);
    await expectNothingCharged(
      impatient,
      body,
      header,
      /did not land on Solana and its blockhash has expired.*nothing was charged; sign a new payment/,
      before,
    );
    expect(await kit.usdcBalance(payer.address)).toBe(paying);
  }, 60_000);

  it("landed with an error on chain (the payer's token account frozen), its signature unknown here: the reconciler finds it failed; the identical retry hears that nothing was charged", async () => {
    const frozen = await kit.fundedPayer(PRICE);
    const { body, header, before } = await paidJob(impatientReconciler, "frozen", frozen);

    await unconfirmed(impatientReconciler, body, header);
    await kit.freeze(frozen.address);
    const [signature] = kit.landHeld(); // it lands, and fails in execution
    const log = () => logText(impatientReconciler.logger!);
    for (let i = 0; i < 100 && !/unconfirmed settlement failed/.test(log()); i++) await sleep(50);
    expect(log()).toMatch(/unconfirmed settlement failed/);
    await expectNothingCharged(impatientReconciler, body, header, failedOnChain(signature), before);
    expect(await kit.usdcBalance(frozen.address)).toBe(PRICE);
  }, 60_000);

  it("settled directly, landed with an error on chain (its signature known): the identical retry hears that nothing was charged", async () => {
    const frozen = await kit.fundedPayer(PRICE);
    const { body, header, before } = await paidJob(byRetry, "frozen, direct", frozen);

    await unconfirmed(byRetry, body, header);
    await kit.freeze(frozen.address);
    const [signature] = kit.landHeld();
    await expectNothingCharged(byRetry, body, header, failedOnChain(signature), before);
    expect(await kit.usdcBalance(frozen.address)).toBe(PRICE);
  }, 60_000);
});
