/**
 * The in-process job queue (no REDIS_URL): jobs wait in this process and run on its worker, up to
 * WORKER_CONCURRENCY at once, in the order they came; a finished job's answer is kept
 * JOB_RESULT_TTL_SECONDS. One instance only: its jobs die with the process (nothing is charged for a
 * job that did not finish). Part of your project: edit freely.
 */
import { errorBody } from "../errors.js";
import type { StoredResult } from "../ledger/ledger.js";
import type { JobQueue, JobRecord, Processor, QueuedJob } from "./queue.js";

/** The answer of a job whose worker failed unexpectedly, or was stopped (nothing charged). */
const stopped = (message: string): StoredResult => ({
  status: 503,
  headers: { "Cache-Control": "no-store" },
  body: JSON.stringify(errorBody("internal", message)),
});

export function createMemoryQueue(resultTtlMs: number): JobQueue {
  const records = new Map<string, JobRecord & { expiresAt?: number }>();
  const waiting: string[] = [];
  let processor: Processor | undefined;
  let concurrency = 0;
  let running = 0;
  let stopping = false;
  let whenIdle: (() => void) | undefined;

  const prune = (now: number): void => {
    for (const [id, record] of records)
      if (record.expiresAt !== undefined && record.expiresAt <= now) records.delete(id);
  };
  const pruner = setInterval(() => prune(Date.now()), 60_000);
  pruner.unref();

  const finish = (record: JobRecord & { expiresAt?: number }, answer: StoredResult): void => {
    record.state = "done";
    record.answer = answer;
    record.expiresAt = Date.now() + resultTtlMs;
  };

  const pump = (): void => {
    while (processor && !stopping && running < concurrency && waiting.length > 0) {
      const record = records.get(waiting.shift()!);
      if (!record || record.state !== "queued") continue;
      record.state = "running";
      running++;
      processor(record.data)
        .then(
          (answer) => finish(record, answer),
          (err: unknown) =>
            finish(
              record,
              stopped(
                `the job was stopped before it finished (${err instanceof Error ? err.message : String(err)}); nothing was charged`,
              ),
            ),
        )
        .finally(() => {
          running--;
          if (running === 0) whenIdle?.();
          pump();
        });
    }
  };

  return {
    describe: () => "job queue: in this process (one instance; REDIS_URL unset)",
    async add(job: QueuedJob) {
      const there = records.get(job.id);
      if (there) return there.data.token;
      records.set(job.id, { data: job, state: "queued" });
      waiting.push(job.id);
      queueMicrotask(pump);
      return job.token;
    },
    async get(id) {
      const record = records.get(id);
      if (record?.expiresAt !== undefined && record.expiresAt <= Date.now()) {
        records.delete(id);
        return undefined;
      }
      return record;
    },
    async counts() {
      let queued = 0;
      for (const record of records.values()) if (record.state === "queued") queued++;
      return { queued, running };
    },
    async work(run, count) {
      processor = run;
      concurrency = count;
      pump();
    },
    // This process always runs its worker (WORKER=off needs REDIS_URL); a stopping one refuses jobs anyway (drain).
    workerSeen: async () => true,
    async stopWorking() {
      stopping = true;
      if (running > 0) await new Promise<void>((resolve) => (whenIdle = resolve));
    },
    async close() {
      stopping = true;
      clearInterval(pruner);
    },
  };
}
