/**
 * tools/call, as a job: the call becomes the spec's job request (capability = the tool's name,
 * input = its arguments) and runs through the same pipeline as POST /execute (jobs/pipeline.ts):
 * capability, input, payment, deadline, handler, output, settlement, the ledger. Its outcome
 * (jobs/outcome.ts) is then written as a tool result. Part of your project: edit freely.
 *
 * A tool call has no job_id or deadline: `params._meta.job_id` and `params._meta.deadline` (Unix
 * seconds) set them; otherwise the deadline is now + MCP_DEADLINE_SECONDS, and the job id is derived
 * from the tool, its arguments and the payment. A paid job's answer is found by its payment and
 * request, not its job id (jobs/stored-answer.ts): an identical retry, here or as POST /execute,
 * gets the cached result (or settles a held one) with no second charge.
 */
import { createHash } from "node:crypto";
import type { DiscoveryData } from "../discovery/data.js";
import { errorBody, errorResponse, PaymentError } from "../errors.js";
import { canonical } from "../jobs/identity.js";
import type { JobAnswer, Refused } from "../jobs/outcome.js";
import { executeJob, SERVICE_VERSION, type JobServices } from "../jobs/pipeline.js";
import type { PaymentGate } from "../payments/gate.js";
import { isObject } from "../ops/json-object.js";
import type { Logger } from "../types.js";
import {
  mcpChannel,
  mcpPaymentRequired,
  PAYMENT_META_KEY,
  PAYMENT_RESPONSE_META_KEY,
  toolResource,
} from "./payment.js";
import { progressTokenOf, reportProgress } from "./progress.js";
import type { CallToolParams, CallToolResult, McpRequestExtra } from "./sdk.js";

/** The `_meta` keys a caller may set on tools/call (documented in the README and /llms.txt). */
export const JOB_ID_META_KEY = "job_id";
/** A refusal's `_meta` key: seconds to wait before sending the identical call again (HTTP's Retry-After). */
export const RETRY_AFTER_META_KEY = "retry_after_seconds";
export const DEADLINE_META_KEY = "deadline";

/** "mcp-" + 32 hex digits: the same tool, arguments and payment give the same id. */
export function derivedJobId(tool: string, args: unknown, payment: unknown): string {
  const digest = createHash("sha256").update(canonical([tool, args, payment ?? null]));
  return `mcp-${digest.digest("hex").slice(0, 32)}`;
}

export interface ToolCallOptions {
  logger: Logger;
  /** The registry's discovery data, when it has any (the Bazaar extension of PaymentRequired). */
  discovery: DiscoveryData | undefined;
  /** The SDK's request context: aborted when the caller is gone; progress notifications. */
  extra?: McpRequestExtra;
  /** Aborted when the client cancels the call (notifications/cancelled): the handler's ctx.signal aborts. */
  cancel?: AbortSignal;
}

export async function callTool(
  s: JobServices,
  params: CallToolParams,
  options: ToolCallOptions,
): Promise<CallToolResult> {
  const meta = params._meta;
  const args = params.arguments ?? {};
  const jobId =
    meta?.[JOB_ID_META_KEY] ?? derivedJobId(params.name, args, meta?.[PAYMENT_META_KEY]);
  const deadline = meta?.[DEADLINE_META_KEY] ?? Date.now() / 1000 + s.config.mcp.deadlineSeconds;
  const { extra } = options;
  const token = progressTokenOf(meta);
  // From the handler's start: a call refused before it (unpaid, invalid) is never said to be running.
  let progress: { stop(): void } | undefined;
  const onStart =
    extra && token !== undefined && typeof deadline === "number"
      ? () => {
          progress = reportProgress((n) => extra.sendNotification(n), token, {
            periodSeconds: s.config.mcp.progressSeconds,
            deadline,
            logger: options.logger,
          });
        }
      : undefined;
  const answer = await executeJob(s, {
    body: {
      service_version: SERVICE_VERSION,
      job_id: jobId,
      task: { capability: params.name, input: args },
      deadline,
    },
    payment: mcpChannel(meta),
    resourceUrl: () => toolResource(params.name),
    logger: options.logger,
    ...(extra && { callerGone: extra.signal }),
    ...(options.cancel && { cancel: options.cancel }),
    ...(onStart && { onStart }),
  }).finally(() => progress?.stop());
  const offers = { gate: s.gate, discovery: options.discovery };
  return toolResult(answer, typeof jobId === "string" ? jobId : undefined, offers);
}

/** What a tool result's PaymentRequired is made from (no gate: dev mode, no offers). */
export interface ToolOffers {
  gate: PaymentGate | undefined;
  discovery: DiscoveryData | undefined;
}

/**
 * A job's outcome as a tool result. Success: the output as structuredContent and as text, the
 * settlement (production) in `_meta["x402/payment-response"]`. Failure: isError, with the error
 * body (the spec's, or a PaymentRequired) as structuredContent and as text.
 */
export function toolResult(
  answer: JobAnswer,
  jobId: string | undefined,
  offers: ToolOffers,
): CallToolResult {
  const meta: Record<string, unknown> = jobId === undefined ? {} : { [JOB_ID_META_KEY]: jobId };
  if (answer.kind !== "completed") {
    // Refused for now (the payer's MAX_JOBS_PER_PAYER jobs run, its payment's job still runs, the
    // ledger is away): the identical call, same payment, may be sent again after this many seconds.
    if (answer.kind === "refused" && answer.retryAfterSeconds !== undefined)
      meta[RETRY_AFTER_META_KEY] = answer.retryAfterSeconds;
    const text = JSON.stringify(failureBody(answer, offers));
    const body: unknown = JSON.parse(text);
    return {
      content: [{ type: "text", text }],
      ...(isObject(body) && { structuredContent: body }),
      isError: true,
      _meta: meta,
    };
  }
  const { output } = JSON.parse(answer.body) as { output: unknown };
  if (answer.settlement) {
    const { transaction, network, payer } = answer.settlement;
    meta[PAYMENT_RESPONSE_META_KEY] = { success: true, transaction, network, payer };
  }
  return {
    content: [{ type: "text", text: JSON.stringify(output) }],
    // A dev-mode output that is not an object (production refuses it) can only be text.
    ...(isObject(output) && { structuredContent: output }),
    _meta: meta,
  };
}

/**
 * A failed call's body: the PaymentRequired (what an x402 MCP client pays with); a refused payment
 * that may be paid again: that PaymentRequired saying why, plus the spec's error fields; any other
 * refusal: the spec's error body (a settlement that may have gone through is no invitation to pay).
 */
function failureBody(answer: Exclude<JobAnswer, { kind: "completed" }>, offers: ToolOffers) {
  if (answer.kind === "payment_required")
    return mcpPaymentRequired(offers.gate!, offers.discovery, answer.ask, answer.reason);
  if (answer.kind === "caller_gone") return errorBody("payment", answer.message);
  return refusedBody(answer, offers);
}

function refusedBody(answer: Refused, offers: ToolOffers) {
  const { error } = answer;
  if (!(answer.payment && error instanceof PaymentError)) return errorResponse(error).body;
  const body = errorBody("payment", error.message);
  const offer = answer.payment.offer;
  if (!offer) return body;
  return { ...mcpPaymentRequired(offers.gate!, offers.discovery, offer, error.message), ...body };
}
