/**
 * Step 6 and the answer: the handler's output is serialized and size-checked first, and what is
 * validated against output_schema is exactly what the caller will receive (the serialized JSON,
 * read back). All of this happens before a paid job is settled, so an output that cannot be
 * delivered (a circular reference, a BigInt, NaN turned into null, too many bytes) is an internal
 * error and nothing is charged. Part of your project: edit freely.
 */
import { formatAjvErrors } from "../ajv.js";
import { InternalError } from "../errors.js";
import type { Capability, Logger } from "../types.js";
import { SERVICE_VERSION } from "./request.js";

export interface ResultOptions {
  /** Production refuses a mismatching output (500); dev mode logs it and returns it unchanged. */
  devMode: boolean;
  /** Largest serialized job result, in bytes (MAX_OUTPUT_BYTES). */
  maxOutputBytes: number;
  logger: Logger;
}

/** The success body (spec 2.4) for a handler's output; throws InternalError if it cannot be delivered. */
export function completedBody(
  jobId: string,
  capability: Capability,
  output: unknown,
  options: ResultOptions,
): string {
  const { logger } = options;
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch (err) {
    logger.error("handler output cannot be serialized as JSON", { error: String(err) });
    throw new InternalError(`output not serializable: ${String(err)}`, { cause: err });
  }
  if (json === undefined) {
    logger.error("handler returned no output (undefined or a function)");
    throw new InternalError("output missing");
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > options.maxOutputBytes) {
    logger.error("handler output is larger than MAX_OUTPUT_BYTES", {
      bytes,
      max: options.maxOutputBytes,
    });
    throw new InternalError(`output too large: ${bytes} bytes`);
  }

  const delivered: unknown = JSON.parse(json);
  if (!capability.validateOutput(delivered)) {
    const problem = formatAjvErrors(capability.validateOutput.errors, "output");
    if (!options.devMode) {
      logger.error("handler output does not match output_schema", { problem });
      throw new InternalError(`output mismatch: ${problem}`);
    }
    logger.warn(
      "dev mode: handler output does not match output_schema; returned unchanged (production answers 500)",
      { problem },
    );
  }
  const completedAt = Math.floor(Date.now() / 1000);
  return `{"service_version":"${SERVICE_VERSION}","job_id":${JSON.stringify(jobId)},"status":"completed","output":${json},"completed_at":${completedAt}}`;
}

/**
 * A stored success body as the answer to a request with another job_id (the identical request,
 * retried over the other transport or under a new job_id): the same body, naming this request's.
 */
export function withJobId(body: string, jobId: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  return parsed.job_id === jobId ? body : JSON.stringify({ ...parsed, job_id: jobId });
}
