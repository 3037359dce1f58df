/**
 * Paying with the official x402 client (@x402/fetch; @x402/evm's exact EVM scheme, or @x402/svm's exact
 * Solana scheme, v2 and v1), behind a price guard: a payment option above the limit, or in a token that is
 * not USDC, is dropped before anything is signed. The x402 client is made only when the service answers
 * 402, so a free (dev-mode) service needs no key, and it signs at most once per job. The Solana side is in
 * pay-solana.ts (its packages imported only when a Solana offer is taken), or, in a client for a service
 * without Solana, pay-solana-none.ts (no Solana package needed).
 */
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import {
  type Network,
  type PaymentRequirements,
  wrapFetchWithPayment,
  x402Client,
} from "@x402/fetch";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { checkPaymentToSend, choosePaymentNetwork, type NetworkChoice, networkId, networkName } from "../../src/caller/payer-families.js";
import { offersOf402, paymentHeaderOf, PaymentGuardError, type PaymentOffer, signableAmount, type SignedPayment, UNREADABLE_AMOUNT } from "../../src/caller/guard.js";
import { SOLANA_MAX_DEADLINE_SECONDS, type SolanaReader } from "../../src/caller/guard-svm.js";
import { type AllowedAsset, assetAllowed } from "../../src/caller/guard-asset.js";
import { addPaymentIdentifier, newPaymentId } from "../../src/caller/payment-id.js";
import { AgentCallError } from "./errors.js";
import { SOLANA_PAYMENTS, solanaPayer } from "./pay-solana.js";
import type { FetchLike } from "./retry.js";

/** USDC has 6 decimals: "0.01" USDC is 10000 atomic units. */
const USDC_DECIMALS = 6;
const DECIMAL_USDC = /^(\d+)(?:\.(\d{1,6}))?$/;

/** What one job may cost, and in which tokens. */
export interface PaymentLimit {
  capability: string;
  jobId: string;
  /** The most this job may cost, in USDC atomic units. */
  maxAtomic: bigint;
  /** Where that limit comes from, for the error message. */
  limitSource: string;
  allowedAssets: readonly AllowedAsset[];
}

/** "0.01" -> 10000n; undefined when the text is not a decimal USDC amount (at most 6 decimals). */
export function parseUsdc(text: string): bigint | undefined {
  const match = DECIMAL_USDC.exec(text.trim());
  if (!match) return undefined;
  const fraction = (match[2] ?? "").padEnd(USDC_DECIMALS, "0");
  return BigInt(match[1] ?? "0") * BigInt(10) ** BigInt(USDC_DECIMALS) + BigInt(fraction);
}

/** 10000n -> "0.01". */
export function formatUsdc(atomic: bigint): string {
  const unit = BigInt(10) ** BigInt(USDC_DECIMALS);
  const fraction = (atomic % unit).toString().padStart(USDC_DECIMALS, "0").replace(/0+$/, "");
  return fraction ? `${atomic / unit}.${fraction}` : `${atomic / unit}`;
}

/** The payer's account from a hex private key; the message never contains the key. */
export function payerAccount(key: string | undefined, capability: string, jobId: string) {
  const fail = (problem: string) =>
    new AgentCallError(`${problem}; nothing was signed`, {
      errorType: "payer",
      status: 402,
      capability,
      jobId,
    });
  if (!key)
    throw fail(
      "the service asks for payment, but no payer key is set: pass `payerKey` or set X402_PAYER_KEY",
    );
  const hex = key.startsWith("0x") ? key : `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex))
    throw fail("the payer key is not a 32-byte hex private key (0x followed by 64 hex digits)");
  return privateKeyToAccount(hex as `0x${string}`);
}

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
}

/** A job's answer, and the payment sent with it (what its signed authorization says), if one was. */
export interface PaidAnswer {
  response: Response;
  signed?: SignedPayment;
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
  if (first.status !== 402) return { response: first };

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
  if (!offers) return { response: first };
  const checked = offers;

  const chosen = chooseNetwork(
    choosePaymentNetwork(
      checked,
      payers.network,
      { evm: payers.evm.held, svm: SOLANA_PAYMENTS && payers.solana.key !== undefined },
      payers.deadlineSeconds,
    ),
    payers,
    limit,
  );
  const refusals: Refusal[] = [];
  const { client, payer, reader } = await payingClient(chosen, payers, limit, refusals);

  // The first answer is already here: hand it to the wrapper instead of asking twice. Every payment the
  // wrapper sends is checked here, at the last moment before it leaves.
  let offer: Response | undefined = first;
  let signed: SignedPayment | undefined;
  const checkedSend: FetchLike = async (input, requestInit) => {
    const header = paymentHeaderOf(
      new Headers(requestInit?.headers ?? (input instanceof Request ? input.headers : undefined)),
    );
    if (header === undefined && offer) {
      const answer = offer;
      offer = undefined;
      return answer;
    }
    if (header !== undefined) {
      try {
        const payment = await checkPaymentToSend(
          header,
          checked.filter((o) => assetAllowed(o.network, o.asset, limit.allowedAssets)),
          { maxAtomic: limit.maxAtomic, payer },
          reader,
        );
        if (signed && signed.amount !== payment.amount)
          throw new PaymentGuardError("signed", "is a second, different payment for this job");
        signed = payment;
      } catch (error) {
        if (error instanceof PaymentGuardError) throw refuse(error, "nothing was paid");
        throw error;
      }
    }
    return send(input, requestInit);
  };
  try {
    const response = await wrapFetchWithPayment(checkedSend, client)(url, init);
    return signed ? { response, signed } : { response };
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
  chosen: { id: string; family: "evm" | "svm" },
  payers: Payers,
  limit: PaymentLimit,
  refusals: Refusal[],
): Promise<{ client: x402Client; payer: string; reader: SolanaReader | undefined }> {
  let created = 0;
  const paymentId = newPaymentId();
  const client = new x402Client();
  let payer: string;
  let reader: SolanaReader | undefined;
  if (chosen.family === "svm") {
    const solana = await solanaPayer(chosen.id, payers, limit);
    client.register(chosen.id as Network, solana.scheme);
    const v1Name = networkName(chosen.id);
    if (v1Name) client.registerV1(v1Name as Network, solana.schemeV1);
    payer = solana.address;
    reader = solana.reader;
  } else {
    const account = payers.evm.account();
    registerExactEvmScheme(client, { signer: account });
    payer = account.address;
  }
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
  return { client, payer, reader };
}

interface Refusal {
  kind: "price" | "asset" | "amount";
  text: string;
}

/** The network to pay on, or the refusal in this client's words (nothing signed). */
function chooseNetwork(
  choice: NetworkChoice,
  payers: Payers,
  limit: PaymentLimit,
): { id: string; family: "evm" | "svm" } {
  const { capability, jobId } = limit;
  const fail = (errorType: "payment" | "payer", problem: string) =>
    new AgentCallError(`${problem}; nothing was signed`, {
      errorType,
      status: 402,
      capability,
      jobId,
    });
  if (choice.ok) {
    if (choice.family === "svm" && payers.deadlineSeconds > SOLANA_MAX_DEADLINE_SECONDS)
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
  if (choice.family === "evm") payers.evm.account(); // throws: no EVM payer key
  if (choice.family === "svm" && !SOLANA_PAYMENTS)
    throw fail(
      "payer",
      `the service asks for payment on ${offered}, and this client was generated without Solana payments: regenerate it from a service (or agent.json) that takes them`,
    );
  throw fail(
    "payer",
    choice.family === "svm"
      ? `the service asks for payment on ${offered}, but no Solana payer key is set: pass \`solanaPayerKey\` or set SOLANA_PAYER_KEY`
      : `the service asks for payment on ${offered}, but no payer key for these networks is set: pass \`payerKey\` or set X402_PAYER_KEY (EVM), or pass \`solanaPayerKey\` or set SOLANA_PAYER_KEY (Solana)`,
  );
}

function solanaDeadlineProblem(seconds: number): string {
  return `a job paid on Solana must be due within ${SOLANA_MAX_DEADLINE_SECONDS} s (its transaction lives about 60 s, settlement included), and this one is due in ${Math.round(seconds)} s: give a deadline within ${SOLANA_MAX_DEADLINE_SECONDS} s, or choose an EVM network the service offers with \`network\``;
}

/** The x402 policy: keeps the options this job may pay, and says why it dropped the others. */
function priceGuard(
  version: number,
  requirements: PaymentRequirements[],
  limit: PaymentLimit,
  refusals: Refusal[],
): PaymentRequirements[] {
  return requirements.filter((requirement) => {
    const amount = signableAmount(version, requirement);
    if (amount === UNREADABLE_AMOUNT) {
      refusals.push({ kind: "amount", text: "an amount that is not a decimal string" });
      return false;
    }
    // The network's USDC from the one network table (guard-asset.ts), or a token in allowedAssets.
    if (!assetAllowed(requirement.network, requirement.asset, limit.allowedAssets)) {
      refusals.push({
        kind: "asset",
        text: `token ${requirement.asset} on ${requirement.network}, which is not a USDC this client knows (add it to allowedAssets if it is one)`,
      });
      return false;
    }
    if (amount > limit.maxAtomic) {
      refusals.push({ kind: "price", text: `${formatUsdc(amount)} USDC` });
      return false;
    }
    return true;
  });
}

function refusedError(refusals: Refusal[], limit: PaymentLimit, cause: unknown): AgentCallError {
  const { capability, jobId } = limit;
  const prices = refusals.filter((r) => r.kind === "price").map((r) => r.text);
  if (prices.length > 0)
    return new AgentCallError(
      `refused to pay: the service asks ${prices.join(" or ")}, more than ${formatUsdc(limit.maxAtomic)} USDC (${limit.limitSource}); nothing was signed`,
      { errorType: "price", status: 402, capability, jobId, cause },
    );
  const offered = refusals.map((r) => r.text);
  const why =
    offered.length > 0
      ? `it offers ${offered.join("; ")}`
      : `${cause instanceof Error ? cause.message : String(cause)}`;
  return new AgentCallError(
    `the service offers no payment this client can make (the exact scheme in USDC on an EVM or Solana network): ${why}; nothing was signed`,
    { errorType: "payment", status: 402, capability, jobId, cause },
  );
}
