// The Solana kit against the official code: @x402/svm's client scheme pays 0.01 USDC through the reference
// facilitator served over HTTP, on a real Solana runtime (LiteSVM) behind the kit's JSON-RPC endpoint.
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import {
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  signTransaction,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  officialPayment,
  type SolanaAccount,
  type SolanaKit,
  startSolanaKit,
  startSvmFacilitator,
  type SvmFacilitator,
} from "./kit.js";

const PRICE = 10_000n; // 0.01 USDC

let kit: SolanaKit;
let facilitator: SvmFacilitator;
let feePayer: SolanaAccount;

beforeAll(async () => {
  kit = await startSolanaKit();
  feePayer = await kit.newAccount();
  facilitator = await startSvmFacilitator(kit, { feePayer });
});

afterAll(async () => {
  await facilitator?.stop();
  await kit?.close();
});

function requirements(payTo: string, amount = PRICE): PaymentRequirements {
  return {
    scheme: "exact",
    network: kit.network as PaymentRequirements["network"],
    asset: kit.mint,
    amount: amount.toString(),
    payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: facilitator.feePayer },
  };
}

const pay = (signer: ExactSvmScheme, accepted: PaymentRequirements): Promise<PaymentPayload> =>
  officialPayment(kit.network, signer, accepted);

describe("Solana test kit", () => {
  it("moves 0.01 USDC with the official client and facilitator; the same payment again and an underpayment are refused", async () => {
    const payer = await kit.fundedPayer(1_000_000n);
    const payTo = await kit.payee();
    const http = new HTTPFacilitatorClient({ url: facilitator.url });

    const supported = await http.getSupported();
    const kind = supported.kinds.find((k) => k.network === kit.network && k.x402Version === 2);
    expect(kind?.extra?.feePayer).toBe(facilitator.feePayer);

    const scheme = new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl });
    const wanted = requirements(payTo);
    const payment = await pay(scheme, wanted);
    const feeBefore = kit.lamports(facilitator.feePayer);

    await expect(http.verify(payment, wanted)).resolves.toMatchObject({
      isValid: true,
      payer: payer.address,
    });
    const settled = await http.settle(payment, wanted);
    expect(settled).toMatchObject({ success: true, network: kit.network, payer: payer.address });
    expect(await kit.usdcBalance(payTo)).toBe(PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
    expect(kit.lamports(payer.address)).toBe(0n); // the fee payer paid the fee
    expect(kit.lamports(facilitator.feePayer)).toBeLessThan(feeBefore);

    // The same payment again: refused by the facilitator that settled it (its in-process cache) and by a fresh
    // one (the RPC, as a real node, refuses to simulate a message that already landed): no second transfer.
    const again = await http.settle(payment, wanted);
    expect(again.success).toBe(false);
    const other = await startSvmFacilitator(kit, { feePayer });
    try {
      const fresh = new HTTPFacilitatorClient({ url: other.url });
      await expect(fresh.verify(payment, wanted)).resolves.toMatchObject({ isValid: false });
      await expect(fresh.settle(payment, wanted)).resolves.toMatchObject({ success: false });
    } finally {
      await other.stop();
    }
    expect(await kit.usdcBalance(payTo)).toBe(PRICE);

    // Underpayment: a transfer of 0.009999 presented for a 0.01 requirement.
    const short = await pay(scheme, requirements(payTo, PRICE - 1n));
    const claimed = { ...short, accepted: wanted };
    await expect(http.verify(claimed, wanted)).resolves.toMatchObject({ isValid: false });
    await expect(http.settle(claimed, wanted)).resolves.toMatchObject({ success: false });
    expect(await kit.usdcBalance(payTo)).toBe(PRICE);
    expect(await kit.usdcBalance(payer.address)).toBe(1_000_000n - PRICE);
  });

  it("answers a landed transaction sent again with its signature and a success status, as a real node does", async () => {
    const payer = await kit.fundedPayer(PRICE);
    const payTo = await kit.payee();
    const payment = await pay(
      new ExactSvmScheme(payer.signer, { rpcUrl: kit.rpcUrl }),
      requirements(payTo),
    );
    const wire = (payment.payload as { transaction: string }).transaction;
    const unsigned = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const signed = await signTransaction([feePayer.signer.keyPair], unsigned as never);
    const encoded = getBase64EncodedWireTransaction(signed);
    const rpc = createSolanaRpc(kit.rpcUrl);
    const send = () =>
      rpc.sendTransaction(encoded, { encoding: "base64", skipPreflight: true }).send();
    const first = await send();
    expect(await send()).toBe(first);
    const { value } = await rpc.getSignatureStatuses([first]).send();
    expect(value[0]).toMatchObject({ err: null, confirmationStatus: "finalized" });
    expect(await kit.usdcBalance(payTo)).toBe(PRICE); // once
    // Simulating the landed message is refused, signed or not.
    const simulated = await rpc
      .simulateTransaction(getBase64EncodedWireTransaction(unsigned), { encoding: "base64" })
      .send();
    expect(simulated.value.err).toBe("AlreadyProcessed");
  });
});
