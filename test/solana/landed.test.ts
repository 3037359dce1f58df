// A Solana settlement whose transaction signature is not known (a facilitator that did not answer in time, or an
// x402 v1 facilitator that named none), resolved by finding the transaction by its message among the payer's
// recent transactions (templates/runtime/payments/svm/landed.ts, through svm/reconcile.ts), on the kit's
// JSON-RPC: transactions the official @x402/svm client signed, co-signed by a fee payer and sent to the kit.
import type { PaymentRequirements } from "@x402/core/types";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import * as solanaKit from "@solana/kit";
import {
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  signTransaction,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { landedFinder } from "../../templates/runtime/payments/svm/landed.js";
import { solanaSettlementState } from "../../templates/runtime/payments/svm/reconcile.js";
import type { SolanaKit as RuntimeKit } from "../../templates/runtime/payments/svm/solana.js";
import { transactionReader } from "../../templates/runtime/payments/svm/transaction.js";
import { officialPayment, type SolanaAccount, type SolanaKit, startSolanaKit } from "./kit.js";

const PRICE = 10_000n;
let kit: SolanaKit;
let feePayer: SolanaAccount;
let payTo: string;
const reader = Promise.resolve(transactionReader(solanaKit as unknown as RuntimeKit));

beforeAll(async () => {
  kit = await startSolanaKit();
  feePayer = await kit.newAccount();
  payTo = await kit.payee();
});
afterAll(() => kit?.close());

interface Signed {
  wire: string;
  messageHash: string;
  blockhash: string;
}

/** A payment of PRICE signed by `payer` with the official client, co-signed by the fee payer (not sent). */
async function signed(payer: SolanaAccount): Promise<Signed> {
  const accepted: PaymentRequirements = {
    scheme: "exact",
    network: kit.network as PaymentRequirements["network"],
    asset: kit.mint,
    amount: PRICE.toString(),
    payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: feePayer.address },
  };
  const payment = await officialPayment(
    kit.network,
    new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
    accepted,
  );
  const paid = (payment.payload as { transaction: string }).transaction;
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(paid));
  const wire = getBase64EncodedWireTransaction(
    await signTransaction([feePayer.signer.keyPair], tx as never),
  );
  const { messageHash, blockhash } = (await reader)(paid);
  return { wire, messageHash, blockhash };
}

/** Sends it as the official facilitator does (skipping preflight); its signature. */
const send = (s: Signed) =>
  createSolanaRpc(kit.rpcUrl)
    .sendTransaction(s.wire as never, { encoding: "base64", skipPreflight: true })
    .send();

/** What the reconciler makes of `s` sent by `payer`, its signature not known. */
function state(payer: SolanaAccount, s: Signed, finder = landedFinder(kit.rpcUrl, reader)) {
  const now = Math.floor(Date.now() / 1000);
  return solanaSettlementState(
    kit.rpcUrl,
    {
      blockhash: s.blockhash,
      validBefore: now + 180,
      search: { address: payer.address, messageHash: s.messageHash, from: now - 5 },
    },
    finder,
  );
}

const calls = (method: string) => kit.rpcCalls.filter((m) => m === method).length;

describe("a Solana settlement whose signature is not known", () => {
  it("is found by its message among the payer's transactions once it lands: confirmed, naming its signature", async () => {
    const payer = await kit.fundedPayer(PRICE);
    const payment = await signed(payer);
    await expect(state(payer, payment)).resolves.toMatchObject({
      status: "unknown",
      reason: expect.stringMatching(/has not landed yet/),
    });

    const signature = await send(payment);
    expect(await kit.usdcBalance(payTo)).toBeGreaterThanOrEqual(PRICE);
    await expect(state(payer, payment)).resolves.toEqual({
      status: "confirmed",
      transaction: signature,
    });
    // The kit's history answers @solana/kit's own RPC client in a node's shapes.
    const rpc = createSolanaRpc(kit.rpcUrl);
    const listed = await rpc.getSignaturesForAddress(payer.address).send();
    expect(listed).toMatchObject([{ signature, err: null, confirmationStatus: "finalized" }]);
    const fetched = await rpc
      .getTransaction(signature, { encoding: "base64", maxSupportedTransactionVersion: 0 })
      .send();
    expect(fetched?.transaction[0]).toBe(payment.wire);
  });

  it("landed with an error on chain (the payer's token account frozen): failed, naming the error; nothing moved", async () => {
    const payer = await kit.fundedPayer(PRICE);
    const payment = await signed(payer);
    const paid = await kit.usdcBalance(payTo);
    await kit.freeze(payer.address);
    const signature = await send(payment);

    const answer = await state(payer, payment);
    expect(answer).toMatchObject({ status: "failed" });
    expect((answer as { reason: string }).reason).toMatch(
      new RegExp(`transaction ${signature} failed on Solana: .*InstructionError`),
    );
    expect(await kit.usdcBalance(payer.address)).toBe(PRICE);
    expect(await kit.usdcBalance(payTo)).toBe(paid);
  });

  it("bounds its work: with more of the payer's transactions than one look fetches, unknown (never failed); the next look goes on", async () => {
    const payer = await kit.fundedPayer(20n * PRICE);
    const ours = await signed(payer);
    const signature = await send(ours);
    for (let i = 0; i < 12; i++) await send(await signed(payer)); // newer: looked at first
    const finder = landedFinder(kit.rpcUrl, reader);

    const before = calls("getTransaction");
    await expect(state(payer, ours, finder)).resolves.toMatchObject({
      status: "unknown",
      reason: expect.stringMatching(/more than 10 transactions to look at/),
    });
    expect(calls("getTransaction") - before).toBe(10);
    await expect(state(payer, ours, finder)).resolves.toEqual({
      status: "confirmed",
      transaction: signature,
    });
    expect(calls("getTransaction") - before).toBe(13); // the 12 newer ones and ours, each fetched once
  });

  it("never landed: unknown while its blockhash lives, failed once it has expired (it never can land)", async () => {
    const payer = await kit.fundedPayer(PRICE);
    const payment = await signed(payer);
    await expect(state(payer, payment)).resolves.toMatchObject({ status: "unknown" });
    kit.advanceBlocks(151);
    await expect(state(payer, payment)).resolves.toMatchObject({
      status: "failed",
      reason: expect.stringMatching(/did not land on Solana and its blockhash has expired/),
    });
    expect(await kit.usdcBalance(payer.address)).toBe(PRICE);
    // Asked of a node that has not yet seen the slot the expiry was seen at (a lagging node behind a load
    // balancer), the search decides nothing: not found there is not "never landed".
    const lagging = await landedFinder(kit.rpcUrl, reader).find({
      address: payer.address,
      messageHash: payment.messageHash,
      from: Math.floor(Date.now() / 1000) - 5,
      minContextSlot: Number(kit.svm.getClock().slot) + 1_000_000,
    });
    expect(lagging).toMatchObject({
      status: "unsure",
      reason: expect.stringMatching(/Minimum context slot has not been reached/),
    });
  });
});
