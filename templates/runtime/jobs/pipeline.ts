/**
 * The job pipeline (spec section 4), independent of any transport: request -> outcome. The steps run in the
 * spec's order, each in one place:
 *   0-2 request shape, capability, input ......... request.ts
 *   3   payment (production) ..................... paid.ts, with the gate in payments/
 *   4-5, 7-8 deadline and handler ................ handler.ts, deadline.ts
 *   6   output, serialized before any charge ..... result.ts
 * Every failure maps to one error type (errors.ts); the job's outcome (outcome.ts) is written by
 * its transport (http/execute.ts, mcp/call.ts). Part of your project: edit freely.
 */
import { AgentError, answerStatus, InternalError } from "../errors.js";
import { clip } from "../ops/text.js";
import type { Capability, Logger } from "../types.js";
import type { PaymentChannel } from "./channel.js";
import { checkArrival, startHandler } from "./handler.js";
import { outcomeOf, reasonOf, refusedBy, type JobAnswer } from "./outcome.js";
import { findCapability, MAX_JOB_ID_LENGTH, parseRequest, validateInput } from "./request.js";
import { completedBody } from "./result.js";
import type { JobServices } from "./services.js";

export { MAX_JOB_ID_LENGTH, SERVICE_VERSION } from "./request.js";
export type { JobAnswer } from "./outcome.js";
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

/** One job: a POST /execute (http/execute.ts), or an MCP tools/call (mcp/call.ts). */
export interface JobCall {
  /** The parsed JSON body. */
  body: unknown;
  /** Where the transport carries the payment (read only when the app takes payments). */
  payment: PaymentChannel;
  /**
   * Absolute URL of this endpoint (or the tool's resource), used in offers (derived only when one
   * is made); throws a ValidationError when the request's Host cannot make one (http/base-url.ts).
   */
  resourceUrl(): string;
  /** The request's logger (tagged with its request id). */
  logger: Logger;
  /**
   * Aborted once the caller can no longer receive the answer (HTTP: its connection closed; MCP:
   * the request cancelled or its transport closed). A paid job is settled only while it is not.
   */
  callerGone?: AbortSignal;
  /** Aborted when the caller cancels the job (A2A CancelTask): the handler's ctx.signal aborts. */
  cancel?: AbortSignal;
  /** Called as the handler starts (validated, and paid in production): never for a job refused before. */
  onStart?: () => void;
}

export async function executeJob(s: JobServices, call: JobCall): Promise<JobAnswer> {
  const started = Date.now();
  let logger = call.logger;
  let declared: Capability | undefined;
  let jobId: string | undefined;
  let answer: JobAnswer;
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
      // Dev mode: no payment at all (a payment sent is ignored entirely).
      checkArrival(job); // 4
      call.onStart?.();
      const output = await startHandler(job, declared, input, {
        logger,
        metrics: s.metrics,
        cancel: call.cancel,
      }).result; // 5, 7, 8
      const body = completedBody(job.jobId, declared, output, {
        devMode: true,
        maxOutputBytes: s.config.maxOutputBytes,
        logger,
      }); // 6
      answer = { kind: "completed", body };
    }
  } catch (err) {
    answer = refusedBy(knownError(err, logger));
  }
  const outcome = outcomeOf(answer);
  s.metrics.job(declared?.name ?? "(unknown)", outcome);
  // A request refused before its job_id or capability checked out: log what it said, bounded.
  const sent = jobId === undefined || declared === undefined ? requested(call.body) : undefined;
  const reason = reasonOf(answer);
  logger.info("job finished", {
    job_id: jobId ?? sent?.jobId,
    capability: declared?.name ?? sent?.capability,
    status: answerStatus(answer),
    outcome,
    ms: Date.now() - started,
    ...(reason !== undefined ? { reason: clip(reason, MAX_LOGGED_REASON) } : {}),
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

/** A failure as its error type (errors.ts); anything unexpected is an internal error, logged. */
function knownError(err: unknown, logger: Logger): AgentError {
  if (err instanceof AgentError) return err;
  logger.error("unexpected error in the job pipeline", {
    error: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  return new InternalError("pipeline error");
}
