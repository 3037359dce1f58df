/**
 * What one job of a generated client may pay: USDC amounts as decimal text, the job's limit, the x402 price
 * policy that keeps only offers within it (the network's USDC or an allowed token, at most the limit, read as
 * the scheme of their version signs them), and the refusal when nothing could be paid. Nothing here signs.
 */
import type { PaymentRequirements } from "@x402/fetch";
import { signableAmount, UNREADABLE_AMOUNT } from "../../src/caller/guard.js";
import { type AllowedAsset, assetAllowed } from "../../src/caller/guard-asset.js";
import { AgentCallError } from "./errors.js";

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

/** An offer the price policy dropped, and why (for the refusal when none is left). */
export interface Refusal {
  kind: "price" | "asset" | "amount";
  text: string;
}

/** The x402 policy: keeps the options this job may pay, and says why it dropped the others. */
export function priceGuard(
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

/** The refusal when the x402 client paid nothing: the price asked, or the offers it could not pay. */
export function refusedError(
  refusals: Refusal[],
  limit: PaymentLimit,
  cause: unknown,
): AgentCallError {
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
