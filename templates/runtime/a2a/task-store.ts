/**
 * Where A2A tasks live: the SDK's TaskStore over the payment ledger's records (ledger/ledger.ts
 * putRecord/getRecord): in this process with the memory ledger, in Redis with REDIS_URL, so a
 * task's second turn (its payment) or a GetTask may land on any instance sharing the ledger. A task
 * is kept TASK_TTL_MS after its last change. A finished task (completed, failed, canceled) is never
 * put back to an earlier state by a late save of a turn that loaded it before it finished.
 * Listing is not offered (ListTasks answers an empty page): a task is read by its id, which only
 * its caller knows. Part of your project: edit freely.
 */
import type { Ledger } from "../ledger/ledger.js";
import { memoryRecords } from "../ledger/memory.js";
import { type A2aSdk, type Task, type TaskStore, TERMINAL_STATES } from "./sdk.js";

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

export function ledgerTaskStore(records: TaskRecords, sdk: A2aSdk): TaskStore {
  const load = async (taskId: string): Promise<Task | undefined> => {
    const json = await records.getRecord(keyOf(taskId));
    return json === undefined ? undefined : sdk.taskFromJson(JSON.parse(json));
  };
  return {
    async save(task: Task) {
      if (!finished(task) && finished(await load(task.id))) return;
      const json = JSON.stringify(sdk.taskToJson(task));
      await records.putRecord(keyOf(task.id), json, TASK_TTL_MS);
    },
    load,
    async list() {
      return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    },
  };
}
