/**
 * How a job ended, for every transport: completed (its serialized answer and, when paid, the
 * settlement's receipt), payment required (what an offer needs, and why), refused (a typed error
 * from errors.ts, and whether it refused a payment), or its caller gone. The pipeline (pipeline.ts)
 * returns one; each transport writes it in its own shape: POST /execute as HTTP (http/answer.ts),
 * MCP as a tool result (mcp/call.ts). Part of your project: edit freely.
 */
import { type AgentError, errorResponse, UnavailableError } from "../errors.js";
import type { JobOutcome } from "../ops/metrics.js";
import type { KeptAnswer, Settlement } from "../payments/kept-answer.js";
import type { Capability } from "../types.js";
import { withJobId } from "./result.js";

export type { Settlement } from "../payments/kept-answer.js";

/** What an offer for this job needs: the capability, the job's deadline and the resource paid for. */
export interface PaymentAsk {
  capability: Capability;
  deadline: number;
  /** The endpoint's absolute URL (POST /execute) or the tool's resource (MCP). */
  resourceUrl: string;
}

export interface Completed {
  kind: "completed";
  /** The success body (spec 2.4), serialized once and sent byte for byte (result.ts). */
  body: string;
  /** The settlement's receipt (production); absent in dev mode and for an answer not settled yet. */
  settlement?: Settlement;
}

export interface PaymentRequired {
  kind: "payment_required";
  ask: PaymentAsk;
  /** Why (the transport's "send a payment here"), shown as the offer's error. */
  reason: string;
}

export interface Refused {
  kind: "refused";
  error: AgentError;
  /**
   * Set when a paid job's steps refused its payment (jobs/paid-steps.ts): written as a refused
   * payment, with a new offer when `offer` is set (how to pay again).
   */
  payment?: { offer?: PaymentAsk };
  /** Seconds the caller should wait before sending it again. */
  retryAfterSeconds?: number;
}

export interface CallerGone {
  kind: "caller_gone";
  /** What happened to its payment (for the log: nobody reads the answer). */
  message: string;
}

/** A job's outcome. */
export type JobAnswer = Completed | PaymentRequired | Refused | CallerGone;

/** The answer for a failure that is not a refused payment (an UnavailableError asks to retry later). */
export function refusedBy(error: AgentError): Refused {
  return {
    kind: "refused",
    error,
    ...(error instanceof UnavailableError && { retryAfterSeconds: error.retryAfterSeconds }),
  };
}

/**
 * A kept answer (the ledger's) as the outcome for the request with job_id `jobId`: a completed job
 * (its body naming that job_id), or its refused settlement.
 */
export function fromKept(kept: KeptAnswer, jobId: string): JobAnswer {
  if (kept.kind !== "completed") return { kind: "refused", error: kept.error, payment: {} };
  return { ...kept, body: withJobId(kept.body, jobId) };
}

/** How the job ended, for metrics and the log. */
export function outcomeOf(answer: JobAnswer): JobOutcome {
  if (answer.kind !== "refused") return answer.kind;
  const { error } = answer;
  return error instanceof UnavailableError ? "unavailable" : error.errorType;
}

/** Why a job was not completed, as its caller was told (undefined for a completed job). */
export function reasonOf(answer: JobAnswer): string | undefined {
  if (answer.kind === "completed") return undefined;
  if (answer.kind === "refused") return errorResponse(answer.error).body.error;
  return answer.kind === "payment_required" ? answer.reason : answer.message;
}
