/**
 * The EVM payer family's guard, shared like guard.ts by `create-agent call` and every generated client: on
 * an EVM network the payment is an EIP-3009 transfer authorization, checked at the last moment before it
 * is sent: from the payer, for one of the offers checked, to that offer's payee, of at most the cap.
 *
 * Web-standard code only, like guard.ts.
 */
import {
  ATOMIC_AMOUNT,
  isObjectRecord,
  type PayerFamily,
  type PaymentOffer,
  shown,
  type SignedPayment,
  type SigningLimit,
} from "./guard.js";
import {
  checkSignedAmount,
  offersSignedFor,
  signedHead,
  signedPayment,
  signedRefusal,
} from "./guard-signed.js";

/**
 * Checks the payment a request is about to carry, at the last moment before it is sent: it must be an
 * EIP-3009 transfer authorization (the exact scheme on EVM, the only one this payer signs) from `payer`,
 * whose signed `value` is a decimal string of at most `maxAtomic`, valid for at most `validForAtMost`
 * seconds, for one of `offers` (same x402 version,
 * scheme, network, payee, amount and, in v2, asset). Returns what was signed; throws otherwise.
 */
export function checkSignedPayment(
  header: string,
  offers: readonly PaymentOffer[],
  limit: SigningLimit,
): SignedPayment {
  const refuse = signedRefusal("payment");
  const head = signedHead(header, refuse);
  const asset = typeof head.acceptedAsset === "string" ? head.acceptedAsset : undefined;
  const inner = head.payload;
  const authorization = inner?.authorization;
  if (!inner || !isObjectRecord(authorization) || typeof inner.signature !== "string")
    throw refuse(
      "is not an EIP-3009 transfer authorization, the only kind this payer signs (the exact scheme in USDC on an EVM network)",
    );
  const { value, from, to } = authorization;
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw refuse(`signs a value of ${shown(value)}, not a decimal string of atomic units`);
  const amount = BigInt(value);
  if (typeof from !== "string" || typeof to !== "string")
    throw refuse("has no payer or payee address in its authorization");
  checkSignedAmount(head, amount, limit, refuse, "signs");
  checkValidity(authorization.validBefore, limit, refuse);
  if (from.toLowerCase() !== limit.payer.toLowerCase())
    throw refuse(`is signed for the account ${from}, not the payer ${limit.payer}`);
  const offer = offersSignedFor(head, amount, offers).find(
    (o) =>
      o.payTo.toLowerCase() === to.toLowerCase() &&
      (asset === undefined || o.asset.toLowerCase() === asset.toLowerCase()),
  );
  if (!offer)
    throw refuse(
      `(${amount} atomic units to ${to} on ${String(head.network)}) matches none of the offers that were checked`,
    );
  return signedPayment(offer, amount, from);
}

/** Refuses an authorization valid for longer than the limit allows (validBefore, Unix seconds). */
function checkValidity(
  validBefore: unknown,
  limit: SigningLimit,
  refuse: (problem: string) => Error,
): void {
  if (typeof validBefore !== "string" || !/^\d{1,15}$/.test(validBefore))
    throw refuse(`is valid before ${shown(validBefore)}, not a decimal string of Unix seconds`);
  const seconds = Number(validBefore) - Math.floor(Date.now() / 1000);
  if (seconds > limit.validForAtMost)
    throw refuse(
      `stays valid for ${seconds} s, longer than the job's deadline plus an hour (${limit.validForAtMost} s): the service offers a payment window (maxTimeoutSeconds) it could settle long after the job`,
    );
}

/** The EVM payer family: the exact scheme's EIP-3009 authorizations on eip155 networks. */
export const EVM_PAYER: PayerFamily = {
  id: "evm",
  networks: {
    base: "eip155:8453",
    "base-sepolia": "eip155:84532",
    polygon: "eip155:137",
    arbitrum: "eip155:42161",
    "arbitrum-sepolia": "eip155:421614",
    avalanche: "eip155:43114",
    ethereum: "eip155:1",
  },
  pays: (network) => /^eip155:\d+$/.test(network),
  claims: (payload) => "authorization" in payload,
  checkSigned: (header, offers, limit) => checkSignedPayment(header, offers, limit),
};
