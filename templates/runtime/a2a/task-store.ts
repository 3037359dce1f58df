/**
 * Where A2A tasks live: the SDK's TaskStore over the payment ledger's records (ledger/ledger.ts
 * putRecord/getRecord): in this process with the memory ledger, in Redis with REDIS_URL, so a
 * task's second turn (its payment) or a GetTask may land on any instance sharing the ledger. A task
 * is kept TASK_TTL_MS after its last change. Listing is not offered (ListTasks answers an empty
 * page): a task is read by its id, which only its caller knows. Part of your project: edit freely.
 */
import type { Ledger } from "../ledger/ledger.js";
import { memoryRecords } from "../ledger/memory.js";
import type { A2aSdk, Task, TaskStore } from "./sdk.js";

/** How long a task is kept after its last change (a day). */
export const TASK_TTL_MS = 24 * 3600 * 1000;

const keyOf = (taskId: string): string => `a2a-task:${taskId}`;

export function ledgerTaskStore(ledger: Ledger, sdk: A2aSdk): TaskStore {
  const records =
    ledger.putRecord && ledger.getRecord
      ? { putRecord: ledger.putRecord.bind(ledger), getRecord: ledger.getRecord.bind(ledger) }
      : memoryRecords(); // a ledger of your own without records: this process's, bounded
  return {
    async save(task: Task) {
      const json = JSON.stringify(sdk.taskToJson(task));
      await records.putRecord(keyOf(task.id), json, TASK_TTL_MS);
    },
    async load(taskId: string) {
      const json = await records.getRecord(keyOf(taskId));
      return json === undefined ? undefined : sdk.taskFromJson(JSON.parse(json));
    },
    async list() {
      return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    },
  };
}
