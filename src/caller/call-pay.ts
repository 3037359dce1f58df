/**
 * Step 5 of `create-agent call` (call.ts): the service answered 402, and the job is paid. The network is
 * chosen and what it asks is checked against what the caller allows (the declared price, --max-price, the
 * network's USDC or a token allowed with --asset): otherwise nothing is signed. Then the official x402 client
 * signs ONE payment for the job (the official scheme client of the chosen network's family, CALL_FAMILIES),
 * that payment is checked itself just before it leaves (its family's guard check, payer-families.ts), and
 * the identical request goes with it through the retrying fetch (retry.ts), never a second signature.
 */
import { CallError } from "./errors.js";
import {
  type CheckedPaying,
  checkedPaying,
  checkPaymentToSend,
  networkId,
  payerFamily,
} from "./payer-families.js";
import {
  type PayerFamilyId,
  type PaymentOffer,
  signableAmount,
  type SignedPayment,
  signingWindow,
} from "./guard.js";
import { type AllowedAsset, assetAllowed, isNetworkUsdc } from "./guard-asset.js";
import {
  type CallResult,
  completed,
  describePayment,
  errorAnswer,
  type ErrorAnswer,
} from "./call-answer.js";
import { checkAsk, chooseNetwork, guardedAsync, payableOffers } from "./call-offers.js";
import {
  type CallFamily,
  type CallPayer,
  EVM_CALL,
  explorerUrl,
  isLoopbackUrl,
  fromAtomicAmount,
  type PaymentReceipt,
  type Policy,
  readReceiptHeader,
  type X402Client,
} from "./payment.js";
import { addPaymentIdentifier, newPaymentId } from "./payment-id.js";
import { hideUrlSecrets, SVM_CALL } from "./solana-payment.js";
import { type PollOptions, pollJob } from "./call-poll.js";
import type { ServiceCapability } from "./service.js";

/** What paying needs from the steps before it (call.ts). */
export interface PaymentStep {
  env: NodeJS.ProcessEnv;
  /** Loads the x402 client packages (tests replace it to simulate a light install). */
  importer?: ((specifier: string) => Promise<unknown>) | undefined;
  /** `--network`, `--asset`, `--max-price` as given. */
  network?: string | undefined;
  assets?: readonly string[] | undefined;
  maxPrice?: string | undefined;
  /** --max-price in atomic units. */
  limit: bigint | undefined;
  capability: ServiceCapability;
  deadlineSeconds: number;
  jobId: string;
  /** Where the job goes: the service's /execute, or its /mcp (`--mcp`, mcp-send.ts). */
  executeUrl: string;
  /** What a non-200 answer means there (default: errorAnswer, POST /execute's). */
  errorAnswer?: ErrorAnswer;
  /** The job request, sent again with the payment exactly as it was sent without. */
  init: RequestInit;
  /** The retrying fetch every request goes through. */
  send: typeof fetch;
  /** The 402 answer, already read, and its offers, already checked. */
  first: Response;
  firstText: string;
  offers: PaymentOffer[];
  /** `--async`: a 202 is polled (call-poll.ts) until this time, telling the user. */
  queued?: Pick<PollOptions, "untilMs" | "note" | "fetchImpl">;
}

/** Every payer family `call` pays in, by the guard's family id (payer-families.ts). */
const CALL_FAMILIES: Record<PayerFamilyId, CallFamily> = { evm: EVM_CALL, svm: SVM_CALL };

/** Pays the job the service answered 402 for, or refuses before anything is signed. */
export async function payJob(step: PaymentStep): Promise<CallResult> {
  const { capability, executeUrl, offers } = step;
  const declared = BigInt(capability.priceAtomic);
  const allowed = step.limit !== undefined && step.limit < declared ? step.limit : declared;
  const chosen = chooseNetwork(offers, step.network, step.env, step.deadlineSeconds, executeUrl);
  // A payment that must be settled within a family's longest deadline cannot wait for a queued job.
  if (step.queued && payerFamily(chosen.id)?.maxDeadlineSeconds !== undefined)
    throw new CallError(
      "payment",
      `--async: ${chosen.id} is a Solana network, and a Solana payment cannot wait for a queued job (its transaction's blockhash expires within about 60-90 s): async jobs are paid on EVM networks only; nothing was signed. Call without --async, or choose an EVM network the service offers with --network`,
    );
  const allowedAssets: AllowedAsset[] = (step.assets ?? []).map((asset) => ({ asset }));
  // Only offers in the network's USDC (or a token allowed with --asset) are ever signed or checked.
  const usable = payableOffers(offers, chosen.id, allowedAssets, executeUrl);
  const payable = checkAsk(usable, allowed, capability, step.maxPrice, executeUrl);
  const why = `${executeUrl} asks ${describePayment(payable.amount, payable.network, payable.asset)} for "${capability.name}"`;
  // Keeps the requirements of the chosen network, in an allowed token, within the allowed amount, read as
  // the scheme of their version signs it.
  const policy: Policy = (version, requirements) =>
    requirements.filter(
      (r) =>
        networkId(r.network) === chosen.id &&
        assetAllowed(r.network, r.asset ?? "", allowedAssets) &&
        signableAmount(version, r) <= allowed,
    );
  // The official x402 client of the chosen network's family, with the caller's key for it.
  const payer = await CALL_FAMILIES[chosen.family](chosen.id, policy, step.env, why, step.importer);
  armClient(payer.client, chosen.id, allowed, allowedAssets);
  const sending = checkedSending(step, usable, allowed, payer);
  let paid: Response;
  try {
    paid = await payer.wrap(sending.fetch)(executeUrl, step.init);
  } catch (error) {
    if (error instanceof CallError) throw error;
    const sent = sending.sent();
    // The Solana client's messages may repeat the RPC URL, credentials included: never printed.
    const message = hideUrlSecrets(
      error instanceof Error ? error.message : String(error),
      payer.rpcUrl,
    );
    throw new CallError(
      "payment",
      sent
        ? `paying ${executeUrl} failed after a payment of ${describePayment(sent.amount, sent.network, sent.asset)} was signed and sent: ${message}`
        : `the x402 client did not pay ${executeUrl}: ${clientRefusal(message, payable)}; nothing was sent`,
    );
  }
  const sent = sending.sent();
  const { status, text, headers } = await answerOf(step, paid, sent, sending.resend);
  if (status !== 200)
    throw (step.errorAnswer ?? errorAnswer)(status, text, executeUrl, sent, headers);
  const result = completed(text, executeUrl, step.jobId, capability);
  if (!sent) return { ...result, payment: null }; // answered without the payment being sent
  return { ...result, payment: receiptOf(sent, headers, isLoopbackUrl(executeUrl)) };
}

/**
 * The paid request's answer; with --async, a 202 is the job queued, and its answer is polled for. A lost
 * 202 was re-sent identically (same payment) by the retrying fetch: the service names the same job; so is
 * the paid request once when a poll answers 404 (the service lost the job: see call-poll.ts).
 */
async function answerOf(
  step: PaymentStep,
  paid: Response,
  sent: SignedPayment | undefined,
  resend: CheckedPaying["resend"],
): Promise<{ status: number; text: string; headers: Headers }> {
  const text = await paid.text();
  if (paid.status !== 202 || !step.queued)
    return { status: paid.status, text, headers: paid.headers };
  const signedNote = sent
    ? `; a payment of ${describePayment(sent.amount, sent.network, sent.asset)} was signed for this job and is settled only if it completes: check the payer's USDC transfers before calling again`
    : "";
  return await pollJob({
    ...step.queued,
    executeUrl: step.executeUrl,
    accepted: { headers: paid.headers, text },
    signedNote,
    paid: sent !== undefined,
    resend,
  });
}

/**
 * The client's spend controls and hooks: our policy is the price cap and the token rule (the client's own
 * controls pass what --asset allows); one authorization per job, ever; the payment-identifier id added.
 */
function armClient(
  client: X402Client,
  network: string,
  allowed: bigint,
  allowedAssets: readonly AllowedAsset[],
): void {
  client.setSpendControls({
    maxAmountPerPayment: false,
    ...(allowedAssets.length > 0
      ? {
          allowedAssets: allowedAssets.map((a) => ({
            network: network as `${string}:${string}`,
            asset: a.asset,
          })),
        }
      : {}),
  });
  let created = 0;
  const paymentId = newPaymentId();
  client.onBeforePaymentCreation(async ({ paymentRequired, selectedRequirements }) => {
    // One authorization per job, ever: a second signature could pay the job twice.
    if (created > 0) return { abort: true, reason: "this job already has a signed authorization" };
    if (signableAmount(paymentRequired.x402Version, selectedRequirements) > allowed)
      return { abort: true, reason: "the chosen requirement is above the allowed amount" };
    // x402 payment-identifier: when the 402 declares it, the payment carries an id, so the server
    // answers a resend of it (after a lost answer) with the answer it already paid for.
    addPaymentIdentifier(paymentRequired.extensions, paymentId);
    return undefined;
  });
  client.onAfterPaymentCreation(async () => {
    created++;
  });
}

/**
 * The fetch the x402 client sends through. The client reads the 402 already checked (the first answer,
 * replayed once) and pays exactly that. The payment it made is checked itself before it leaves (payer-families.ts),
 * then every request goes through the retrying fetch. `sent()`: what was signed and sent, once it was.
 */
function checkedSending(
  step: PaymentStep,
  usable: readonly PaymentOffer[],
  allowed: bigint,
  payer: CallPayer,
): CheckedPaying & { sent: () => SignedPayment | undefined } {
  const first = new Response(step.firstText, {
    status: step.first.status,
    headers: step.first.headers,
  });
  let sent: SignedPayment | undefined;
  const check = async (header: string) => {
    const checked = await guardedAsync(
      () =>
        checkPaymentToSend(
          header,
          usable,
          {
            maxAtomic: allowed,
            payer: payer.payer,
            validForAtMost: signingWindow(step.deadlineSeconds),
          },
          payer.reader,
        ),
      step.executeUrl,
    );
    if (sent && sent.amount !== checked.amount)
      throw new CallError("payment", "refused to send a second, different payment for this job");
    sent = checked;
  };
  return { ...checkedPaying(first, check, step.send), sent: () => sent };
}

/** What was signed, never what the receipt claims; the receipt only names the transaction. */
function receiptOf(sent: SignedPayment, headers: Headers, localAgent: boolean): PaymentReceipt {
  const transaction = readReceiptHeader(headers)?.transaction ?? null;
  // An agent on this machine may settle on a local chain (dev:paid's): a public explorer never saw it.
  const explorer = localAgent ? undefined : explorerUrl(sent.network, transaction);
  const usdc = isNetworkUsdc(sent.network, sent.asset);
  return {
    transaction,
    network: sent.network,
    payer: sent.payer,
    // The token signed: USDC in decimal, any other (allowed with --asset) in its atomic units.
    amount: usdc ? fromAtomicAmount(sent.amount) : sent.amount.toString(),
    currency: usdc ? "USDC" : sent.asset,
    asset: sent.asset,
    ...(explorer ? { explorer } : {}),
    ...(localAgent && { localAgent: true as const }),
  };
}

/** The x402 client's refusal, in the caller's terms when it is a known one. */
function clientRefusal(message: string, payable: PaymentOffer): string {
  if (/spendControls/.test(message))
    return `it pays only the USDC contracts it knows, and the service asks for asset ${payable.asset} on ${payable.network}`;
  if (/No network\/scheme registered|No client registered/.test(message))
    return `it cannot pay scheme "${payable.scheme}" on network "${payable.network}" (it pays "exact" on EVM and Solana networks)`;
  return message;
}
