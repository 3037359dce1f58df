/**
 * Where A2A tasks live: the SDK's TaskStore over the payment ledger's records (ledger/ledger.ts
 * putRecord/getRecord): in this process with the memory ledger, in Redis with REDIS_URL, so a
 * task's second turn (its payment) or a GetTask may land on any instance sharing the ledger.
 * How long a task is kept after its last change:
 *   - ended (completed, failed, canceled): TASK_TTL_MS, a day;
 *   - running on the job queue (queued.ts): until its deadline plus a day, so a job completed and
 *     charged while nobody polled still has its result to give;
 *   - not yet (waiting for its payment, or running): until its job's deadline plus the payment
 *     window its offer gave (the largest maxTimeoutSeconds of its accepts: a payment signed by the
 *     deadline is valid that long, and a caller gone before settlement may send it again until
 *     then), so an abandoned unpaid task goes soon (defaults: 300 + 345 s after its first turn).
 * A finished task is never put back to an earlier state by a late save of a turn that loaded it
 * before it finished. A task whose job runs on the queue (queued.ts) is brought up to date with it
 * when loaded (`follow`), and kept so once ended. Listing is not offered (ListTasks answers an empty page): a task is read by
 * its id, which only its caller knows. Part of your project: edit freely.
 */
import type { Ledger } from "../ledger/ledger.js";
import { memoryRecords } from "../ledger/memory.js";
import { queuedJobOf } from "./queued.js";
import { storedJob } from "./request.js";
import { type A2aSdk, type Task, type TaskStore, TERMINAL_STATES } from "./sdk.js";
import { REQUIRED_KEY } from "./x402.js";

/** How long a task is kept after its last change (a day). */
export const TASK_TTL_MS = 24 * 3600 * 1000;

/** The ledger's records and claims, which the A2A transport keeps its tasks and claims in. */
export type TaskRecords = Required<Pick<Ledger, "putRecord" | "getRecord" | "claimRecord">>;

/** The ledger's records, or (a ledger of your own without all three) this process's, bounded. */
export function taskRecords(ledger: Ledger): TaskRecords {
  const { putRecord, getRecord, claimRecord } = ledger;
  if (!putRecord || !getRecord || !claimRecord) return memoryRecords();
  return {
    putRecord: putRecord.bind(ledger),
    getRecord: getRecord.bind(ledger),
    claimRecord: claimRecord.bind(ledger),
  };
}

const keyOf = (taskId: string): string => `a2a-task:${taskId}`;

const finished = (task: Task | undefined): boolean =>
  TERMINAL_STATES.includes(task?.status?.state ?? 0);

/** The largest maxTimeoutSeconds of the task's offer (input-required's status), if it has one. */
function offeredWindow(task: Task): number | undefined {
  const accepts: unknown = task.status?.message?.metadata?.[REQUIRED_KEY]?.accepts;
  if (!Array.isArray(accepts)) return undefined;
  const windows = accepts.map((a) => a?.maxTimeoutSeconds).filter((w) => typeof w === "number");
  return windows.length > 0 ? Math.max(...windows) : undefined;
}

/**
 * How long to keep `task` now: a day once ended; else until its deadline plus its offer's payment
 * window (`windowSeconds`, the configured one, before an offer is made or in dev mode).
 */
export function taskTtlMs(task: Task, windowSeconds: number, nowMs = Date.now()): number {
  if (finished(task)) return TASK_TTL_MS;
  const deadline = storedJob(task.metadata)?.deadline ?? nowMs / 1000;
  if (queuedJobOf(task)) return Math.max(0, deadline * 1000 - nowMs) + TASK_TTL_MS;
  const window = Math.max(windowSeconds, offeredWindow(task) ?? 0);
  return Math.max(0, deadline * 1000 - nowMs) + window * 1000;
}

/**
 * The task store; `windowSeconds`: the payment window an offer gives (X402_MAX_TIMEOUT_SECONDS);
 * `follow`: a loaded task brought up to date with its queued job (queued.ts).
 */
export function ledgerTaskStore(
  records: TaskRecords,
  sdk: A2aSdk,
  windowSeconds: number,
  follow: (task: Task) => Promise<Task> = async (task) => task,
): TaskStore {
  const kept = async (taskId: string): Promise<Task | undefined> => {
    const json = await records.getRecord(keyOf(taskId));
    return json === undefined ? undefined : sdk.taskFromJson(JSON.parse(json));
  };
  const save = async (task: Task) => {
    if (!finished(task) && finished(await kept(task.id))) return;
    const json = JSON.stringify(sdk.taskToJson(task));
    await records.putRecord(keyOf(task.id), json, taskTtlMs(task, windowSeconds));
  };
  return {
    save,
    async load(taskId: string) {
      const task = await kept(taskId);
      const now = task && (await follow(task));
      if (now && now !== task) await save(now); // its queued job ended it: kept so
      return now;
    },
    async list() {
      return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    },
  };
}
