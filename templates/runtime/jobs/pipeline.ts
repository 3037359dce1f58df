/**
 * The job pipeline (spec section 4), independent of HTTP: request -> { status, headers, body }.
 * The steps run in the spec's order; each failure maps to one error type (errors.ts).
 * Part of your project: edit freely.
 *
 * A paid job runs: verify the payment -> reserve the authorization (replay.ts) -> chain checks ->
 * handler under its deadline -> output validation -> settle -> respond. Nothing is charged
 * unless the job succeeded, and the output is never delivered unless the payment settled.
 */
import { formatAjvErrors } from "../ajv.js";
import type { ResolvedConfig } from "../ops/config.js";
import { deadlinePassed, runWithDeadline } from "./deadline.js";
import {
  AgentError,
  CapabilityError,
  DeadlineError,
  InternalError,
  PaymentError,
  ValidationError,
  errorResponse,
  fromHandlerError,
} from "../errors.js";
import type { HeaderGetter, PaymentGate } from "../payments/gate.js";
import { authorizationKey, authorizationTtl, resultKey, type ReplayStore } from "../ledger/memory.js";
import { SettlementError } from "../payments/settlement.js";
import type {
  AgentDefinition,
  Capability,
  HandlerContext,
  Logger,
  VerifiedPayment,
} from "../types.js";
import { paymentResponseHeaders } from "../payments/x402.js";

export const SERVICE_VERSION = "1.0";
export const MAX_JOB_ID_LENGTH = 256;

export interface JobResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface ExecuteJobArgs {
  agent: AgentDefinition;
  config: ResolvedConfig;
  /** The parsed JSON body. */
  body: unknown;
  /** Reads a request header (lower-case name). */
  header: HeaderGetter;
  /** Absolute URL of this endpoint, used in 402 responses. */
  resourceUrl: string;
  logger: Logger;
  /** The app's payment gate, built once; undefined only in dev mode, where payment is skipped. */
  gate: PaymentGate | undefined;
  /** The app's store of used authorizations and cached results. */
  replayStore: ReplayStore;
}

/** A checked job request (spec 2.3). */
interface JobRequest {
  jobId: string;
  capability: string;
  input: Record<string, unknown>;
  deadline: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Step 0: the request's own shape. Lists every problem, each naming its field. */
function parseRequest(body: unknown): JobRequest {
  if (!isObject(body))
    throw new ValidationError("request body must be a JSON object (spec 2.3 job request)");
  const problems: string[] = [];
  const { service_version: version, job_id: jobId, task, deadline } = body;

  if (version === undefined)
    problems.push(
      `service_version: missing required field; this service supports "${SERVICE_VERSION}"`,
    );
  else if (version !== SERVICE_VERSION)
    problems.push(
      `service_version: unsupported version ${JSON.stringify(version)}; this service supports "${SERVICE_VERSION}"`,
    );

  if (jobId === undefined) problems.push("job_id: missing required field");
  else if (typeof jobId !== "string" || jobId.length === 0 || jobId.length > MAX_JOB_ID_LENGTH)
    problems.push(`job_id: must be a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters`);

  if (task === undefined) problems.push("task: missing required field");
  else if (!isObject(task)) problems.push("task: must be an object with `capability` and `input`");
  else {
    if (task.capability === undefined) problems.push("task.capability: missing required field");
    else if (typeof task.capability !== "string")
      problems.push("task.capability: must be a string");
    if (task.input === undefined) problems.push("task.input: missing required field");
    else if (!isObject(task.input)) problems.push("task.input: must be an object");
  }

  if (deadline === undefined)
    problems.push("deadline: missing required field (Unix timestamp in seconds)");
  else if (typeof deadline !== "number" || !Number.isFinite(deadline) || deadline <= 0)
    problems.push("deadline: must be a positive number (Unix timestamp in seconds)");

  if (problems.length > 0) throw new ValidationError(problems.join("; "));
  const t = task as { capability: string; input: Record<string, unknown> };
  return {
    jobId: jobId as string,
    capability: t.capability,
    input: t.input,
    deadline: deadline as number,
  };
}

/** Step 1: own keys only, so "constructor" or "__proto__" are unknown like any other name. */
function findCapability(agent: AgentDefinition, name: string): Capability {
  if (Object.hasOwn(agent.capabilities, name)) return agent.capabilities[name]!;
  const available = Object.keys(agent.capabilities).map((n) => JSON.stringify(n));
  throw new CapabilityError(
    `unknown capability ${JSON.stringify(name)}; available: ${available.length > 0 ? available.join(", ") : "(none)"}`,
  );
}

/** Steps 4-6: deadline on arrival, the handler under the deadline, the output. Throws AgentError. */
async function runJob(
  job: JobRequest,
  capability: Capability,
  input: unknown,
  devMode: boolean,
  logger: Logger,
  payment?: VerifiedPayment,
): Promise<unknown> {
  // 4. Deadline already passed on arrival.
  if (deadlinePassed(job.deadline))
    throw new DeadlineError(
      `deadline ${job.deadline} has already passed (now ${Math.floor(Date.now() / 1000)}); the handler was not run`,
    );

  // 5. The handler, under the deadline. 7/8: whatever it throws is mapped by fromHandlerError.
  let output: unknown;
  try {
    output = await runWithDeadline(job.deadline, (signal) => {
      const ctx: HandlerContext = {
        jobId: job.jobId,
        capability: capability.name,
        deadline: job.deadline,
        signal,
        logger,
      };
      if (payment) ctx.payment = payment;
      return capability.handler(input, ctx);
    });
  } catch (err) {
    throw fromHandlerError(err, logger);
  }

  // 6. Output. Production: a mismatch is our bug, so 500 (details only in the log).
  //    Dev mode: warn and pass the output through, so you can see what the handler returned.
  if (!capability.validateOutput(output)) {
    const problem = formatAjvErrors(capability.validateOutput.errors, "output");
    if (!devMode) {
      logger.error("handler output does not match output_schema", { problem });
      throw new InternalError(`output mismatch: ${problem}`);
    }
    const warning = "dev mode: handler output does not match output_schema; returned unchanged";
    logger.warn(`${warning} (production answers 500)`, { problem });
  }
  return output;
}

export async function executeJob(args: ExecuteJobArgs): Promise<JobResponse> {
  const { agent, config, header, resourceUrl, logger } = args;
  const started = Date.now();
  let jobId: string | undefined;
  let capabilityName: string | undefined;

  const finish = (response: JobResponse): JobResponse => {
    logger.info("job finished", {
      job_id: jobId,
      capability: capabilityName,
      status: response.status,
      ms: Date.now() - started,
    });
    return response;
  };
  const fail = (err: AgentError, headers: Record<string, string> = {}): JobResponse => {
    const { status, body } = errorResponse(err);
    return finish({ status, headers, body });
  };
  const completed = (job: JobRequest, output: unknown, headers: Record<string, string> = {}) => ({
    status: 200,
    headers,
    body: {
      service_version: SERVICE_VERSION,
      job_id: job.jobId,
      status: "completed",
      output,
      completed_at: Math.floor(Date.now() / 1000),
    },
  });

  try {
    // 0. Request shape.
    const job = parseRequest(args.body);
    jobId = job.jobId;
    capabilityName = job.capability;
    const jobLogger = logger.child({ job_id: job.jobId, capability: job.capability });

    // 1. Capability.
    const capability = findCapability(agent, job.capability);

    // 2. Input: validate a copy, since coercion and defaults change it in place.
    const input = structuredClone(job.input);
    if (!capability.validateInput(input))
      throw new ValidationError(formatAjvErrors(capability.validateInput.errors, "input"));

    // Dev mode: no payment at all (payment headers are ignored entirely).
    if (config.devMode)
      return finish(completed(job, await runJob(job, capability, input, true, jobLogger)));

    // 3. Payment.
    const { gate, replayStore: store } = args;
    if (!gate) throw new Error("executeJob: production mode needs the app's payment gate");
    if (!gate.paymentHeader(header)) {
      const required = gate.paymentRequired(capability, resourceUrl);
      return finish({ status: required.status, headers: required.headers, body: required.body });
    }
    const refuse = (err: PaymentError, retry = true): JobResponse => {
      jobLogger.info("payment refused", { reason: err.message });
      const headers = retry
        ? gate.retryHeaders(capability, resourceUrl, err.message)
        : { "Cache-Control": "no-store" };
      return fail(err, headers);
    };
    /** Replay-store writes after the handler ran must not lose a result that was paid for. */
    const quietly = async (what: string, work: () => Promise<void>): Promise<void> => {
      try {
        await work();
      } catch (err) {
        jobLogger.error(`replay store: could not ${what}`, { error: String(err) });
      }
    };

    let payment: VerifiedPayment;
    try {
      payment = await gate.verify(header, capability, job, resourceUrl);
    } catch (err) {
      if (!(err instanceof PaymentError)) throw err;
      return refuse(err);
    }

    // An identical retry (same job_id, same authorization) of a completed job: same answer,
    // no second run, no second charge.
    const key = authorizationKey(payment);
    const ttl = authorizationTtl(payment);
    const cacheKey = resultKey(payment, job.jobId);
    const cached = await store.getResult(cacheKey);
    if (cached) {
      jobLogger.info("identical retry of a paid job: returning the cached result");
      return finish(cached);
    }

    // One authorization, one job: claim it before anything runs.
    const reservation = await store.reserve(key, ttl);
    if (reservation === "settled")
      return refuse(
        new PaymentError(
          "this payment authorization was already used for another job: sign a new one (with a fresh nonce)",
        ),
      );
    if (reservation === "in-flight")
      return refuse(
        new PaymentError(
          "this payment authorization is in use by a job that is still running: wait for that result, or sign a new authorization",
        ),
      );

    // From here on the reservation is released on every failure, unless the payment was (or may
    // have been) settled: then it is kept, so the authorization can never pay twice.
    let keep = false;
    try {
      try {
        await gate.confirm(payment);
      } catch (err) {
        if (err instanceof PaymentError) return refuse(err);
        jobLogger.error("payment check failed", { error: String(err) });
        throw err;
      }

      const output = await runJob(job, capability, input, false, jobLogger, payment);

      let receipt;
      try {
        receipt = await gate.settle(payment);
      } catch (err) {
        // An unknown error is treated like an unconfirmed settlement: it may have gone through.
        const uncertain = !(err instanceof SettlementError) || err.uncertain;
        const reason =
          err instanceof SettlementError ? err.message : "settlement failed unexpectedly";
        jobLogger.error("settlement failed; output withheld", {
          reason: err instanceof Error ? err.message : String(err),
          tx: err instanceof SettlementError ? err.broadcastTx : undefined,
          uncertain,
        });
        if (!uncertain)
          return refuse(
            new PaymentError(
              `payment was not settled, so the result is withheld: ${reason}; nothing was charged, and the same authorization may be retried`,
            ),
          );
        keep = true;
        await quietly("mark an unconfirmed settlement", () => store.markSettled(key, ttl));
        return refuse(
          new PaymentError(
            `payment settlement is unconfirmed, so the result is withheld: ${reason}; this authorization will not be used again; check the transaction before paying again`,
          ),
          false,
        );
      }

      keep = true;
      jobLogger.info("payment settled", { tx: receipt.transaction, payer: receipt.payer });
      const response = completed(job, output, paymentResponseHeaders(payment.x402Version, receipt));
      // Result first: an identical retry arriving in between finds it rather than "already used".
      await quietly("cache the result", () => store.putResult(cacheKey, response, ttl));
      await quietly("mark the authorization settled", () => store.markSettled(key, ttl));
      return finish(response);
    } finally {
      if (!keep) await quietly("release the reservation", () => store.release(key));
    }
  } catch (err) {
    if (err instanceof AgentError) return fail(err);
    logger.error("unexpected error in the job pipeline", {
      job_id: jobId,
      error: err instanceof Error ? err.message : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    return fail(new InternalError("pipeline error"));
  }
}
