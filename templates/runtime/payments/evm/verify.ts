/**
 * Offline payment verification: the checks the reference x402 facilitator makes, without the
 * chain (contract wallets excepted, via X402_RPC_URL). Each check is a named step that throws a
 * PaymentError saying what is wrong and what to do; its `code` is what metrics count refusals by.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../../errors.js";
import { checksumAddress, isAddress } from "./address.js";
import { transferDigest } from "./eip712.js";
import type { Capability, VerifiedPayment } from "../../types.js";
import type { ResolvedNetwork } from "../networks.js";
import type { ChainChecks } from "./chain.js";
import type { SentPayment } from "../scheme.js";
import { recoverAddress, SECP256K1_N } from "./secp256k1.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../settlement.js";
import {
  type AcceptedRequirement,
  type Authorization,
  decodePaymentHeader,
  decodePaymentObject,
  type DecodedPayment,
  type PaymentOffer,
  requirementV1,
  requirementV2,
} from "../x402.js";

export { SETTLEMENT_MARGIN_SECONDS }; // defined in settlement.ts, which loads without this module
export { recoveryPath } from "./secp256k1.js"; // for the start-up log (evm/family.ts)

/** What verification needs to know about this service. */
export interface VerifyContext {
  network: ResolvedNetwork;
  payTo: `0x${string}`;
  /** What we ask for to run a capability for a job due at `deadline`. */
  offer(capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer;
  /** Chain checks (EIP-1271 contract wallets), when X402_RPC_URL is set. */
  chain: (() => Promise<ChainChecks>) | undefined;
}

export type { SentPayment };

const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const refuse = (code: string, message: string): PaymentError => new PaymentError(message, { code });

/** Checks the payment for this job; throws PaymentError saying what is wrong. */
export async function verifyPayment(
  sent: SentPayment,
  capability: Capability,
  job: { deadline: number },
  resourceUrl: string,
  ctx: VerifyContext,
): Promise<VerifiedPayment> {
  const p = decode(sent);
  const clientNetwork = checkSchemeAndNetwork(p, ctx.network);
  if (p.x402Version === 2) checkAccepted(p.accepted, capability, ctx);
  const { authorization: auth, signature } = p.payload;
  checkAddresses(auth);
  await checkSignature(auth, signature, ctx);
  checkPayeeAndAmount(auth, capability, ctx.payTo);
  checkTimeWindow(auth, job.deadline);

  const ours = ctx.offer(capability, resourceUrl, job.deadline);
  return {
    family: "evm",
    x402Version: p.x402Version,
    scheme: "exact",
    network: clientNetwork,
    // One spelling per payer (a payer's cap counts by it: jobs/payer-slots.ts).
    payer: checksumAddress(auth.from),
    amount: auth.value,
    validBefore: Number(auth.validBefore),
    authorization: auth,
    signature,
    chainId: ctx.network.chainId,
    asset: ctx.network.asset,
    payload: withCanonicalNetwork(p, ctx.network),
    requirement: p.x402Version === 2 ? requirementV2(ours) : requirementV1(ours),
  };
}

/**
 * The payment as a facilitator is sent it: verbatim, except that the network is spelled the way
 * the client's x402 version spells it (v2: "eip155:84532", v1: "base-sepolia"). This service takes
 * both spellings; a facilitator takes only its version's, and the network is not part of what the
 * payer signed (the EIP-712 domain's chain id and token are), so renaming it changes nothing else.
 */
function withCanonicalNetwork(
  p: DecodedPayment,
  network: ResolvedNetwork,
): Record<string, unknown> {
  if (p.x402Version === 2) {
    const accepted = p.raw.accepted as Record<string, unknown>;
    return { ...p.raw, accepted: { ...accepted, network: network.caip2 } };
  }
  return { ...p.raw, network: network.v1Name };
}

function decode(sent: SentPayment): DecodedPayment {
  if ("object" in sent) {
    const decoded = decodePaymentObject(sent.object);
    if (!decoded.ok) throw refuse("malformed", `${sent.name} ${decoded.reason}`);
    return decoded.value;
  }
  const decoded = decodePaymentHeader(sent);
  if (!decoded.ok) throw refuse("malformed", `${sent.name} header ${decoded.reason}`);
  return decoded.value;
}

/** The scheme and network the client says it used. Both x402 names of our network are fine. */
function checkSchemeAndNetwork(p: DecodedPayment, network: ResolvedNetwork): string {
  const [scheme, clientNetwork] =
    p.x402Version === 2 ? [p.accepted.scheme, p.accepted.network] : [p.scheme, p.network];
  if (scheme !== "exact")
    throw refuse(
      "scheme",
      `unsupported payment scheme ${JSON.stringify(scheme).slice(0, 80)}: only "exact" is accepted`,
    );
  if (clientNetwork !== network.caip2 && clientNetwork !== network.v1Name)
    throw refuse(
      "network",
      `payment is for network ${JSON.stringify(clientNetwork).slice(0, 80)} but this service takes payments on "${network.caip2}" (${network.v1Name})`,
    );
  return clientNetwork;
}

/** v2 clients echo the requirement they chose; it must be what we offer for this capability. */
function checkAccepted(a: AcceptedRequirement, capability: Capability, ctx: VerifyContext): void {
  let mismatch: string | undefined;
  if (a.amount !== capability.priceAtomic)
    mismatch = `amount ${a.amount} (price of "${capability.name}" is ${capability.priceAtomic})`;
  else if (!sameAddress(a.asset, ctx.network.asset))
    mismatch = `asset ${a.asset} (expected ${ctx.network.asset})`;
  else if (!sameAddress(a.payTo, ctx.payTo)) mismatch = `payTo ${a.payTo} (expected ${ctx.payTo})`;
  if (mismatch)
    throw refuse(
      "requirement",
      `accepted requirement does not match this capability's offer: ${mismatch}; fetch a fresh 402 and pay what it asks`,
    );
}

/** ERC-6492 appends this to signatures of smart wallets that are not deployed yet. */
const ERC6492_MAGIC = "6492649264926492649264926492649264926492649264926492649264926492";

/** `from` and `to` as the token reads them: a mixed-case address must carry a valid EIP-55 checksum. */
function checkAddresses(auth: Authorization): void {
  for (const [field, address] of [
    ["from", auth.from],
    ["to", auth.to],
  ] as const) {
    if (!isAddress(address, { strict: true }))
      throw refuse(
        "address_checksum",
        `authorization.${field} ${address} has mixed case but not a valid EIP-55 checksum: send it all lowercase or correctly checksummed`,
      );
  }
}

/**
 * What USDC's signature check accepts as a 65-byte signature (ecrecover as in EIP-2): v = 27 or
 * 28, s in the lower half of the curve order. Recovery libraries are more lenient (v = 0/1) or
 * normalize a high s and recover someone else, which would be refused for the wrong reason, or
 * refused only at settlement. A contract wallet whose EIP-1271 check wants another 65-byte
 * encoding is refused too: USDC's own check is the one that counts.
 */
function checkEcdsaEncoding(signature: `0x${string}`): void {
  const hex = signature.slice(2).toLowerCase();
  if (hex.length !== 130) return;
  const s = BigInt(`0x${hex.slice(64, 128)}`);
  const v = parseInt(hex.slice(128, 130), 16);
  if (v === 0 || v === 1)
    throw refuse(
      "signature_v",
      `payment signature has v = ${v}: USDC accepts only v = 27 or 28 (add 27 to the last byte, or sign with a standard EIP-712 signer)`,
    );
  if (v !== 27 && v !== 28)
    throw refuse("signature_v", `payment signature has v = ${v}: USDC accepts only v = 27 or 28`);
  if (s > SECP256K1_N / 2n)
    throw refuse(
      "signature_high_s",
      "payment signature has a high s value (s > n/2): USDC refuses such signatures (EIP-2); sign again with a standard signer, which produces low-s signatures",
    );
}

/** The EIP-712 signature recovers `from`, or `from` is a contract wallet that accepts it (EIP-1271). */
async function checkSignature(
  auth: Authorization,
  signature: `0x${string}`,
  ctx: VerifyContext,
): Promise<void> {
  checkEcdsaEncoding(signature);
  let digest: Uint8Array | undefined;
  try {
    digest = transferDigest(ctx.network, auth);
  } catch {
    digest = undefined; // a field the EIP-712 encoding refuses (a value above 2^256 - 1)
  }
  // undefined: not a 65-byte ECDSA signature; a contract wallet's may still be valid. Throws (a 500,
  // no charge) only on a Node where secp256k1's self-test failed, rather than refuse good payers.
  const signer = digest && recoverAddress(digest, signature);
  if (signer !== undefined && sameAddress(signer, auth.from)) return;
  if (signature.toLowerCase().endsWith(ERC6492_MAGIC))
    throw refuse(
      "signature_erc6492",
      "payment signature is ERC-6492-wrapped (a smart wallet that is not deployed yet): USDC cannot check it; deploy the wallet, then sign again",
    );

  const n = ctx.network;
  const domain = `{name: "${n.assetName}", version: "${n.assetVersion}", chainId: ${n.chainId}, verifyingContract: ${n.asset}}`;
  // Not signed by `from` as a regular account. A smart-contract wallet can only be checked on chain.
  const contract = ctx.chain ? await (await ctx.chain()).contractSignature(auth, signature) : "eoa";
  if (contract === "valid") return;
  if (contract === "invalid")
    throw refuse(
      "signature",
      `payment signature is refused by the contract wallet ${auth.from} (EIP-1271): sign TransferWithAuthorization over the domain ${domain}`,
    );
  const why =
    signer === undefined
      ? "payment signature is malformed"
      : `payment signature does not match authorization.from ${auth.from}: sign TransferWithAuthorization over the domain ${domain} with that account`;
  throw refuse(
    "signature",
    ctx.chain
      ? why
      : `${why} (smart-contract wallets cannot be checked here: this service has no X402_RPC_URL configured)`,
  );
}

function checkPayeeAndAmount(auth: Authorization, capability: Capability, payTo: string): void {
  if (!sameAddress(auth.to, payTo))
    throw refuse("payee", `authorization pays ${auth.to}, but this service is paid at ${payTo}`);
  // Exactly the price, as the reference facilitator requires for "exact": more would be charged
  // in full for the same job, which no client means to do.
  if (BigInt(auth.value) !== BigInt(capability.priceAtomic))
    throw refuse(
      "amount",
      `authorization value ${auth.value} is not the price of "${capability.name}": pay exactly ${capability.priceAtomic} atomic units`,
    );
}

/** Valid now, and still valid when settlement runs: the deadline plus SETTLEMENT_MARGIN_SECONDS. */
function checkTimeWindow(auth: Authorization, deadline: number): void {
  const now = Math.floor(Date.now() / 1000);
  // The token requires the block time to be strictly after validAfter.
  if (BigInt(auth.validAfter) >= BigInt(now))
    throw refuse(
      "not_yet_valid",
      `authorization is not valid yet: validAfter ${auth.validAfter} must be strictly before now (${now}); the token refuses it until the block time is past validAfter`,
    );
  if (BigInt(auth.validBefore) <= BigInt(now))
    throw refuse(
      "expired",
      `authorization expired (validBefore ${auth.validBefore}, now ${now}); sign a new one`,
    );
  const needed = BigInt(Math.ceil(Math.max(now, deadline))) + BigInt(SETTLEMENT_MARGIN_SECONDS);
  if (BigInt(auth.validBefore) < needed)
    throw refuse(
      "expires_too_early",
      `authorization expires too early (validBefore ${auth.validBefore}): it must stay valid until ${needed}, ` +
        `the job deadline plus ${SETTLEMENT_MARGIN_SECONDS} s to settle`,
    );
}
