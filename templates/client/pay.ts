/**
 * Paying with the official x402 client (@x402/fetch, exact scheme, v2 and v1), behind a price guard: a
 * payment option above the limit, or in a token that is not USDC, is dropped before anything is signed
 * (pay-limit.ts), and the payment made is checked itself before it leaves (the guard). The x402 client is
 * made only when the service answers 402, so a free (dev-mode) service needs no key, and it signs at most
 * once per job. Each network family's payer (its key, its official scheme client) is one entry of
 * CLIENT_FAMILIES: EVM in pay-evm.ts, Solana in pay-solana.ts (its packages imported only when a Solana
 * offer is taken), or, in a client for a service without Solana, pay-solana-none.ts.
 */
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PrivateKeyAccount } from "viem/accounts";
import {
  type FamilyPayer,
  offersOf402,
  type PayerFamilyId,
  PaymentGuardError,
  type PaymentOffer,
  signableAmount,
  type SignedPayment,
  signingWindow,
} from "../../src/caller/guard.js";
import {
  checkedPaying,
  checkPaymentToSend,
  choosePaymentNetwork,
  type NetworkChoice,
  networkId,
  payerFamily,
} from "../../src/caller/payer-families.js";
import { SOLANA_MAX_DEADLINE_SECONDS } from "../../src/caller/guard-svm.js";
import { assetAllowed } from "../../src/caller/guard-asset.js";
import { addPaymentIdentifier, newPaymentId } from "../../src/caller/payment-id.js";
import { AgentCallError } from "./errors.js";
import { EVM_CLIENT } from "./pay-evm.js";
import {
  formatUsdc,
  type PaymentLimit,
  priceGuard,
  type Refusal,
  refusedError,
} from "./pay-limit.js";
import { SVM_CLIENT } from "./pay-solana.js";
import type { FetchLike } from "./retry.js";

/** The keys this client may pay with, the network it was told to pay on, and how long the job has. */
export interface Payers {
  /** The offered network to pay on (a name or CAIP-2 id); undefined: the first one a key is held for. */
  network: string | undefined;
  /** The EVM account (X402_PAYER_KEY or payerKey): whether one is given, and the account (throws if bad). */
  evm: { held: boolean; account(): PrivateKeyAccount };
  /** The Solana key's text (SOLANA_PAYER_KEY or solanaPayerKey), and where it came from, for messages. */
  solana: { key: string | undefined; source: string };
  /** The RPC endpoint of a Solana network (rpcUrls, else X402_RPC_URL_<NET>), else undefined (its public one). */
  rpcUrl(network: string): string | undefined;
  /** Seconds from now to the job's deadline. */
  deadlineSeconds: number;
  /** The job was asked for asynchronously (`async: true`): its payment must wait until the job is done. */
  queued?: boolean;
}

/** A network family's payer in this client (pay-evm.ts, pay-solana.ts): one entry of CLIENT_FAMILIES. */
export interface ClientFamily {
  /** Whether this client holds a key it may pay with in this family. */
  held(payers: Payers): boolean;
  /** The family's payer on `network`: its address, its guard's reader, its official x402 scheme client. */
  payer(network: string, payers: Payers, limit: PaymentLimit): Promise<FamilyPayer<x402Client>>;
  /** The offers are all in this family and no key for it is held: the error saying what to set, if its own. */
  noKey(offered: string, payers: Payers, limit: PaymentLimit): AgentCallError | undefined;
}

/** Every payer family this client pays in, by the guard's family id (payer-families.ts). */
const CLIENT_FAMILIES: Record<PayerFamilyId, ClientFamily> = { evm: EVM_CLIENT, svm: SVM_CLIENT };

/** A job's answer, and the payment sent with it (what its signed authorization says), if one was. */
export interface PaidAnswer {
  response: Response;
  signed?: SignedPayment;
  /** Sends the job's request again, identically (with the same payment, if one was sent). */
  resend: () => Promise<Response> | undefined;
}

/**
 * Sends a job; if the service answers 402 with a payment offer, pays it through @x402/fetch (signing
 * once, within `limit`) and sends the identical request again with PAYMENT-SIGNATURE. `send` is the
 * retrying fetch: it re-sends the identical (signed) request after a network failure. The offer is read
 * strictly and the signed payment is checked itself before it leaves (the guard): a service cannot make
 * this client sign more than the limit, whatever its 402 says.
 */
export async function sendPaying(
  send: FetchLike,
  url: string,
  init: RequestInit,
  limit: PaymentLimit,
  payers: Payers,
): Promise<PaidAnswer> {
  const first = await send(url, init);
  const unpaid = { resend: () => send(url, init) };
  if (first.status !== 402) return { response: first, ...unpaid };

  const { capability, jobId } = limit;
  const refuse = (error: PaymentGuardError, what: string) =>
    new AgentCallError(`refused to pay: ${error.message}; ${what}`, {
      errorType: "payment",
      status: 402,
      capability,
      jobId,
      cause: error,
    });
  let offers: PaymentOffer[] | undefined;
  try {
    offers = offersOf402(first.headers, await first.clone().text());
  } catch (error) {
    if (error instanceof PaymentGuardError) throw refuse(error, "nothing was signed");
    throw error;
  }
  if (!offers) return { response: first, ...unpaid };
  const checked = offers;

  const chosen = chooseNetwork(
    choosePaymentNetwork(
      checked,
      payers.network,
      Object.fromEntries(
        Object.entries(CLIENT_FAMILIES).map(([id, family]) => [id, family.held(payers)]),
      ),
      payers.deadlineSeconds,
    ),
    payers,
    limit,
  );
  const refusals: Refusal[] = [];
  const { client, payer, reader } = await payingClient(chosen, payers, limit, refusals);

  // The first answer is already here: hand it to the wrapper instead of asking twice. Every payment the
  // wrapper sends is checked here, at the last moment before it leaves.
  let signed: SignedPayment | undefined;
  const check = async (header: string) => {
    try {
      const payment = await checkPaymentToSend(
        header,
        checked.filter((o) => assetAllowed(o.network, o.asset, limit.allowedAssets)),
        {
          maxAtomic: limit.maxAtomic,
          payer,
          validForAtMost: signingWindow(payers.deadlineSeconds),
        },
        reader,
      );
      if (signed && signed.amount !== payment.amount)
        throw new PaymentGuardError("signed", "is a second, different payment for this job");
      signed = payment;
    } catch (error) {
      if (error instanceof PaymentGuardError) throw refuse(error, "nothing was paid");
      throw error;
    }
  };
  const paying = checkedPaying(first, check, send);
  try {
    const response = await wrapFetchWithPayment(paying.fetch, client)(url, init);
    const resend = signed ? paying.resend : unpaid.resend;
    return signed ? { response, signed, resend } : { response, resend };
  } catch (error) {
    if (error instanceof AgentCallError) throw error;
    if (signed) {
      const message = error instanceof Error ? error.message : String(error);
      throw new AgentCallError(
        `paying failed after a payment of ${formatUsdc(signed.amount)} USDC was signed and sent: ${message}`,
        { errorType: "payment", capability, jobId, cause: error },
      );
    }
    throw refusedError(refusals, limit, error);
  }
}

/**
 * The x402 client for the chosen network, with the payer's key for its family; its policy keeps the offers
 * within the job's limit (recording what it refused in `refusals`), and it signs at most one payment.
 */
async function payingClient(
  chosen: { id: string; family: PayerFamilyId },
  payers: Payers,
  limit: PaymentLimit,
  refusals: Refusal[],
): Promise<{ client: x402Client; payer: string; reader: object | undefined }> {
  let created = 0;
  const paymentId = newPaymentId();
  const client = new x402Client();
  const family = await CLIENT_FAMILIES[chosen.family].payer(chosen.id, payers, limit);
  family.register(client);
  // The guard below is stricter than the default spend controls (USDC only, at most the job's limit),
  // and unlike them it allows more than $1 when the limit says so.
  client.setSpendControls(false);
  client.registerPolicy((version, requirements) =>
    priceGuard(
      version,
      requirements.filter((r) => networkId(r.network) === chosen.id),
      limit,
      refusals,
    ),
  );
  client.onBeforePaymentCreation(async ({ paymentRequired, selectedRequirements }) => {
    if (created > 0) return { abort: true, reason: "a payment was already signed for this job" };
    if (signableAmount(paymentRequired.x402Version, selectedRequirements) > limit.maxAtomic)
      return { abort: true, reason: "the chosen offer is above the limit" };
    // x402 payment-identifier: when the 402 declares it, the payment carries an id, so the service
    // answers a resend of it (after a lost answer) with the answer it already paid for.
    addPaymentIdentifier(paymentRequired.extensions, paymentId);
    return undefined;
  });
  client.onAfterPaymentCreation(async () => {
    created++;
  });
  return { client, payer: family.address, reader: family.reader };
}

/** The network to pay on, or the refusal in this client's words (nothing signed). */
function chooseNetwork(
  choice: NetworkChoice,
  payers: Payers,
  limit: PaymentLimit,
): { id: string; family: PayerFamilyId } {
  const { capability, jobId } = limit;
  const fail = (errorType: "payment" | "payer", problem: string) =>
    new AgentCallError(`${problem}; nothing was signed`, {
      errorType,
      status: 402,
      capability,
      jobId,
    });
  if (choice.ok) {
    const max = payerFamily(choice.id)?.maxDeadlineSeconds;
    // A payment that must be settled within `max` seconds cannot wait for a queued job to finish.
    if (max !== undefined && payers.queued)
      throw fail(
        "payment",
        `async: true asks for a queued job, and a payment on ${choice.id} cannot wait for one (a Solana transaction's blockhash expires within about 60-90 s): async jobs are paid on EVM networks only; call without async, or choose an EVM network the service offers with \`network\``,
      );
    if (max !== undefined && payers.deadlineSeconds > max)
      throw fail("payment", solanaDeadlineProblem(payers.deadlineSeconds));
    return choice;
  }
  const offered = choice.offered.join(", ");
  if (choice.problem === "not-offered")
    throw fail(
      "payment",
      `the service does not offer payment on network ${JSON.stringify(payers.network)}; it offers: ${offered}`,
    );
  if (choice.problem === "deadline")
    throw fail(
      "payment",
      `this client holds a key only for Solana, and ${solanaDeadlineProblem(payers.deadlineSeconds)}`,
    );
  const own = choice.family && CLIENT_FAMILIES[choice.family].noKey(offered, payers, limit);
  if (own) throw own;
  throw fail(
    "payer",
    `the service asks for payment on ${offered}, but no payer key for these networks is set: pass \`payerKey\` or set X402_PAYER_KEY (EVM), or pass \`solanaPayerKey\` or set SOLANA_PAYER_KEY (Solana)`,
  );
}

function solanaDeadlineProblem(seconds: number): string {
  return `a job paid on Solana must be due within ${SOLANA_MAX_DEADLINE_SECONDS} s (its transaction lives about 60 s, settlement included), and this one is due in ${Math.round(seconds)} s: give a deadline within ${SOLANA_MAX_DEADLINE_SECONDS} s, or choose an EVM network the service offers with \`network\``;
}
