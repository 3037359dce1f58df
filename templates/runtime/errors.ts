/**
 * The error map: every failure the service reports is one of these five types (spec section 7).
 * Handlers may throw ValidationError, DeadlineError or InternalError; the runtime throws the rest.
 * Part of your project: edit freely.
 */
import type { Logger } from "./types.js";

export type ErrorType = "validation" | "payment" | "deadline" | "capability" | "internal";

/** The JSON body of every failure except "payment missing" (spec 2.5). */
export interface ErrorBody {
  status: "failed";
  error_type: ErrorType;
  error: string;
}

/** What the client sees for any internal error: nothing about the cause (that goes to the log). */
export const GENERIC_INTERNAL_MESSAGE =
  "internal error: the job failed on the server and was not charged";

export interface AgentErrorOptions {
  /** Override the HTTP status, e.g. 413/415/404/405 for transport errors that are still `validation`. */
  status?: number;
  /** A short machine-readable reason, e.g. "expired" (metrics count refusals by it; never shown as the message). */
  code?: string;
  cause?: unknown;
}

export abstract class AgentError extends Error {
  abstract readonly errorType: ErrorType;
  readonly status: number;
  readonly code: string | undefined;

  constructor(message: string, defaultStatus: number, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = options.status ?? defaultStatus;
    this.code = options.code;
  }
}

/**
 * The base of each error type below: an AgentError of that type whose constructor takes
 * `(message, options?)` and starts at that type's HTTP status. One definition for all five.
 */
function typedError<T extends ErrorType>(
  errorType: T,
  defaultStatus: number,
): new (message: string, options?: AgentErrorOptions) => AgentError & { readonly errorType: T } {
  return class extends AgentError {
    readonly errorType: T = errorType;
    constructor(message: string, options?: AgentErrorOptions) {
      super(message, defaultStatus, options);
    }
  };
}

/** The request or input is wrong. The message should name the field and the problem. */
export class ValidationError extends typedError("validation", 400) {}

/** The payment header is present but unusable (bad signature, expired, wrong amount...). */
export class PaymentError extends typedError("payment", 402) {}

/** The deadline passed before arrival or before the handler returned. */
export class DeadlineError extends typedError("deadline", 408) {}

/** The requested capability is not declared. Raised by the runtime only. */
export class CapabilityError extends typedError("capability", 400) {}

/** Something went wrong on our side. The message is logged, never sent to the client. */
export class InternalError extends typedError("internal", 500) {}

/**
 * The service cannot take the job right now, through no fault of the caller: its payment ledger is
 * unreachable, or it is shutting down. Nothing was run or charged. Reported as error_type
 * `internal` with HTTP 503 and a Retry-After header; unlike other internal errors its message is
 * shown, because it tells the caller what to do.
 */
export class UnavailableError extends AgentError {
  readonly errorType = "internal";
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, options?: AgentErrorOptions) {
    super(message, 503, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A payment already used for another request (payment-identifier): 409, nothing run or charged. */
export class PaymentConflictError extends PaymentError {
  constructor(message: string, options?: AgentErrorOptions) {
    super(message, { ...options, status: 409 });
  }
}

/**
 * The payer already runs MAX_JOBS_PER_PAYER paid jobs (jobs/payer-slots.ts): 429, nothing run or
 * charged; the same payment may be sent again.
 */
export class PayerBusyError extends PaymentError {
  constructor(message: string, options?: AgentErrorOptions) {
    super(message, { ...options, status: 429 });
  }
}

/**
 * The status of a job's answer (jobs/outcome.ts), as POST /execute sends it and the job's log line
 * records it: 200 completed (spec 2.4), 402 payment required (2.5), a refusal's error's own
 * (section 7), and 499 (logged; nobody reads it) when the caller left before its answer.
 */
export function answerStatus(answer: { kind: string; error?: AgentError }): number {
  if (answer.error) return answer.error.status;
  return answer.kind === "completed" ? 200 : answer.kind === "caller_gone" ? 499 : 402;
}

export function errorBody(errorType: ErrorType, message: string): ErrorBody {
  return { status: "failed", error_type: errorType, error: message };
}

/** Status and body for an AgentError. Internal errors get the generic message (except UnavailableError's advice). */
export function errorResponse(err: AgentError): { status: number; body: ErrorBody } {
  const hidden = err.errorType === "internal" && !(err instanceof UnavailableError);
  return {
    status: err.status,
    body: errorBody(err.errorType, hidden ? GENERIC_INTERNAL_MESSAGE : err.message),
  };
}

/**
 * Maps whatever a handler threw to the error the client gets (spec 4, rules 7 and 8).
 * Validation, deadline and internal errors pass through; anything else becomes an internal error
 * and is logged with its stack so you can debug it. The client never sees the real message.
 */
export function fromHandlerError(err: unknown, logger: Logger): AgentError {
  if (err instanceof ValidationError || err instanceof DeadlineError) return err;
  if (err instanceof UnavailableError) return err; // e.g. an upstream service is down: 503, retry later
  if (err instanceof InternalError) {
    logger.error("handler raised an internal error", { error: err.message, stack: err.stack });
    return err;
  }
  if (err instanceof PaymentError || err instanceof CapabilityError) {
    // Payment and capability errors describe the request, which the runtime already checked.
    // A handler throwing one is a bug, so report it as internal rather than blame the caller.
    logger.warn(
      `handler threw a ${err.name}; handlers may only throw ValidationError, DeadlineError or InternalError, so it is reported as internal`,
      {
        error: err.message,
      },
    );
    return new InternalError(err.message, { cause: err });
  }
  logger.error("handler threw an unhandled exception", {
    error: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
  return new InternalError("unhandled exception", { cause: err });
}
