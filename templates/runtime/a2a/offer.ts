/**
 * The a2a-x402 offer of a task's first turn: exactly the x402 v2 PaymentRequired the HTTP 402 of
 * POST /execute carries in its PAYMENT-REQUIRED header (every network, the same discovery
 * extensions), made by the same code (http/answer.ts, payments/gate.ts), for resource POST /a2a.
 * And the check of a second turn's payment against that offer, before the pipeline verifies it.
 * Part of your project: edit freely.
 */
import { httpAnswer } from "../http/answer.js";
import type { PaymentAsk } from "../jobs/outcome.js";
import { isObject } from "../ops/json-object.js";
import type { PaymentGate } from "../payments/gate.js";
import { decodeBase64Json } from "../payments/x402.js";

export type PaymentRequiredObject = Record<string, unknown> & { accepts?: unknown[] };

/** The PaymentRequired for `ask` (why: `reason`), as the HTTP 402's header says it. */
export function offerFor(
  gate: PaymentGate,
  ask: PaymentAsk,
  reason: string,
): PaymentRequiredObject {
  const answer = httpAnswer({ kind: "payment_required", ask, reason }, gate);
  const decoded = decodeBase64Json(answer.headers["PAYMENT-REQUIRED"] ?? "");
  if (!decoded.ok) throw new Error(`PAYMENT-REQUIRED header ${decoded.reason}`); // ours: unreachable
  return decoded.value;
}

const same = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

/**
 * Why a payment does not answer the task's stored offer (the extension's error code and a
 * sentence), or undefined when its `accepted` is one of the offer's `accepts` (scheme, network,
 * amount, asset, payTo). An x402 v1 payload (no `accepted`) is left to the pipeline's checks.
 */
export function offerMismatch(
  payload: unknown,
  offer: PaymentRequiredObject | undefined,
): { code: string; message: string } | undefined {
  if (!isObject(payload) || !isObject(payload.accepted)) return undefined;
  const a = payload.accepted;
  const accepts = (offer?.accepts ?? []).filter(isObject);
  const onNetwork = accepts.filter((o) => same(o.network, a.network) && same(o.scheme, a.scheme));
  if (onNetwork.length === 0)
    return {
      code: "NETWORK_MISMATCH",
      message: `the payment is for ${JSON.stringify(a.network).slice(0, 80)}, which this task's offer does not list: pay one of its accepts`,
    };
  const fields = ["amount", "asset", "payTo"] as const;
  if (onNetwork.some((o) => fields.every((f) => same(o[f], a[f])))) return undefined;
  return {
    code: "INVALID_AMOUNT",
    message:
      "the payment's amount, asset or payTo is not what this task's offer asks: pay one of its accepts as offered",
  };
}
