/**
 * The worker's side of an async job: the pipeline's steps after the 202 (jobs/handler.ts,
 * jobs/result.ts, jobs/paid.ts's settleAnswer), on the reservation made at acceptance (accept.ts):
 *   - the deadline is the job's: one passed while it waited runs nothing and charges nothing;
 *   - the payment is verified again and its chain state confirmed, then the handler runs under the
 *     deadline, and its output is serialized and validated;
 *   - only then is it settled, and the answer kept with the settlement in the ledger in the same
 *     step (what GET /jobs/<id> reads first); a failed job, a broken output or a missed deadline
 *     moves nothing and frees the authorization.
 * A job run again (its first worker died, or the ledger was away when it was to settle) may run its
 * handler twice, but the ledger decides the charge: under the ledger's lock for this authorization,
 * an answer already settled is taken as it is, and nothing is settled twice. A job cancelled (an A2A
 * CancelTask: cancel.ts) runs no handler, or has its ctx.signal aborted, and is never settled.
 * Part of your project: edit freely.
 */
import { AgentError, errorResponse, InternalError, UnavailableError } from "../errors.js";
import { httpAnswer } from "../http/answer.js";
import { checkArrival, type HandlerRun, startHandler } from "../jobs/handler.js";
import { type JobAnswer, outcomeOf, refusedBy } from "../jobs/outcome.js";
import { settleAnswer } from "../jobs/paid.js";
import { endPaymentId } from "../jobs/identifier.js";
import {
  answerOf,
  confirm,
  leaseMsFor,
  type PaidJob,
  refuse,
  startPaidHandler,
  verify,
} from "../jobs/paid-steps.js";
import type { JobServices } from "../jobs/pipeline.js";
import { findCapability, type JobRequest, validateInput } from "../jobs/request.js";
import { completedBody } from "../jobs/result.js";
import { storedAnswers } from "../jobs/stored-answer.js";
import type { StoredResult } from "../ledger/ledger.js";
import { holdReservation } from "../ledger/reservation.js";
import { PaymentError } from "../errors.js";
import type { AsyncJobState } from "../ops/metrics.js";
import type { Logger } from "../types.js";
import {
  cancelledError,
  cancelRequested,
  refusedUnlessSettled,
  underSettleLock,
  watchCancel,
} from "./cancel.js";
import { type QueuedJob, type QueuedPayment, RunAgainLater } from "./queue.js";

/** Headers a finished job's answer keeps: the settlement's receipt only (no new offer to pay). */
const KEPT_HEADERS = new Set(["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"]);

export interface WorkOptions {
  /** A job cut by a shutdown goes back to the queue (BullMQ) instead of failing (in-process). */
  requeue: boolean;
}

/** Runs one queued job to its answer, as POST /execute would have sent it. */
export async function runQueuedJob(
  s: JobServices,
  data: QueuedJob,
  logger: Logger,
  options: WorkOptions,
): Promise<StoredResult> {
  const started = Date.now();
  const log = logger.child({ job_id: data.jobId, capability: data.capability, queue_id: data.id });
  const ended = measured(s, data, started);
  const leave = s.drain.enter();
  const cancel = watchCancel(s, data.id);
  let answer: JobAnswer;
  try {
    answer = await run(s, data, log, { ...options, cancel: cancel.signal });
  } catch (err) {
    if (err instanceof RunAgainLater) throw err; // not ended: back to the queue
    if (!(err instanceof AgentError))
      log.error("unexpected error running an async job", { error: String(err) });
    answer = refusedBy(err instanceof AgentError ? err : new InternalError("pipeline error"));
  } finally {
    cancel.stop();
    leave();
  }
  const id = data.paid?.paymentId;
  if (id) await endPaymentId(s.ledger, id, answer).catch((err) => idNotEnded(s, log, err));
  const written = httpAnswer(answer, s.gate);
  const headers = Object.fromEntries(
    Object.entries(written.headers).filter(([name]) => KEPT_HEADERS.has(name)),
  );
  log.info("async job finished", { status: written.status, ms: Date.now() - started });
  ended(written.status === 200 ? "completed" : "failed");
  s.metrics.job(data.capability, outcomeOf(answer));
  return {
    status: written.status,
    headers: { ...headers, "Cache-Control": "no-store" },
    body: written.body,
  };
}

/** The payment id's claim could not be ended: its lease frees it (the answer is in the job's record). */
function idNotEnded(s: JobServices, log: Logger, err: unknown): void {
  s.metrics.ledgerError("end a payment id's claim");
  log.error("payment ledger: could not end a payment id's claim", { error: String(err) });
}

/** Its metrics: time queued now, then how it ended (a metrics error never fails the job). */
function measured(
  s: JobServices,
  data: QueuedJob,
  started: number,
): (state: AsyncJobState) => void {
  const safe = <T,>(call: () => T): T | undefined => {
    try {
      return call();
    } catch {
      return undefined;
    }
  };
  const waited = (started - (data.queuedAt ?? started)) / 1000;
  const end = safe(() => s.metrics.asyncJobStarted?.(data.capability, waited));
  return (state) => void safe(() => end?.(state));
}

/** WorkOptions, and the signal that aborts when the job is cancelled. */
type RunOptions = WorkOptions & { cancel: AbortSignal };

async function run(
  s: JobServices,
  data: QueuedJob,
  logger: Logger,
  options: RunOptions,
): Promise<JobAnswer> {
  const capability = findCapability(s.agent, data.capability);
  const input = validateInput(capability, data.input as Record<string, unknown>);
  const job: JobRequest = {
    jobId: data.jobId,
    capability: data.capability,
    input: input as Record<string, unknown>,
    deadline: data.deadline,
  };
  if (s.gate && data.paid) {
    const p: PaidJob = {
      s: { ...s, gate: s.gate },
      call: {
        payment: { sent: () => data.paid!.sent, required: "" },
        resourceUrl: () => data.paid!.resourceUrl,
        cancel: options.cancel,
      },
      job,
      capability,
      input,
      logger,
    };
    return runPaid(p, data, options);
  }
  // Never run work nobody paid for: a job queued in dev mode reaches a production worker unpaid, or
  // a paid one a dev-mode worker, which would never settle it (their queues differ: queue.ts).
  if (s.gate) throw new InternalError("the job was queued without a payment");
  if (data.paid)
    throw new InternalError("a paid job reached a dev-mode worker, which cannot settle it");
  checkArrival(job);
  if (await cancelRequested(s, data.id)) throw cancelledError();
  const run = startHandler(job, capability, input, {
    logger,
    metrics: s.metrics,
    cut: s.drain.cut,
    cancel: options.cancel,
  });
  const output = await run.result;
  const body = completedBody(job.jobId, capability, output, {
    devMode: true,
    maxOutputBytes: s.config.maxOutputBytes,
    logger,
  });
  return { kind: "completed", body };
}

/** A paid job on its reservation: settled only once its answer is ready, at most once. */
async function runPaid(p: PaidJob, data: QueuedJob, options: WorkOptions): Promise<JobAnswer> {
  const { s } = p;
  const paid = data.paid!;
  // Another worker finished it already (this one got it again after a stall): the ledger's answer.
  const decided = await storedAnswers(p, paid.sent).lookup(paid.auth);
  if (decided) return decided;
  const freeNow = () => s.ledger.release(paid.auth, paid.reservation).catch(() => undefined);
  try {
    checkArrival(p.job); // a deadline passed while queued: nothing runs, nothing is charged
    if (await cancelRequested(s, data.id)) throw cancelledError(); // cancelled while queued
  } catch (err) {
    await freeNow();
    throw err;
  }
  const payment = await verify(p, paid.sent);
  if (payment instanceof PaymentError) {
    const answer = await refusedUnlessSettled(p, paid, payment);
    await freeNow();
    return answer;
  }
  // Still this job's: an attempt that failed and freed it (then died before saying so) leaves it
  // to whatever the payer sends next, so this one runs nothing.
  const leaseMs = leaseMsFor(p, payment);
  if (!(await stillReserved(p, paid, leaseMs, options)))
    return refuse(p, reservationEnded(), false);
  const hold = holdReservation(s.ledger, paid.auth, paid.reservation, {
    leaseEndsAt: Date.now() + leaseMs,
    logger: p.logger,
    metrics: s.metrics,
  });
  let run: HandlerRun | undefined;
  let requeued = false;
  try {
    const refused = await confirm(p, payment);
    if (refused) return await refusedUnlessSettled(p, paid, refused);
    run = startPaidHandler(p, payment);
    const body = await settledElsewhereOr(p, paid, () =>
      cutOrResult(p, run!, options, () => (requeued = true)).then((output) => answerOf(p, output)),
    );
    if (typeof body !== "string") return body;
    const settled = await underSettleLock(p, paid, data.id, payment, (stored) =>
      settleAnswer(p, stored, hold, payment, body),
    );
    if (settled) return settled;
    requeued = options.requeue; // no lock (the ledger away), nothing settled: the reservation stays
    throw ledgerAway(p, options, "the job ran, but could not be settled");
  } finally {
    // Requeued: the reservation stays for the worker that runs it next (it holds it until the deadline).
    if (!requeued) {
      if (run?.isRunning() && !s.drain.cut.aborted) hold.releaseAfter(run.stopped);
      else await hold.release();
    }
  }
}

/**
 * This attempt's answer body; when it failed, the answer another attempt settled meanwhile (a worker
 * that lost its lock but lived on): a charge the ledger recorded is what the job answers.
 */
async function settledElsewhereOr(
  p: PaidJob,
  paid: QueuedPayment,
  attempt: () => Promise<string>,
): Promise<string | JobAnswer> {
  try {
    return await attempt();
  } catch (err) {
    if (err instanceof RunAgainLater) throw err;
    const settled = await storedAnswers(p, paid.sent)
      .lookup(paid.auth)
      .catch(() => undefined);
    if (settled) return settled;
    throw err;
  }
}

/** Whether the reservation made at acceptance is still this job's (renewed for `leaseMs` if so). */
async function stillReserved(
  p: PaidJob,
  paid: QueuedPayment,
  leaseMs: number,
  options: WorkOptions,
): Promise<boolean> {
  try {
    return await p.s.ledger.renew(paid.auth, paid.reservation, leaseMs);
  } catch (err) {
    throw ledgerAway(p, options, "the job could not run", err);
  }
}

/** The ledger unreachable: back to the queue (BullMQ), or the job's answer (in-process). */
function ledgerAway(p: PaidJob, options: WorkOptions, what: string, err?: unknown): Error {
  p.logger.error(`payment ledger unreachable: ${what}`, { error: String(err ?? "no lock") });
  if (options.requeue) return new RunAgainLater("payment ledger unreachable");
  return new UnavailableError(`the payment ledger is unreachable, so ${what}; nothing charged`, 5);
}

const reservationEnded = (): PaymentError =>
  new PaymentError(
    "this job's payment reservation ended before it could run (an earlier attempt failed and freed it); nothing was run or charged: send the job again",
    { code: "reservation_ended" },
  );

/** The handler's output; a shutdown that cut it sends the job back to the queue when it can. */
async function cutOrResult(
  p: PaidJob,
  run: HandlerRun,
  options: WorkOptions,
  requeued: () => void,
): Promise<unknown> {
  try {
    return await run.result;
  } catch (err) {
    if (err instanceof UnavailableError && p.s.drain.cut.aborted && options.requeue) {
      requeued();
      p.logger.warn("async job cut by a shutdown: back to the queue for another worker", {
        error: errorResponse(err).body.error,
      });
      throw new RunAgainLater("cut by a shutdown");
    }
    throw err;
  }
}
