/**
 * The check of a payment about to be sent that every payer family shares, shared like guard.ts by
 * `create-agent call` and every generated client. A family's check (guard-evm.ts, guard-svm.ts) reads what
 * its kind of payment signs; the rules here hold whatever the family, so a new family cannot leave one out:
 * - the payment header is decoded and its head read strictly: x402 version, scheme, network, payload and
 *   (v2) the offer it accepts;
 * - the amount it signs is at most the cap and, in v2, the accepted offer's amount;
 * - it can be for a checked offer of the same version, scheme, network and amount only (its family then
 *   matches the payee and the asset), and what is reported as paid is that offer's network, payee, asset;
 * - a refusal says "the <payment> about to be sent <problem>; it was not sent".
 *
 * Web-standard code only, like guard.ts.
 */
import {
  decodeBase64Json,
  isObjectRecord,
  offerAmount,
  PaymentGuardError,
  type PaymentOffer,
  shown,
  type SignedPayment,
  type SigningLimit,
} from "./guard.js";

/** Refuses the payment about to be sent, saying what is wrong with it (`problem`). */
export type SignedRefusal = (problem: string) => PaymentGuardError;

/** The refusal of a payment about to be sent, named in its family's words (`what`: "payment"). */
export function signedRefusal(what: string): SignedRefusal {
  return (problem) =>
    new PaymentGuardError("signed", `the ${what} about to be sent ${problem}; it was not sent`);
}

/** The head of a signed payment: its x402 version, scheme and network, and (v2) the offer it accepts. */
export interface SignedHead {
  version: 1 | 2;
  scheme: unknown;
  network: unknown;
  /** What the family signs (`payload`), when it is an object. */
  payload: Record<string, unknown> | undefined;
  /** v2: the accepted offer's asset, as written. */
  acceptedAsset: unknown;
  /** v2: the accepted offer's amount, read as the exact scheme of v2 signs it. */
  acceptedAmount: bigint | undefined;
}

/** Decodes a payment header about to be sent and reads its head, or refuses it (`refuse`'s words). */
export function signedHead(header: string, refuse: SignedRefusal): SignedHead {
  const decoded = decodeBase64Json(header, "the payment header about to be sent", "signed");
  if (!isObjectRecord(decoded)) throw refuse("is not a JSON object");
  const version = decoded.x402Version;
  if (version !== 1 && version !== 2) throw refuse(`has x402Version ${shown(version)}`);
  const payload = isObjectRecord(decoded.payload) ? decoded.payload : undefined;
  if (version === 1)
    return {
      version,
      scheme: decoded.scheme,
      network: decoded.network,
      payload,
      acceptedAsset: undefined,
      acceptedAmount: undefined,
    };
  const accepted = decoded.accepted;
  if (!isObjectRecord(accepted)) throw refuse(`names no "accepted" offer`);
  let acceptedAmount: bigint;
  try {
    acceptedAmount = offerAmount(2, accepted);
  } catch (error) {
    throw refuse(`accepts an offer whose ${(error as Error).message}`);
  }
  const { scheme, network, asset: acceptedAsset } = accepted;
  return { version, scheme, network, payload, acceptedAsset, acceptedAmount };
}

/**
 * Refuses an `amount` of atomic units above the cap, or (v2) unlike the amount of the offer the payment
 * accepts; `verb` is how its family says what a payment does with it ("signs", "transfers").
 */
export function checkSignedAmount(
  head: SignedHead,
  amount: bigint,
  limit: SigningLimit,
  refuse: SignedRefusal,
  verb: string,
): void {
  if (amount > limit.maxAtomic)
    throw refuse(`${verb} ${amount} atomic units, more than the ${limit.maxAtomic} allowed`);
  if (head.acceptedAmount !== undefined && head.acceptedAmount !== amount)
    throw refuse(`${verb} ${amount} atomic units for an offer of ${head.acceptedAmount}`);
}

/**
 * The checked offers a payment of `amount` can be for: same x402 version, scheme and network as its head,
 * same amount. Its family keeps those whose payee and asset it pays.
 */
export function offersSignedFor(
  head: SignedHead,
  amount: bigint,
  offers: readonly PaymentOffer[],
): PaymentOffer[] {
  return offers.filter(
    (o) =>
      o.x402Version === head.version &&
      o.scheme === head.scheme &&
      o.network === head.network &&
      o.amount === amount,
  );
}

/** What is reported as paid: `amount` signed by `payer` for `offer` (its network, payee and asset). */
export function signedPayment(offer: PaymentOffer, amount: bigint, payer: string): SignedPayment {
  return {
    x402Version: offer.x402Version,
    network: offer.network,
    amount,
    payer,
    payTo: offer.payTo,
    asset: offer.asset,
  };
}
