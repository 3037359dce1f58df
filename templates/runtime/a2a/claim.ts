/**
 * One A2A task = at most one job run and one charge, whatever is sent on it. The ledger keeps
 * "one authorization = one run", but a task could be paid twice with two authorizations sent at
 * once; so the first payment sent on a task claims it (the ledger's claimRecord: one atomic step
 * across every instance sharing the ledger) before the SDK runs that turn, and the task is the
 * claiming payment's for good:
 *   - another payment on it is refused (UnsupportedOperationError), nothing run or charged: while
 *     the claiming payment's job runs, after it completed, and after it failed (A2A's failed is
 *     final, like completed and canceled: the task is not retried; send the job again as a new task);
 *   - the same payment sent again passes (a caller that left before settlement gets its kept
 *     result then; two copies at once: the ledger runs one, executor.ts);
 *   - a message on a finished task is refused the same way, saying so;
 *   - a paying message asking for another job than the first turn's is refused before any claim;
 *   - a CancelTask on an instance that is not running the task's turn claims it too (cancelRefusal):
 *     once a payment holds it, its job may be running on another instance, which alone can stop
 *     it, so the cancel is refused (TaskNotCancelableError); once the cancel holds it, no payment
 *     runs on the task.
 * A payment's claim is kept until the task's deadline plus TASK_TTL_MS (as long as any copy of the
 * task). A cancel's only until the task's canceled state is saved, which refuses every later
 * payment by itself: CANCEL_CLAIM_MS (cancels are free, so they must not pile up claims for days).
 * Part of your project: edit freely.
 */
import { paymentHash } from "../jobs/identity.js";
import { LedgerUnavailableError } from "../ledger/ledger.js";
import { changedRequest, storedJob } from "./request.js";
import type { A2aSdk, Message, Task, TaskStore } from "./sdk.js";
import { TaskState, TERMINAL_STATES } from "./sdk.js";
import { TASK_TTL_MS, type TaskRecords } from "./task-store.js";
import { PAYLOAD_KEY } from "./x402.js";

const claimKey = (taskId: string): string => `a2a-claim:${taskId}`;

const STATE_NAMES: Record<number, string> = {
  [TaskState.completed]: "completed",
  [TaskState.failed]: "failed",
  [TaskState.canceled]: "canceled",
  [TaskState.rejected]: "rejected",
};

/** The claim's life: until the task's deadline, then as long as a finished task is kept. */
function claimTtlMs(task: Task): number {
  const deadline = storedJob(task)?.deadline ?? 0;
  return Math.max(0, deadline * 1000 - Date.now()) + TASK_TTL_MS;
}

/**
 * Why the paying `message` may not run on its task (an SDK error to throw), or undefined when its
 * payment holds the task's claim now (taken by this call, or sent before). A task the SDK itself
 * refuses (unknown, or another context's) is left to it, unclaimed.
 */
export async function claimRefusal(
  records: TaskRecords,
  store: TaskStore,
  sdk: A2aSdk,
  message: Message,
): Promise<Error | undefined> {
  const task = await store.load(message.taskId, undefined);
  if (!task || (message.contextId && task.contextId && message.contextId !== task.contextId))
    return undefined;
  const state = task.status?.state ?? 0;
  if (TERMINAL_STATES.includes(state))
    return new sdk.UnsupportedOperationError(
      `task ${task.id} is ${STATE_NAMES[state]}: a task runs one job for one payment; nothing was run or charged for this message; send the job again as a new task`,
    );
  const job = storedJob(task);
  const changed = job && changedRequest(message, job);
  if (changed) return new sdk.RequestMalformedError(changed);
  const payment = paymentHash({ name: PAYLOAD_KEY, object: message.metadata?.[PAYLOAD_KEY] });
  const kept = await claimTask(records, task, payment, "nothing was run or charged; send it again");
  if (kept instanceof Error) return kept;
  if (kept === payment) return undefined;
  if (kept === CANCEL_CLAIM)
    return new sdk.UnsupportedOperationError(
      `task ${task.id} was cancelled: nothing was run or charged for this message; send the job again as a new task`,
    );
  return new sdk.UnsupportedOperationError(
    `task ${task.id} is already paid with another payment (its job is running or has run, or its result waits for that same payment to be sent again): nothing was run or charged for this message`,
  );
}

/** What a cancel claims a task with (a payment's claim is its hash, never this). */
const CANCEL_CLAIM = "cancelled";
/** How long a cancel's claim is kept: a turn that loaded the task before the cancel claims within it. */
const CANCEL_CLAIM_MS = 10 * 60_000;

/**
 * Why CancelTask may not cancel `task` here, where its turn is not running (an SDK error to throw),
 * or undefined once the cancel holds the task's claim: no payment can run on it then.
 */
export async function cancelRefusal(
  records: TaskRecords,
  sdk: A2aSdk,
  task: Task,
): Promise<Error | undefined> {
  const kept = await claimTask(
    records,
    task,
    CANCEL_CLAIM,
    "the task was not cancelled; send the cancel again",
    CANCEL_CLAIM_MS,
  );
  if (kept instanceof Error) return kept;
  if (kept === CANCEL_CLAIM) return undefined;
  return new sdk.TaskNotCancelableError(
    `task ${task.id} is paid and its job is running, or has run, on another instance of this service, which alone can stop it: it was not cancelled; it is charged only if its job completes and its result is delivered (then tasks/get shows it, with the receipt)`,
  );
}

/**
 * Claims `task` for `value` (a payment's hash, or CANCEL_CLAIM) for `ttlMs`: what holds the claim now (`value`
 * when this took it, or had it already), or, the ledger unreachable, the error to answer, saying
 * `notDone`.
 */
async function claimTask(
  records: TaskRecords,
  task: Task,
  value: string,
  notDone: string,
  ttlMs = claimTtlMs(task),
): Promise<string | Error> {
  try {
    return (await records.claimRecord(claimKey(task.id), value, ttlMs)) ?? value;
  } catch (err) {
    if (!(err instanceof LedgerUnavailableError)) throw err;
    return new Error(`${err.message}; ${notDone}`);
  }
}
