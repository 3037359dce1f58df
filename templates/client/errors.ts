/**
 * The one error a client call throws: what the service answered (HTTP status, the spec's error_type and
 * message), or what went wrong before there was an answer.
 */

/** The service's error types (spec section 7). */
export type ServiceErrorType = "validation" | "payment" | "deadline" | "capability" | "internal";

/**
 * What this client itself can report:
 * - `network`: no answer, even after retrying the identical request;
 * - `aborted`: the call's `signal` aborted it;
 * - `price`: the service asked more than this client may pay (maxPrice, or the price it declared when
 *   this file was generated); nothing was signed;
 * - `payer`: the service wants payment but no usable payer key is configured; nothing was signed;
 * - `protocol`: the answer is not a job result or error body of the spec (wrong URL, proxy page...).
 */
export type ClientErrorType = "network" | "aborted" | "price" | "payer" | "protocol";

export type AgentErrorType = ServiceErrorType | ClientErrorType;

export interface AgentCallErrorDetails {
  errorType: AgentErrorType;
  /** HTTP status of the answer; undefined when there was none. */
  status?: number | undefined;
  capability: string;
  jobId: string;
  /** Seconds the service asked to wait before trying again (503 Retry-After). */
  retryAfterSeconds?: number | undefined;
  /** An async job whose polling stopped before its answer: see AgentCallError.queued. */
  queued?: QueuedJob | undefined;
  cause?: unknown;
}

/** Where a queued job's answer is: GET `url` with `Authorization: Bearer <token>`. */
export interface QueuedJob {
  url: string;
  token: string;
}

export class AgentCallError extends Error {
  readonly errorType: AgentErrorType;
  readonly status: number | undefined;
  readonly capability: string;
  readonly jobId: string;
  readonly retryAfterSeconds: number | undefined;
  /**
   * A queued job ({ async: true }) whose polling stopped (its deadline passed, or `signal` aborted) before
   * its answer came: it may still complete, and is then charged; its answer is kept for a while
   * (JOB_RESULT_TTL_SECONDS on the service) at `url`, for `Authorization: Bearer <token>`.
   */
  readonly queued: QueuedJob | undefined;

  constructor(message: string, details: AgentCallErrorDetails) {
    const where = details.status === undefined ? "" : ` (HTTP ${details.status})`;
    super(
      `${details.capability} failed: ${details.errorType}${where}: ${message}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = "AgentCallError";
    this.errorType = details.errorType;
    this.status = details.status;
    this.capability = details.capability;
    this.jobId = details.jobId;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.queued = details.queued;
  }
}
