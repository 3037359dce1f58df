/**
 * A paid job's answer as the ledger keeps it (for an identical retry, a payment id's resend, or an
 * unconfirmed settlement): in the form POST /execute sends it, status, headers (the x402 receipt)
 * and body, as every version of this runtime has stored it, so instances of older and newer
 * versions can share one Redis. Only two kinds are kept: a completed job (with its receipt once
 * settled), and a settlement that failed. Part of your project: edit freely.
 */
import { errorBody, PaymentError } from "../errors.js";
import type { StoredResult } from "../ledger/ledger.js";
import { decodeBase64Json, paymentResponseHeaders } from "./x402.js";

/** A settled payment's receipt: what PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1) carries. */
export interface Settlement {
  x402Version: number;
  transaction: string;
  network: string;
  payer: string;
}

export type KeptAnswer =
  | { kind: "completed"; body: string; settlement?: Settlement }
  | { kind: "refused"; error: PaymentError };

/** The record the ledger keeps for an answer. */
export function keptRecord(answer: KeptAnswer): StoredResult {
  if (answer.kind === "refused")
    return {
      status: answer.error.status,
      headers: { "Cache-Control": "no-store" },
      body: JSON.stringify(errorBody("payment", answer.error.message)),
    };
  const { settlement, body } = answer;
  return {
    status: 200,
    headers: settlement ? paymentResponseHeaders(settlement.x402Version, settlement) : {},
    body,
  };
}

/** The answer a kept record holds. */
export function keptAnswer(record: StoredResult): KeptAnswer {
  if (record.status !== 200) {
    const body = JSON.parse(record.body) as { error?: unknown };
    const message = typeof body.error === "string" ? body.error : "payment refused";
    return { kind: "refused", error: new PaymentError(message, { status: record.status }) };
  }
  const settlement = settlementOf(record.headers);
  return { kind: "completed", body: record.body, ...(settlement && { settlement }) };
}

/** The receipt a record's headers carry, if any. */
function settlementOf(headers: Readonly<Record<string, string>>): Settlement | undefined {
  for (const [name, x402Version] of [
    ["PAYMENT-RESPONSE", 2],
    ["X-PAYMENT-RESPONSE", 1],
  ] as const) {
    const value = headers[name];
    if (value === undefined) continue;
    const decoded = decodeBase64Json(value);
    if (!decoded.ok) return undefined;
    const { transaction, network, payer } = decoded.value;
    return { x402Version, transaction, network, payer } as Settlement;
  }
  return undefined;
}
