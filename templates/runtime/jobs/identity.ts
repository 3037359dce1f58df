/**
 * What identifies a paid job's request and payment, so a stored answer goes only to the request
 * that produced it: the same payment as sent (byte for byte, once decoded: the same payload sent
 * in POST /execute's header or in MCP's `_meta` is the same payment)
 * and the same capability and input. The ledger keeps both hashes with each answer (JobResult).
 * Part of your project: edit freely.
 */
import { createHash } from "node:crypto";
import type { SentPayment } from "../payments/scheme.js";
import { decodeSentJson } from "../payments/x402.js";

/** JSON with object keys sorted: the same value always gives the same text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * The form of a job id a transport derives for a call that names none (mcp/call.ts's derivedJobId
 * for a tools/call without `_meta.job_id`: "mcp-" + 32 hex digits). Such an id names no job of the
 * caller's, so an answer made under it is the identical request's under any job_id, and the other
 * way round; two job ids the caller chose must be equal.
 */
const DERIVED_JOB_ID = /^mcp-[0-9a-f]{32}$/;

/** Whether two job ids may name the same job: equal, or either derived (the caller named none). */
export function sameJob(a: string, b: string): boolean {
  return a === b || DERIVED_JOB_ID.test(a) || DERIVED_JOB_ID.test(b);
}

/** The request's identity: its capability and its input (canonical JSON). */
export function requestHash(capability: string, input: unknown): string {
  return sha256(canonical([capability, input]));
}

/**
 * The payment's identity as sent: its decoded payload (canonical JSON), or its raw text. Made once
 * per sent payment (one object per request, jobs/channel.ts; the answer store and the
 * payment-identifier lookup both ask).
 */
const paymentHashes = new WeakMap<SentPayment, string>();
export function paymentHash(sent: SentPayment): string {
  let hash = paymentHashes.get(sent);
  if (hash === undefined) {
    hash = sha256(canonical(hashedPayment(sent)));
    paymentHashes.set(sent, hash);
  }
  return hash;
}

function hashedPayment(sent: SentPayment): [string, unknown] {
  if ("object" in sent) return ["payload", sent.object];
  const decoded = decodeSentJson(sent);
  return decoded.ok ? ["payload", decoded.value] : ["raw", sent.value];
}
