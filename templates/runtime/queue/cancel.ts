/**
 * Cancelling a queued job (A2A's CancelTask on a task that runs on the queue: a2a/queued.ts): a
 * mark in the ledger's records, shared by every instance and worker, that the worker reads before
 * it runs the handler, while it runs (its ctx.signal aborts: watchCancel) and, under the lock its
 * settlement takes, just before it settles (work.ts). A cancel takes that same lock and first looks
 * whether the job was charged, so one of the two wins: a job cancelled is never charged, and a job
 * charged first is not cancelled (its result stands). The same lock keeps a worker that finds the
 * job's payment used from taking over a settlement a live twin is still sending (refusedUnlessSettled).
 * Part of your project: edit freely.
 */
import { type PaymentError, UnavailableError } from "../errors.js";
import type { JobAnswer } from "../jobs/outcome.js";
import type { PaidJob } from "../jobs/paid-steps.js";
import type { JobServices } from "../jobs/services.js";
import { type StoredAnswers, storedAnswers } from "../jobs/stored-answer.js";
import { LedgerUnavailableError } from "../ledger/ledger.js";
import type { PaidPayment } from "../types.js";
import type { JobQueue, QueuedPayment } from "./queue.js";

/** How often a running job looks whether it was cancelled. */
const CANCEL_CHECK_MS = 500;
/** Added to the settlement timeout for the lock one settlement (or one cancel) holds. */
const SETTLE_LOCK_MARGIN_MS = 10_000;
/** How long a cancel mark is kept after the job's deadline (as long as a finished A2A task). */
const MARK_KEPT_MS = 24 * 3600 * 1000;

const markKey = (id: string): string => `job-cancel:${id}`;

/** The lock a paid queued job's settlement and its cancel take, and how long one holds it. */
export function settleLock(s: JobServices, paid: QueuedPayment): [string, number] {
  const settleMs = (s.config.payment?.settleTimeoutSeconds ?? 0) * 1000;
  return [`async-settle:${paid.auth}`, settleMs + SETTLE_LOCK_MARGIN_MS];
}

/** Whether the job was cancelled (throws when the ledger cannot say: nothing is settled then). */
export async function cancelRequested(s: JobServices, id: string): Promise<boolean> {
  return (await s.ledger.getRecord?.(markKey(id))) !== undefined;
}

/** What a cancelled job answers (never seen by its A2A caller, whose task says canceled). */
export const cancelledError = (): UnavailableError =>
  new UnavailableError("the caller cancelled the job; nothing was charged", 0);

/** Cancels job `id` unless it ended (settled or answered): see the header. */
export async function cancelJob(
  s: JobServices,
  queue: JobQueue,
  id: string,
): Promise<"cancelled" | "ended" | "unknown"> {
  const record = await queue.get(id);
  if (!record) return "unknown";
  // A ledger of your own without records cannot share a cancel: the job runs to its end.
  const { putRecord } = s.ledger;
  if (record.state === "done" || !putRecord) return "ended";
  const ttlMs = Math.max(0, record.data.deadline * 1000 - Date.now()) + MARK_KEPT_MS;
  const mark = async () => {
    await putRecord.call(s.ledger, markKey(id), "cancelled", ttlMs);
    return "cancelled" as const;
  };
  const paid = record.data.paid;
  if (!paid) return mark();
  const [lock, holdMs] = settleLock(s, paid);
  return s.ledger.exclusive(lock, holdMs, async () => {
    const found = await s.ledger.getResult(paid.auth);
    const ours = found?.payment === paid.payment && found.request === paid.request;
    if (ours && (found.settled || found.unconfirmed)) return "ended"; // charged, or being charged
    return mark();
  });
}

/** A signal that aborts once the job is cancelled, looked at every CANCEL_CHECK_MS until stop(). */
export function watchCancel(s: JobServices, id: string): { signal: AbortSignal; stop(): void } {
  const cancelled = new AbortController();
  const timer = setInterval(() => {
    cancelRequested(s, id).then(
      (yes) => yes && cancelled.abort(cancelledError()),
      () => undefined, // looked at again, and before settling
    );
  }, CANCEL_CHECK_MS);
  timer.unref();
  return { signal: cancelled.signal, stop: () => clearInterval(timer) };
}

/**
 * Refused, unless this job's settlement was written down and never recorded (a worker died settling
 * it: jobs/settling.ts): that answer. A twin still settling it (a stalled but live worker) holds the
 * job's settle lock: waited for, its recorded answer is the job's.
 */
export async function refusedUnlessSettled(
  p: PaidJob,
  paid: QueuedPayment,
  error: PaymentError,
): Promise<JobAnswer> {
  const { ledger } = p.s;
  const [lock, lockMs] = settleLock(p.s, paid);
  const own = () =>
    ledger.exclusive(lock, lockMs, async () => {
      if (await ledger.renew(paid.auth, paid.reservation, lockMs)) return true;
      return (await ledger.reserve(paid.auth, lockMs)).status === "reserved";
    });
  return storedAnswers(p, paid.sent).refused(paid.auth, error, false, own);
}

/**
 * `settle`'s answer, under the job's settle lock (a cancel takes it too: cancelled before now, the
 * job is never settled); the ledger's answer if another attempt recorded one; undefined when the
 * lock could not be taken (the ledger unreachable): nothing was settled.
 */
export async function underSettleLock(
  p: PaidJob,
  paid: QueuedPayment,
  id: string,
  payment: PaidPayment,
  settle: (stored: StoredAnswers) => Promise<JobAnswer>,
): Promise<JobAnswer | undefined> {
  const [lock, lockMs] = settleLock(p.s, paid);
  let locked = false;
  try {
    return await p.s.ledger.exclusive(lock, lockMs, async () => {
      locked = true;
      const stored = storedAnswers(p, paid.sent);
      const again = await stored.lookup(paid.auth, payment);
      if (again) return again;
      if (await cancelRequested(p.s, id)) throw cancelledError();
      return settle(stored);
    });
  } catch (err) {
    if (locked || !(err instanceof LedgerUnavailableError)) throw err;
    p.logger.error("payment ledger unreachable: the job's settle lock was not taken", {
      error: String(err),
    });
    return undefined;
  }
}
