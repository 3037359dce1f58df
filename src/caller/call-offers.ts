/**
 * The 402's offers against what the caller of `create-agent call` allows, before anything is signed
 * (call.ts, call-pay.ts): the network to pay on, the offers in a token the caller pays in, the cheapest ask
 * within the declared price and --max-price; and the payer guard's refusals in the caller's terms.
 */
import { CallError } from "./errors.js";
import { choosePaymentNetwork, networkFamily, networkId } from "./payer-families.js";
import { type PayerFamilyId, PaymentGuardError, type PaymentOffer } from "./guard.js";
import { SOLANA_MAX_DEADLINE_SECONDS } from "./guard-svm.js";
import { type AllowedAsset, assetAllowed, assetProblem } from "./guard-asset.js";
import { fromAtomicAmount, PAYER_KEY_VARIABLE } from "./payment.js";
import { SOLANA_PAYER_KEY_VARIABLE } from "./solana-payment.js";
import type { ServiceCapability } from "./service.js";

/**
 * The offers of the chosen network in its USDC or a token allowed with --asset; none: refused, naming the
 * tokens asked and how to allow one (nothing signed).
 */
export function payableOffers(
  offers: readonly PaymentOffer[],
  network: string,
  allowedAssets: readonly AllowedAsset[],
  executeUrl: string,
): PaymentOffer[] {
  const onNetwork = offers.filter((o) => networkId(o.network) === network);
  const usable = onNetwork.filter((o) => assetAllowed(o.network, o.asset, allowedAssets));
  if (usable.length > 0) return usable;
  throw new CallError(
    "payment",
    `refused to pay ${executeUrl}: ${assetProblem(onNetwork, "pass --asset <address> (create-agent call --help)")}; nothing was signed`,
    { status: 402 },
  );
}

/** Runs a guard check; its refusal becomes the caller's error, saying that nothing was paid. */
export function guarded<T>(check: () => T, executeUrl: string): T {
  try {
    return check();
  } catch (error) {
    throw guardRefusal(error, executeUrl);
  }
}

export async function guardedAsync<T>(check: () => Promise<T>, executeUrl: string): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw guardRefusal(error, executeUrl);
  }
}

function guardRefusal(error: unknown, executeUrl: string): unknown {
  if (!(error instanceof PaymentGuardError)) return error;
  return new CallError(
    "payment",
    error.reason === "signed"
      ? `refused to pay ${executeUrl}: ${error.message}; nothing was paid`
      : `refused to pay ${executeUrl}: ${error.message}; nothing was signed`,
    { status: 402 },
  );
}

export function solanaDeadlineProblem(deadlineSeconds: number): string {
  return `a job paid on Solana must be due within ${SOLANA_MAX_DEADLINE_SECONDS} s (its transaction lives about 60 s, settlement included), and this one is due in ${deadlineSeconds} s: give --deadline-seconds ${SOLANA_MAX_DEADLINE_SECONDS} or less, or --network with an EVM network the service offers (paid with ${PAYER_KEY_VARIABLE})`;
}

/**
 * The network to pay on (payer-families.ts choosePaymentNetwork), or the refusal, before anything is signed. With no
 * key for an EVM-only offer, the EVM key's own message says what to set (payerKey, as before).
 */
export function chooseNetwork(
  offers: readonly PaymentOffer[],
  asked: string | undefined,
  env: NodeJS.ProcessEnv,
  deadlineSeconds: number,
  executeUrl: string,
): { id: string; family: PayerFamilyId } {
  const keys = { evm: !!env[PAYER_KEY_VARIABLE], svm: !!env[SOLANA_PAYER_KEY_VARIABLE] };
  const choice = choosePaymentNetwork(offers, asked, keys, deadlineSeconds);
  if (choice.ok) return choice;
  const offered = choice.offered.join(", ");
  const refuse = (message: string) => new CallError("payment", message, { status: 402 });
  if (choice.problem === "not-offered")
    throw refuse(
      `${executeUrl} does not offer payment on --network ${asked}; it offers: ${offered}; nothing was signed`,
    );
  if (choice.problem === "deadline")
    throw refuse(
      `${executeUrl} can be paid with the caller's key only on Solana, and ${solanaDeadlineProblem(deadlineSeconds)}; nothing was signed`,
    );
  if (choice.family === undefined)
    throw refuse(
      `${executeUrl} asks for payment on ${offered}, and no payer key for these networks is set: put the payer's key in ${PAYER_KEY_VARIABLE} (EVM networks: 0x followed by 64 hex digits) or ${SOLANA_PAYER_KEY_VARIABLE} (Solana: base58, or the JSON byte array solana-keygen writes); nothing was signed`,
    );
  // One family offered and no key for it: that family's key reader says what to set.
  const first = offers.find((o) => networkFamily(o.network) === choice.family) ?? offers[0]!;
  return { id: networkId(first.network), family: choice.family };
}

/** The cheapest requirement within `allowed`, or a refusal naming the limit it breaks (nothing signed). */
export function checkAsk(
  offers: readonly PaymentOffer[],
  allowed: bigint,
  capability: ServiceCapability,
  maxPrice: string | undefined,
  executeUrl: string,
): PaymentOffer {
  const cheapest = [...offers].sort((a, b) => (a.amount < b.amount ? -1 : 1))[0]!;
  if (cheapest.amount <= allowed) return cheapest;
  const asked = fromAtomicAmount(cheapest.amount);
  const declared = BigInt(capability.priceAtomic);
  const broken =
    cheapest.amount > declared
      ? `the ${capability.price} USDC its /about declares for "${capability.name}" (a service asking more than it declares is refused)`
      : `--max-price ${maxPrice}`;
  throw new CallError(
    "price",
    `${executeUrl} asks ${asked} USDC, more than ${broken}; nothing was signed`,
    { status: 402 },
  );
}
