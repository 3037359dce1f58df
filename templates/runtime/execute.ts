/**
 * The job pipeline (spec section 4), independent of HTTP: request -> { status, headers, body }.
 * The steps run in the spec's order; each failure maps to one error type (errors.ts).
 * Part of your project: edit freely.
 */
import { formatAjvErrors } from "./ajv.js";
import type { ResolvedConfig } from "./config.js";
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
} from "./errors.js";
import { createPaymentGate, type HeaderGetter, type PaymentGate } from "./payment.js";
import type {
  AgentDefinition,
  Capability,
  HandlerContext,
  Logger,
  VerifiedPayment,
} from "./types.js";

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
  /** Defaults to a gate built from config.payment (pass one to reuse it across requests). */
  gate?: PaymentGate;
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

    // 3. Payment, unless dev mode (then payment headers are ignored entirely).
    let payment: VerifiedPayment | undefined;
    let gate: PaymentGate | undefined;
    if (!config.devMode) {
      gate = args.gate ?? createPaymentGate(config.payment);
      if (!gate.paymentHeader(header)) {
        const required = gate.paymentRequired(capability, resourceUrl);
        return finish({ status: required.status, headers: required.headers, body: required.body });
      }
      try {
        payment = await gate.verify(header, capability, job);
      } catch (err) {
        if (!(err instanceof PaymentError)) throw err;
        jobLogger.info("payment refused", { reason: err.message });
        return fail(err, gate.retryHeaders(capability, resourceUrl, err.message));
      }
    }

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
          logger: jobLogger,
        };
        if (payment) ctx.payment = payment;
        return capability.handler(input, ctx);
      });
    } catch (err) {
      return fail(fromHandlerError(err, jobLogger));
    }

    // 6. Output. Production: a mismatch is our bug, so 500 (details only in the log).
    //    Dev mode: warn and pass the output through, so you can see what the handler returned.
    if (!capability.validateOutput(output)) {
      const problem = formatAjvErrors(capability.validateOutput.errors, "output");
      if (!config.devMode) {
        jobLogger.error("handler output does not match output_schema", { problem });
        return fail(new InternalError(`output mismatch: ${problem}`));
      }
      const warning = "dev mode: handler output does not match output_schema; returned unchanged";
      jobLogger.warn(`${warning} (production answers 500)`, { problem });
    }

    // Settlement slot: a gate with a settle step charges here, after the output is known good.
    if (payment && gate?.settle) await gate.settle(payment, capability);

    return finish({
      status: 200,
      headers: {},
      body: {
        service_version: SERVICE_VERSION,
        job_id: job.jobId,
        status: "completed",
        output,
        completed_at: Math.floor(Date.now() / 1000),
      },
    });
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
