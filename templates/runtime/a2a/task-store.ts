/**
 * Where A2A tasks live: the SDK's TaskStore over the payment ledger's records (ledger/ledger.ts
 * putRecord/getRecord): in this process with the memory ledger, in Redis with REDIS_URL, so a
 * task's second turn (its payment) or a GetTask may land on any instance sharing the ledger.
 * How long a task is kept after its last change:
 *   - ended (completed, failed, canceled): TASK_TTL_MS, a day;
 *   - waiting for its payment (submitted or input-required, no paying turn came: each one claims
 *     the task first, claim.ts): the payment window (X402_MAX_TIMEOUT_SECONDS), whatever its
 *     deadline: a first turn costs nothing, so a caller that does not pay within the window starts
 *     over, and unpaid tasks never pile up for days (defaults: gone 300 s after the first turn);
 *   - running on the job queue (queued.ts): until its deadline plus a day, so a job completed and
 *     charged while nobody polled still has its result to give;
 *   - paid and not ended (running, or input-required again: its caller left before settlement):
 *     until its job's deadline plus the payment window its offer gave (the largest
 *     maxTimeoutSeconds of its accepts: a payment signed by the deadline is valid that long, and a
 *     caller gone before settlement may send it again until then).
 * What a caller sent is kept once and bounded (keptTask): the job's input only in the first turn's
 * data part (its metadata's job holds the rest: request.ts), and of each caller message's other
 * parts and metadata (the a2a-x402 keys of a paying turn) at most CALLER_EXTRA_CHARS.
 * A finished task is never put back to an earlier state by a late save of a turn that loaded it
 * before it finished. A task whose job runs on the queue (queued.ts) is brought up to date with it
 * when loaded (`follow`), and kept so once ended. Listing is not offered (ListTasks answers an empty page; parameters A2A calls invalid are refused): a task is read by
 * its id, which only its caller knows. Part of your project: edit freely.
 */
import type { Ledger } from "../ledger/ledger.js";
import { memoryRecords, TASK_RECORD_PREFIX } from "../ledger/memory-records.js";
import { queuedJobOf } from "./queued.js";
import { firstTurn, jobPart, namesCapabilityPart, ROLE_USER, storedJob } from "./request.js";
import {
  type A2aSdk,
  type Message,
  type Part,
  type Task,
  TaskState,
  type TaskStore,
  TERMINAL_STATES,
} from "./sdk.js";
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

const keyOf = (taskId: string): string => `${TASK_RECORD_PREFIX}${taskId}`;

const finished = (task: Task | undefined): boolean =>
  TERMINAL_STATES.includes(task?.status?.state ?? 0);

/** The largest maxTimeoutSeconds of the task's offer (input-required's status), if it has one. */
function offeredWindow(task: Task): number | undefined {
  const accepts: unknown = task.status?.message?.metadata?.[REQUIRED_KEY]?.accepts;
  if (!Array.isArray(accepts)) return undefined;
  const windows = accepts.map((a) => a?.maxTimeoutSeconds).filter((w) => typeof w === "number");
  return windows.length > 0 ? Math.max(...windows) : undefined;
}

/** Whether `task` waits for its payment: not yet running, and no paying turn came (one claims it). */
function awaitsPayment(task: Task): boolean {
  const state = task.status?.state;
  if (state !== TaskState.submitted && state !== TaskState.inputRequired) return false;
  return (task.history ?? []).filter((message) => message.role === ROLE_USER).length <= 1;
}

/**
 * How long to keep `task` now (see the header): a day once ended; the payment window
 * (`windowSeconds`: X402_MAX_TIMEOUT_SECONDS) while it waits for its payment; else until its
 * deadline plus its offer's payment window (`windowSeconds` before an offer is made or in dev mode).
 */
export function taskTtlMs(task: Task, windowSeconds: number, nowMs = Date.now()): number {
  if (finished(task)) return TASK_TTL_MS;
  if (awaitsPayment(task)) return windowSeconds * 1000;
  const deadline = storedJob(task)?.deadline ?? nowMs / 1000;
  if (queuedJobOf(task)) return Math.max(0, deadline * 1000 - nowMs) + TASK_TTL_MS;
  const window = Math.max(windowSeconds, offeredWindow(task) ?? 0);
  return Math.max(0, deadline * 1000 - nowMs) + window * 1000;
}

/** What a caller's message keeps besides its job's part (other parts, metadata...), in JSON characters. */
const CALLER_EXTRA_CHARS = 16 * 1024;

/**
 * A caller's `message` as kept: `job` (the first turn's job part), and, in order while they fit in
 * CALLER_EXTRA_CHARS, its other parts, metadata entries, extensions and reference ids; a data part
 * naming a capability again (a paying turn may repeat the first turn's) is not kept.
 */
function keptMessage(message: Message, job: Part | undefined): Message {
  let left = CALLER_EXTRA_CHARS;
  const fits = (value: unknown): boolean => {
    const size = (JSON.stringify(value) ?? "").length;
    if (size > left) return false;
    left -= size;
    return true;
  };
  const parts = (message.parts ?? []).filter(
    (p) => p === job || (!namesCapabilityPart(p) && fits(p)),
  );
  const metadata = Object.entries(message.metadata ?? {}).filter((entry) => fits(entry));
  return {
    ...message,
    parts,
    metadata: Object.fromEntries(metadata),
    extensions: (message.extensions ?? []).filter(fits),
    referenceTaskIds: (message.referenceTaskIds ?? []).filter(fits),
  };
}

/** `task` as kept: its callers' messages bounded (keptMessage), the job's input once. */
function keptTask(task: Task): Task {
  const first = firstTurn(task);
  const job = first && jobPart(first);
  const kept = (m: Message) =>
    m.role === ROLE_USER ? keptMessage(m, m === first ? job : undefined) : m;
  return { ...task, history: (task.history ?? []).map(kept) };
}

/** An RFC 3339 timestamp (as ProtoJSON writes a Timestamp), or a Date that is one. */
const isTimestamp = (value: unknown): boolean =>
  value instanceof Date
    ? Number.isFinite(value.getTime())
    : typeof value === "string" &&
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
      Number.isFinite(Date.parse(value));

/**
 * Why ListTasks' parameters are refused (invalid params, as A2A says), or undefined (pageSize the SDK
 * checks). Nothing is listed either way (see above), but a request A2A calls invalid is told so, not
 * given an empty page.
 */
function listProblem(params: unknown): string | undefined {
  const p = (params ?? {}) as Record<string, unknown>;
  if (typeof p.pageToken === "string" && p.pageToken !== "")
    return "pageToken: this agent issued no page token (it lists no task: each is read by its id)";
  if (typeof p.historyLength === "number" && p.historyLength < 0)
    return "historyLength must be 0 or more";
  if (p.statusTimestampAfter !== undefined && !isTimestamp(p.statusTimestampAfter))
    return "statusTimestampAfter must be an RFC 3339 timestamp";
  return undefined;
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
    const json = JSON.stringify(sdk.taskToJson(keptTask(task)));
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
    async list(params: unknown) {
      const problem = listProblem(params);
      if (problem) throw new sdk.RequestMalformedError(`ListTasks: ${problem}`);
      const size = (params as { pageSize?: unknown } | undefined)?.pageSize;
      return {
        tasks: [],
        nextPageToken: "",
        pageSize: typeof size === "number" ? size : 50,
        totalSize: 0,
      };
    },
  };
}
