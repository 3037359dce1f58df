/**
 * The job pipeline (spec section 4), independent of HTTP: request -> answer. The steps run in the
 * spec's order, each in one place:
 *   0-2 request shape, capability, input ......... request.ts
 *   3   payment (production) ..................... paid.ts, with the gate in payments/
 *   4-5, 7-8 deadline and handler ................ handler.ts, deadline.ts
 *   6   output, serialized before any charge ..... result.ts
 * Every failure maps to one error type (errors.ts). Part of your project: edit freely.
 */
import { AgentError, errorResponse, InternalError, UnavailableError } from "../errors.js";
import type { JobOutcome } from "../ops/metrics.js";
import { clip } from "../ops/text.js";
import type { HeaderGetter } from "../payments/gate.js";
import type { Capability, Logger } from "../types.js";
import type { PaymentChannelFor } from "./channel.js";
import { checkArrival, startHandler } from "./handler.js";
import { findCapability, MAX_JOB_ID_LENGTH, parseRequest, validateInput } from "./request.js";
import { completedBody, type JobResponse } from "./result.js";
import type { JobServices } from "./services.js";

export { MAX_JOB_ID_LENGTH, SERVICE_VERSION } from "./request.js";
export type { JobResponse } from "./result.js";
export type { JobServices } from "./services.js";

/**
 * Paid jobs' steps (paid.ts and the ledger reservation it uses), loaded when the app has a payment
 * gate (createApp starts it), never in dev mode.
 */
let paidJobs: Promise<typeof import("./paid.js")> | undefined;
export const loadPaidJobs = (): Promise<typeof import("./paid.js")> =>
  (paidJobs ??= import("./paid.js"));

/** An error answer's message is logged (as `reason`) up to this many characters. */
const MAX_LOGGED_REASON = 500;

/** One job: a POST /execute, or an MCP tools/call (mcp/call.ts). */
export interface JobCall {
  /** The parsed JSON body. */
  body: unknown;
  /** Reads a request header (lower-case name). */
  header: HeaderGetter;
  /**
   * Absolute URL of this endpoint, used in 402 responses (derived only when one is built); throws a
   * ValidationError when the request's Host cannot make one (http/base-url.ts).
   */
  resourceUrl(): string;
  /** The request's logger (tagged with its request id). */
  logger: Logger;
  /** Another transport's payment channel (MCP); default: the payment headers and HTTP 402s. */
  payment?: PaymentChannelFor;
  /**
   * Aborted once the caller can no longer receive the answer (HTTP: its connection closed; MCP:
   * the request cancelled or its transport closed). A paid job is settled only while it is not.
   */
  callerGone?: AbortSignal;
}

export async function executeJob(s: JobServices, call: JobCall): Promise<JobResponse> {
  const started = Date.now();
  let logger = call.logger;
  let declared: Capability | undefined;
  let jobId: string | undefined;
  let answer: JobResponse;
  try {
    const job = parseRequest(call.body, { maxDeadlineSeconds: s.config.maxDeadlineSeconds }); // 0
    jobId = job.jobId;
    declared = findCapability(s.agent, job.capability); // 1
    logger = logger.child({ job_id: job.jobId, capability: job.capability });
    const input = validateInput(declared, job.input); // 2

    if (s.gate) {
      const { runPaidJob } = await loadPaidJobs();
      answer = await runPaidJob({ ...s, gate: s.gate }, call, job, declared, input, logger); // 3-6
    } else {
      // Dev mode: no payment at all (payment headers are ignored entirely).
      checkArrival(job); // 4
      const output = await startHandler(job, declared, input, { logger, metrics: s.metrics })
        .result; // 5, 7, 8
      const body = completedBody(job.jobId, declared, output, {
        devMode: true,
        maxOutputBytes: s.config.maxOutputBytes,
        logger,
      }); // 6
      answer = { status: 200, headers: {}, body, outcome: "completed" };
    }
  } catch (err) {
    answer = errorAnswer(err, logger);
  }
  const outcome: JobOutcome = answer.outcome ?? "internal";
  s.metrics.job(declared?.name ?? "(unknown)", outcome);
  // A request refused before its job_id or capability checked out: log what it said, bounded.
  const sent = jobId === undefined || declared === undefined ? requested(call.body) : undefined;
  logger.info("job finished", {
    job_id: jobId ?? sent?.jobId,
    capability: declared?.name ?? sent?.capability,
    status: answer.status,
    outcome,
    ms: Date.now() - started,
    ...(answer.status >= 400
      ? { reason: clip(answer.reason ?? reasonOf(answer), MAX_LOGGED_REASON) }
      : {}),
  });
  return answer;
}

/** The job_id and capability a request names, when they are strings (clipped), checked or not. */
function requested(body: unknown): { jobId?: string; capability?: string } {
  if (typeof body !== "object" || body === null) return {};
  const { job_id: jobId, task } = body as Record<string, unknown>;
  const capability =
    typeof task === "object" && task !== null
      ? (task as Record<string, unknown>).capability
      : undefined;
  return {
    ...(typeof jobId === "string" ? { jobId: clip(jobId, MAX_JOB_ID_LENGTH) } : {}),
    ...(typeof capability === "string" ? { capability: clip(capability, 100) } : {}),
  };
}

/** The message an error answer gave the client (its `error` field), clipped for the log. */
function reasonOf(answer: JobResponse): string {
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    body = undefined;
  }
  const error =
    typeof body === "object" && body !== null ? (body as Record<string, unknown>).error : undefined;
  return typeof error === "string" ? clip(error, MAX_LOGGED_REASON) : `HTTP ${answer.status}`;
}

/** The answer for a failure: its error type and status (errors.ts); anything unexpected is a 500. */
function errorAnswer(err: unknown, logger: Logger): JobResponse {
  let known: AgentError;
  if (err instanceof AgentError) known = err;
  else {
    logger.error("unexpected error in the job pipeline", {
      error: err instanceof Error ? err.message : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    known = new InternalError("pipeline error");
  }
  const { status, body } = errorResponse(known);
  const headers: Record<string, string> =
    known instanceof UnavailableError ? { "Retry-After": String(known.retryAfterSeconds) } : {};
  const outcome: JobOutcome = known instanceof UnavailableError ? "unavailable" : known.errorType;
  return { status, headers, body: JSON.stringify(body), outcome, reason: body.error };
}
