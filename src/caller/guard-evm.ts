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
  PaymentGuardError,
  type PaymentOffer,
  shown,
  type SignedPayment,
  signedHead,
  type SigningLimit,
} from "./guard.js";

/**
 * Checks the payment a request is about to carry, at the last moment before it is sent: it must be an
 * EIP-3009 transfer authorization (the exact scheme on EVM, the only one this payer signs) from `payer`,
 * whose signed `value` is a decimal string of at most `maxAtomic`, for one of `offers` (same x402 version,
 * scheme, network, payee, amount and, in v2, asset). Returns what was signed; throws otherwise.
 */
export function checkSignedPayment(
  header: string,
  offers: readonly PaymentOffer[],
  limit: SigningLimit,
): SignedPayment {
  const refuse = (problem: string) =>
    new PaymentGuardError("signed", `the payment about to be sent ${problem}; it was not sent`);
  const { decoded, version, scheme, network, acceptedAsset, acceptedAmount } = signedHead(
    header,
    refuse,
  );
  const asset = typeof acceptedAsset === "string" ? acceptedAsset : undefined;
  const inner = decoded.payload;
  const authorization = isObjectRecord(inner) ? inner.authorization : undefined;
  if (
    !isObjectRecord(inner) ||
    !isObjectRecord(authorization) ||
    typeof inner.signature !== "string"
  )
    throw refuse(
      "is not an EIP-3009 transfer authorization, the only kind this payer signs (the exact scheme in USDC on an EVM network)",
    );
  const { value, from, to } = authorization;
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw refuse(`signs a value of ${shown(value)}, not a decimal string of atomic units`);
  const amount = BigInt(value);
  if (typeof from !== "string" || typeof to !== "string")
    throw refuse("has no payer or payee address in its authorization");
  if (amount > limit.maxAtomic)
    throw refuse(`signs ${amount} atomic units, more than the ${limit.maxAtomic} allowed`);
  if (acceptedAmount !== undefined && acceptedAmount !== amount)
    throw refuse(`signs ${amount} atomic units for an offer of ${acceptedAmount}`);
  if (from.toLowerCase() !== limit.payer.toLowerCase())
    throw refuse(`is signed for the account ${from}, not the payer ${limit.payer}`);
  const offer = offers.find(
    (o) =>
      o.x402Version === version &&
      o.scheme === scheme &&
      o.network === network &&
      o.amount === amount &&
      o.payTo.toLowerCase() === to.toLowerCase() &&
      (asset === undefined || o.asset.toLowerCase() === asset.toLowerCase()),
  );
  if (!offer)
    throw refuse(
      `(${amount} atomic units to ${to} on ${String(network)}) matches none of the offers that were checked`,
    );
  return {
    x402Version: version,
    network: offer.network,
    amount,
    payer: from,
    payTo: offer.payTo,
    asset: offer.asset,
  };
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
