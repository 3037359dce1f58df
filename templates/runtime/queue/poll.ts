/**
 * GET /jobs/<id>: an async job's state for the holder of its credential (the 202's `job_token`, sent
 * as `Authorization: Bearer <job_token>`); anyone else, and a job unknown or expired, gets the same
 * 404. While it waits or runs: 200 `{service_version, job_id, status: "queued" | "running"}` with
 * Retry-After. Then the answer POST /execute would have sent: the job result with the settlement's
 * receipt (PAYMENT-RESPONSE / X-PAYMENT-RESPONSE), or the error body with its status. The ledger is
 * read first: a charge it recorded is what the caller gets, whatever a worker said later. A job whose
 * only worker was killed while running it is answered as failed (408 deadline) once its deadline and
 * JOB_LOCK_SECONDS passed with no worker running, if no settlement of it was started.
 * Every answer about the job says where it is in a `Job-Status` header, as its body's `status` does:
 * `queued` or `running`, then `completed` or `failed` on its final answer, which every later poll gets
 * again. An answer without it is not the job's: the 404 above, a 503 while the queue is unreachable
 * (Retry-After; the job is unaffected), a proxy's 502/503/504. So a poller asks again on a 502/503/504
 * without Job-Status, and takes one with it (a handler's UnavailableError is a 503) as the job's failure.
 * Part of your project: edit freely.
 */
import { timingSafeEqual } from "node:crypto";
import {
  type AgentError,
  DeadlineError,
  errorResponse,
  UnavailableError,
  ValidationError,
} from "../errors.js";
import type { HttpAnswer } from "../http/answer.js";
import { deadlinePassed } from "../jobs/deadline.js";
import type { JobServices } from "../jobs/pipeline.js";
import { SERVICE_VERSION } from "../jobs/request.js";
import { settlingKey } from "../jobs/settling.js";
import { withJobId } from "../jobs/result.js";
import type { FoundResult, StoredResult } from "../ledger/ledger.js";
import type { Logger } from "../types.js";
import { cancelledError, cancelRequested } from "./cancel.js";
import type { JobQueue, JobRecord } from "./queue.js";

const ID = /^job_[0-9a-f]{32}$/;
const NO_STORE = { "Cache-Control": "no-store" } as const;
/** The header naming the job's state on every answer about it (never on a 404 or an outage's 503). */
const JOB_STATUS = "Job-Status";

const error = (err: AgentError): HttpAnswer => {
  const { status, body } = errorResponse(err);
  const wait = err instanceof UnavailableError ? err.retryAfterSeconds : 0;
  const headers = wait > 0 ? { ...NO_STORE, "Retry-After": String(wait) } : NO_STORE;
  return { status, headers, body: JSON.stringify(body) };
};

/** The same answer for an unknown job and a wrong credential: nothing tells them apart. */
const notFound = (id: string): HttpAnswer =>
  error(
    new ValidationError(
      `no job ${ID.test(id) ? id : "with this id"} for this credential: send the job_token of its 202 as Authorization: Bearer <job_token> (answers are kept JOB_RESULT_TTL_SECONDS)`,
      { status: 404 },
    ),
  );

/** The credential a poll sent: `Authorization: Bearer <job_token>`. */
function tokenMatches(expected: string, authorization: string | undefined): boolean {
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (sent === undefined) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Seconds to wait before polling again: sooner for a job due soon. */
function retryAfter(deadline: number): string {
  const left = deadline - Date.now() / 1000;
  return String(Math.min(30, Math.max(1, Math.round(left / 30))));
}

const pending = (record: JobRecord, status: "queued" | "running"): HttpAnswer => ({
  status: 200,
  headers: { ...NO_STORE, "Retry-After": retryAfter(record.data.deadline), [JOB_STATUS]: status },
  body: JSON.stringify({ service_version: SERVICE_VERSION, job_id: record.data.jobId, status }),
});

/** The job's final answer, saying it is: a poller stops at it, whatever its status (a 503 too). */
const final = (answer: HttpAnswer): HttpAnswer => ({
  ...answer,
  headers: { ...answer.headers, [JOB_STATUS]: answer.status === 200 ? "completed" : "failed" },
});

/**
 * The poll's answer. The queue unreachable (Redis away) is a 503 with Retry-After: the job itself is
 * unaffected (it runs, and is charged if it completes), so the poller asks again; never the 500 that
 * says a job failed.
 */
export async function pollJob(
  s: JobServices,
  queue: JobQueue,
  id: string,
  authorization: string | undefined,
  logger: Logger,
): Promise<HttpAnswer> {
  try {
    const record = ID.test(id) ? await queue.get(id) : undefined;
    if (!record || !tokenMatches(record.data.token, authorization)) return notFound(id);
    const state = await jobState(s, queue, record, logger);
    if (state === "cancelled") return final(error(cancelledError()));
    return typeof state === "string" ? pending(record, state) : final(state);
  } catch (err) {
    logger.warn("a job's poll could not read the job queue", { error: String(err) });
    return error(new UnavailableError(UNREACHABLE, 2));
  }
}

const UNREACHABLE =
  "the job queue is unreachable right now: the job is unaffected (it is charged only if it completes); poll again";

/**
 * Where a job is (GET /jobs/<id>, and an A2A task on the queue through JobServices.asyncJobs):
 * waiting or running, cancelled (cancel.ts), or its answer. What the ledger recorded as charged
 * for its payment and request comes first: a charge is never hidden.
 */
export async function jobState(
  s: JobServices,
  queue: JobQueue,
  record: JobRecord,
  logger: Logger,
): Promise<"queued" | "running" | "cancelled" | StoredResult> {
  const { paid } = record.data;
  if (paid) {
    const found = await s.ledger.getResult(paid.auth).catch(() => undefined);
    if (found && found.payment === paid.payment && found.request === paid.request) {
      if (found.settled) return settledAnswer(found.value, record.data.jobId);
      // Settling: asked about now, as an identical retry would; "running" until it is decided.
      if (found.unconfirmed)
        return (await decidedNow(s, paid.auth, found, record.data.jobId, logger)) ?? "running";
    }
  }
  if (await cancelRequested(s, record.data.id).catch(() => false)) return "cancelled";
  if (record.state === "done" && record.answer) return record.answer;
  if (record.state === "queued" && deadlinePassed(record.data.deadline))
    return error(
      new DeadlineError(
        `deadline ${record.data.deadline} passed while the job was queued; the handler was not run and nothing was charged`,
      ),
    );
  if (await orphaned(s, queue, record))
    return error(
      new DeadlineError(
        `deadline ${record.data.deadline} passed and no worker is running: the job's worker stopped before it answered (killed, or cut off from the queue); no settlement of it was started, so nothing was charged`,
      ),
    );
  return record.state === "running" ? "running" : "queued";
}

/**
 * A job still "running" after its deadline and JOB_LOCK_SECONDS more, while no worker counts
 * (worker-alive.ts): its only worker was killed or cut off. Nothing answers it until a worker starts,
 * and that one refuses it (its deadline passed), so it is answered as failed now, but only once the
 * ledger shows that no settlement of it was started (no result, no settlement's note: a worker killed
 * while settling leaves one, jobs/settling.ts). Anything the queue or the ledger cannot say keeps it
 * "running".
 */
async function orphaned(s: JobServices, queue: JobQueue, record: JobRecord): Promise<boolean> {
  const { deadline, paid } = record.data;
  if (record.state !== "running") return false;
  if (!deadlinePassed(deadline + (s.config.queue?.lockSeconds ?? 0))) return false;
  try {
    if (await queue.workerSeen()) return false;
    if (!paid) return true;
    const { ledger } = s;
    if (!ledger.getRecord) return false;
    // Read again, after the worker check, not jobState's earlier read: a worker that settled the job
    // and exited in between has written its result by now, and the job must not be said uncharged.
    const [found, note] = await Promise.all([
      ledger.getResult(paid.auth),
      ledger.getRecord(settlingKey(paid.auth)),
    ]);
    return found === undefined && !note;
  } catch {
    return false;
  }
}

/**
 * A job whose settlement is unconfirmed, polled: its poller waits for the answer, so the chain (or
 * the facilitator, which may be asked to settle it again) is asked now (jobs/reconcile.ts). The
 * answer once decided, else undefined.
 */
async function decidedNow(
  s: JobServices,
  auth: string,
  found: FoundResult,
  jobId: string,
  logger: Logger,
): Promise<HttpAnswer | undefined> {
  if (!s.gate) return undefined;
  const { resolveUnconfirmed } = await import("../jobs/reconcile.js");
  const resolved = await resolveUnconfirmed(
    { ...s, gate: s.gate },
    auth,
    found,
    logger,
    true,
  ).catch(
    () => undefined, // the ledger away: still "running", asked again at the next poll
  );
  if (resolved?.status !== "confirmed" && resolved?.status !== "failed") return undefined;
  const decided = await s.ledger.getResult(auth);
  return decided?.settled ? settledAnswer(decided.value, jobId) : undefined;
}

/** The ledger's charged answer, naming this job's job_id (the identical request may have made it under another). */
function settledAnswer(stored: StoredResult, jobId: string): HttpAnswer {
  const body = stored.status === 200 ? withJobId(stored.body, jobId) : stored.body;
  return { ...stored, body, headers: { ...stored.headers, ...NO_STORE } };
}
