/**
 * POST /execute with `Prefer: respond-async` (RFC 7240): everything a synchronous job checks before
 * its handler runs, with the pipeline's own steps (jobs/request.ts, jobs/paid-steps.ts): the
 * request, the capability, the input, then the payment (verified, its authorization reserved in
 * the ledger for this job, its chain state confirmed, its payment-identifier id, if any, claimed for
 * it: jobs/identifier.ts) and the deadline on arrival. A new job needs a running worker
 * (worker-alive.ts): on a web instance without its own (WORKER=off) and no `npm run worker` alive,
 * it is refused (503, Retry-After; nothing reserved, run or charged) instead of waiting for nobody
 * until its deadline: before its offer when it came without payment; once its payment is verified
 * otherwise, so that an identical retry still gets its job (its 202 lost) or its kept answer. Then the job is
 * queued and the caller gets 202 with where to poll (Location) and the read credential
 * (`job_token`). Nothing is charged here: the worker settles only once the job completed and its
 * output passed validation (work.ts). The reservation, made here, is the worker's to end: it lasts
 * until the deadline plus the settlement time, so the payment runs no other job meanwhile.
 * Part of your project: edit freely.
 */
import { createHash, randomBytes } from "node:crypto";
import { AgentError, InternalError, PaymentError, UnavailableError } from "../errors.js";
import { httpAnswer, type HttpAnswer } from "../http/answer.js";
import { paymentHash, requestHash } from "../jobs/identity.js";
import { checkArrival } from "../jobs/handler.js";
import { notOurs } from "../jobs/ledger-step.js";
import { type JobAnswer, outcomeOf, refusedBy } from "../jobs/outcome.js";
import { confirm, leaseMsFor, ledgerStep, type PaidJob, refuse } from "../jobs/paid-steps.js";
import { verifiedPayment } from "../jobs/paid.js";
import { claimPaymentId } from "../jobs/identifier.js";
import { familyById } from "../payments/families.js";
import type { JobCall, JobServices } from "../jobs/pipeline.js";
import { findCapability, parseRequest, SERVICE_VERSION, validateInput } from "../jobs/request.js";
import type { PaidPayment } from "../types.js";
import { JOBS_PATH, type JobQueue, type QueuedJob, type QueuedPayment } from "./queue.js";

/**
 * The job's URL id: one per payment, job_id and request (paid), so an identical retry finds the same
 * job, and another request under the same job_id (after a failed attempt freed the payment) another.
 */
export function queueIdOf(auth: string | undefined, jobId: string, request = ""): string {
  if (auth === undefined) return `job_${randomBytes(16).toString("hex")}`; // unpaid: a new job each time
  return `job_${createHash("sha256").update(`${auth}\n${jobId}\n${request}`).digest("hex").slice(0, 32)}`;
}

/**
 * The 202: where to poll, and the credential that reads it (never logged). It is an answer about the
 * job, so it carries Job-Status as its body's `status` (as every poll's answer does: poll.ts).
 */
function accepted(job: QueuedJob): HttpAnswer {
  return {
    status: 202,
    headers: {
      Location: `${JOBS_PATH}/${job.id}`,
      "Preference-Applied": "respond-async",
      "Retry-After": "1",
      "Cache-Control": "no-store",
      "Job-Status": "queued",
    },
    body: JSON.stringify({
      service_version: SERVICE_VERSION,
      job_id: job.jobId,
      status: "queued",
      job_token: job.token,
    }),
  };
}

/** A payment whose family says it cannot wait for its job (a Solana one: its blockhash dies) is refused. */
function asyncRefusal(payment: PaidPayment): PaymentError | undefined {
  const why = familyById(payment.family).cannotWait;
  if (why === undefined) return undefined;
  return new PaymentError(
    `asynchronous jobs (Prefer: respond-async) ${why}; nothing was run or charged: send the job without Prefer: respond-async, or pay on another network`,
    { code: "async_network" },
  );
}

/** Queues the job: 202, or what the synchronous job would have answered instead (402, 400, 503...). */
export async function acceptJob(
  s: JobServices,
  queue: JobQueue,
  call: JobCall,
): Promise<HttpAnswer> {
  const got = await queueJob(s, queue, call);
  return "kind" in got ? httpAnswer(got, s.gate) : accepted(got);
}

/**
 * Queues the job (POST /execute's async branch, and A2A's return_immediately through
 * JobServices.asyncJobs): the job queued, or the answer it gets instead (an offer, a refusal).
 */
export async function queueJob(
  s: JobServices,
  queue: JobQueue,
  call: JobCall,
): Promise<QueuedJob | JobAnswer> {
  let answer: JobAnswer | QueuedJob;
  const seen: { capability?: string } = {};
  try {
    answer = await accept(s, queue, call, seen);
  } catch (err) {
    answer = refusedBy(
      err instanceof AgentError
        ? err
        : new InternalError("could not queue the job", { cause: err }),
    );
    if (!(err instanceof AgentError))
      call.logger.error("could not queue an async job", { error: String(err) });
  }
  if (!("kind" in answer)) return answer; // queued: counted in agent_jobs_total when it ends (work.ts)
  s.metrics.job(seen.capability ?? "(unknown)", outcomeOf(answer));
  return answer;
}

async function accept(
  s: JobServices,
  queue: JobQueue,
  call: JobCall,
  seen: { capability?: string },
): Promise<JobAnswer | QueuedJob> {
  const job = parseRequest(call.body, { maxDeadlineSeconds: s.config.maxDeadlineSeconds });
  const capability = findCapability(s.agent, job.capability);
  seen.capability = capability.name;
  const logger = call.logger.child({ job_id: job.jobId, capability: job.capability });
  const input = validateInput(capability, job.input);
  const working = await reachQueue(() => queue.workerSeen());
  const base = {
    jobId: job.jobId,
    capability: job.capability,
    input,
    deadline: job.deadline,
    queuedAt: Date.now(),
  };
  const token = randomBytes(32).toString("base64url");
  if (!s.gate) {
    // Dev mode: nothing to pay; the job is queued as it is.
    if (!working) throw noWorker();
    checkArrival(job);
    const queued: QueuedJob = { ...base, id: queueIdOf(undefined, job.jobId), token };
    await enqueue(queue, queued);
    logger.info("async job queued", { queue_id: queued.id });
    return queued;
  }
  // Without a payment, the job would get an offer it could not use yet.
  if (!working && call.payment.sent() === undefined) throw noWorker();
  const p: PaidJob = { s: { ...s, gate: s.gate }, call, job, capability, input, logger };
  return acceptPaid(p, queue, { ...base, token }, working);
}

/** A paid job: verified, reserved, confirmed, then queued (or what the synchronous job answers). */
async function acceptPaid(
  p: PaidJob,
  queue: JobQueue,
  base: Omit<QueuedJob, "id" | "paid">,
  working: boolean,
): Promise<JobAnswer | QueuedJob> {
  const { s, job, input } = p;
  // Verified, or the answer instead (an offer, a refusal, or an identical request's kept answer).
  const verified = await verifiedPayment(p);
  if ("kind" in verified) return verified;
  const { sent, payment } = verified;
  const refusal = asyncRefusal(payment);
  if (refusal) return refuse(p, refusal, false);
  const auth = s.gate.replayKey(payment);

  const ids = { payment: paymentHash(sent), request: requestHash(job.capability, input) };
  const id = queueIdOf(auth, job.jobId, ids.request);
  // The identical request again (its 202 was lost): the same job, with its credential.
  const existing = await reachQueue(() => queue.get(id));
  if (existing?.data.paid?.payment === ids.payment && existing.data.paid.request === ids.request)
    return existing.data;
  // A new job no worker would run: refused before anything is claimed or reserved (the same
  // payment is good once one runs). An identical request's job or kept answer is still given above.
  if (!working) return refusedBy(noWorker());

  // A payment-identifier id pays for one request: claimed for this job, which its worker ends.
  const paymentId = await claimPaymentId(p);
  if (paymentId && "kind" in paymentId) return paymentId;
  const paid = { sent, auth, ...ids, ...(paymentId && { paymentId }) };
  let answer: JobAnswer | QueuedJob | undefined;
  try {
    answer = await reserveAndQueue(p, queue, { ...base, id }, payment, paid);
    return answer;
  } finally {
    // Not queued: the id may pay for another attempt.
    if ((!answer || "kind" in answer) && paymentId)
      await s.ledger.release(paymentId.key, paymentId.token).catch(() => undefined);
  }
}

/** One authorization, one job: reserved until the deadline plus the settlement (the worker ends it), then queued. */
async function reserveAndQueue(
  p: PaidJob,
  queue: JobQueue,
  job: Omit<QueuedJob, "paid">,
  payment: PaidPayment,
  paid: Omit<QueuedPayment, "reservation" | "resourceUrl">,
): Promise<JobAnswer | QueuedJob> {
  const { s } = p;
  const leaseMs = leaseMsFor(p, payment);
  const claim = await ledgerStep(p, "reserve the authorization", () =>
    s.ledger.reserve(paid.auth, leaseMs),
  );
  if (claim.status !== "reserved") return refuse(p, notOurs(claim.status));
  const release = () => s.ledger.release(paid.auth, claim.token).catch(() => undefined);
  try {
    const refused = await confirm(p, payment);
    if (refused) {
      await release();
      return refuse(p, refused);
    }
    checkArrival(p.job);
    const reservation = claim.token;
    const queued: QueuedJob = {
      ...job,
      paid: { ...paid, resourceUrl: p.call.resourceUrl(), reservation },
    };
    await enqueue(queue, queued);
    p.logger.info("async job queued", { queue_id: job.id });
    return queued;
  } catch (err) {
    await release();
    throw err;
  }
}

/** Seconds a caller is asked to wait when no worker runs (a worker counts from its first beat). */
const NO_WORKER_RETRY_AFTER_SECONDS = 5;

/** No worker takes the queue's jobs (none started, all stopped, or cut off from Redis): a 503. */
function noWorker(): UnavailableError {
  return new UnavailableError(
    `no worker is running for async jobs, so the job was not queued; nothing was run or charged: start one with npm run worker, or send the job without Prefer: respond-async (A2A: without return_immediately) to run it now; retry in ${NO_WORKER_RETRY_AFTER_SECONDS} s`,
    NO_WORKER_RETRY_AFTER_SECONDS,
    { code: "no_worker" },
  );
}

/** A queue that cannot be reached is a 503 (nothing run or charged). */
export async function reachQueue<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new UnavailableError(
      "the job queue is unreachable, so the job was not queued; nothing was run or charged; retry in 5 s",
      5,
      { cause: err },
    );
  }
}

/**
 * Adds the job; a job already there under its id (the same payment, job_id and request, sent
 * otherwise: as a header, then as MCP's payload) keeps it, and this one is refused. An unpaid job's id
 * is random (queueIdOf): nothing can be under it, so it is not read back.
 */
async function enqueue(queue: JobQueue, job: QueuedJob): Promise<void> {
  const token = await reachQueue(() => queue.add(job, job.paid === undefined));
  if (token !== undefined && token !== job.token)
    throw new PaymentError(
      `job_id ${JSON.stringify(job.jobId)} with this payment already names a queued job (the same request, its payment sent otherwise), so nothing more was queued or charged: send it as first sent to get that job, or use another job_id`,
      { code: "job_id_reused" },
    );
}
