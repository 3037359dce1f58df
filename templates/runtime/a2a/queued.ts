/**
 * A2A tasks on the job queue (the `queue` feature, reached through JobServices.asyncJobs): a paying
 * message sent with return_immediately (0.3: `configuration.blocking: false`) is checked, verified
 * and its authorization reserved as POST /execute's async jobs are (queue/accept.ts), then queued,
 * and the task answers at once `working` (`x402.payment.status: "payment-verified"`). A worker runs
 * it and settles only once its output is ready and valid (queue/work.ts). GetTask, on any instance
 * sharing the ledger, reads the queued job (followQueued, called by the task store) and shows the
 * task completed (the output artifact and `x402.payment.receipts`), failed (nothing charged) or
 * canceled (CancelTask: the queued job is cancelled, queue/cancel.ts, and never charged).
 * Part of your project: edit freely.
 */
import type { AsyncJobs, QueuedJobState } from "../jobs/services.js";
import type { StoredResult } from "../ledger/ledger.js";
import { agentMessage, dataPart, outputArtifact, textPart } from "./events.js";
import type { Part, Task } from "./sdk.js";
import { TaskState, TERMINAL_STATES } from "./sdk.js";
import { ERROR_KEY, RECEIPTS_KEY, STATUS_KEY } from "./x402.js";

/** The task metadata key of its queued job's id. */
export const QUEUE_KEY = "queued_job";

export const QUEUED_TEXT =
  "queued: the payment is verified and reserved; the job runs on this agent's queue and is charged only once it completed; poll GetTask (tasks/get) for its result";

/** The id of the task's queued job, if it runs on the queue. */
export function queuedJobOf(task: Task): string | undefined {
  const id = task.metadata?.[QUEUE_KEY];
  return typeof id === "string" ? id : undefined;
}

/** `task`, ended with `state`, an agent message of `parts`, `metadata` and `artifacts` (as the SDK applies a status update). */
function ended(
  task: Task,
  state: number,
  parts: Part[],
  metadata: Record<string, unknown> = {},
  artifacts: unknown[] = [],
): Task {
  const message = agentMessage(task, parts, metadata);
  return {
    ...task,
    status: { state, message, timestamp: new Date().toISOString() },
    artifacts: [...task.artifacts, ...artifacts],
    history: [...task.history, message],
    metadata: { ...task.metadata, ...metadata },
  };
}

/** The settlement's receipt, from the answer's PAYMENT-RESPONSE header (base64 JSON). */
function receiptOf(answer: StoredResult): unknown {
  const header = answer.headers["PAYMENT-RESPONSE"] ?? answer.headers["X-PAYMENT-RESPONSE"];
  if (header === undefined) return undefined;
  try {
    return JSON.parse(Buffer.from(header, "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** The task as its queued job's answer (as POST /execute would send it) ends it. */
function answered(task: Task, answer: StoredResult, capability: string): Task {
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  if (answer.status === 200 && body.status === "completed") {
    const receipt = receiptOf(answer);
    const metadata = receipt
      ? { [STATUS_KEY]: "payment-completed", [RECEIPTS_KEY]: [receipt] }
      : {};
    const artifact = outputArtifact(body.output, capability);
    return ended(task, TaskState.completed, [textPart("completed")], metadata, [artifact]);
  }
  // A job that failed was not charged; a payment refused by the worker (verified again before
  // the handler, or its settlement): SETTLEMENT_FAILED.
  const metadata =
    body.error_type === "payment"
      ? { [STATUS_KEY]: "payment-failed", [ERROR_KEY]: "SETTLEMENT_FAILED" }
      : {};
  return ended(task, TaskState.failed, [dataPart(body), textPart(String(body.error))], metadata);
}

const LOST =
  "the job is no longer on the queue (it was lost with an in-process queue that stopped, or its answer expired: JOB_RESULT_TTL_SECONDS); a charge, if any, shows in the payer's history";

/** The task as its queued job now says: unchanged while it waits or runs, else ended. */
function followState(task: Task, state: QueuedJobState, capability: string): Task {
  if (state === "queued" || state === "running") return task;
  if (state === "cancelled")
    return ended(task, TaskState.canceled, [
      textPart("cancelled: the job's result will not be delivered, and nothing is charged"),
    ]);
  if (state === "unknown") return ended(task, TaskState.failed, [textPart(LOST)]);
  return answered(task, state, capability);
}

/** `task`, brought up to date with its queued job (the task store calls it on every load). */
export async function followQueued(
  task: Task,
  jobs: AsyncJobs | undefined,
  capability: string | undefined,
): Promise<Task> {
  const id = queuedJobOf(task);
  const was = task.status?.state ?? 0;
  // An ended task stays so; a canceled one is looked at again, so that a charge is never hidden
  // (a cancel whose mark a full in-memory ledger dropped before the worker settled).
  if (!id || !jobs || (TERMINAL_STATES.includes(was) && was !== TaskState.canceled)) return task;
  const now = await jobs.state(id);
  if (was === TaskState.canceled && typeof now === "string") return task;
  return followState(task, now, capability ?? "");
}
