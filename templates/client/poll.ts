/**
 * Async jobs (`{ async: true }`): the service answered POST /execute with 202 (it queued the job, `Prefer:
 * respond-async`); its answer is fetched from the 202's `Location` with its `job_token` (`Authorization:
 * Bearer`), until it is no longer "queued" or "running". Waits start at 1 s and grow 1.5x up to 15 s, never
 * sooner than the service's Retry-After; polling stops at the deadline plus a minute. A poll with no answer
 * (the network, or 502/503/504: a restart, a deploy) is asked again until then: the job runs on whatever the
 * poll meets. Not the job's own answer: the service marks every answer about the job with `Job-Status`, so a
 * 503 with `Job-Status: failed` (its handler's UnavailableError) is the job's failure, returned at once. A
 * poll answered 404 means the service lost the job (it restarted with an empty queue, or its Redis did): the
 * job's request is sent again, once, identically (`resend`: the same payment, settled at most once); the
 * service answers it from its ledger (the result and receipt of a job that completed) or queues it again,
 * polled as before. When polling stops before the answer, the error's `queued` says where to fetch it later.
 * The token goes only to the service's own origin. A poll is a GET: nothing is signed or paid again.
 */
import { AgentCallError } from "./errors.js";
import { type FetchLike, isJobAnswer, retryAfterMs } from "./retry.js";

const POLL_FIRST_MS = 1_000;
const POLL_FACTOR = 1.5;
const POLL_MAX_MS = 15_000;
/** A longer Retry-After is cut to this. */
const POLL_MAX_RETRY_AFTER_MS = 60_000;
/** Poll answers that say "not now", unless they carry a final Job-Status (isJobAnswer). */
const ASK_AGAIN = new Set([502, 503, 504]);

export interface PollJob {
  /** The POST /execute URL the 202 answered. */
  url: string;
  /** Sends each poll (the retrying fetch: a lost poll is asked again). */
  send: FetchLike;
  /** Stop polling at this time (ms since the epoch). */
  untilMs: number;
  signal?: AbortSignal | undefined;
  capability: string;
  jobId: string;
  /** Sends the job's request again, identically (the same payment); undefined when none was sent. */
  resend?: () => Promise<Response> | undefined;
}

/** The job's final answer (a result or an error body), as POST /execute would have sent it. */
export async function pollAccepted(accepted: Response, job: PollJob): Promise<Response> {
  let target = await pollTarget(accepted, job);
  try {
    let resend = job.resend;
    let wait = Math.max(POLL_FIRST_MS, retryAfterMs(accepted) ?? 0);
    let backoff = POLL_FIRST_MS;
    for (;;) {
      if (Date.now() + wait > job.untilMs)
        throw new AgentCallError(
          `the queued job at ${target.url.href} had no answer by its deadline plus a minute; polling stopped (the payment is settled only if it completes; its answer is kept for a while: see this error's queued)`,
          { errorType: "deadline", capability: job.capability, jobId: job.jobId },
        );
      await pause(wait, job.signal);
      const answer = await pollOnce(job, target);
      backoff = Math.min(POLL_MAX_MS, backoff * POLL_FACTOR);
      const asked = answer && retryAfterMs(answer);
      wait = Math.max(backoff, Math.min(asked ?? 0, POLL_MAX_RETRY_AFTER_MS));
      if (answer === undefined || (ASK_AGAIN.has(answer.status) && !isJobAnswer(answer))) continue;
      if (answer.status === 404 && resend) {
        // The service lost the job: its request once more, identically (one resend, whatever it answers).
        const again = await resend();
        resend = undefined;
        if (again === undefined || again.status !== 202) return again ?? answer;
        target = await pollTarget(again, job);
        wait = Math.max(POLL_FIRST_MS, retryAfterMs(again) ?? 0);
        continue;
      }
      if (!(await stillRunning(answer))) return answer;
    }
  } catch (error) {
    throw error instanceof AgentCallError ? withQueued(error, target) : error;
  }
}

/** One poll: its answer, or undefined when the network lost it (the retrying fetch gave up for now). */
async function pollOnce(job: PollJob, target: PollTarget): Promise<Response | undefined> {
  try {
    return await job.send(target.url.href, target.init);
  } catch (error) {
    if (error instanceof AgentCallError && error.errorType === "network") return undefined;
    throw error;
  }
}

/** `error`, saying where the job's answer can be fetched later. */
function withQueued(error: AgentCallError, target: PollTarget): AgentCallError {
  if (error.queued) return error;
  const queued = { url: target.url.href, token: target.token };
  const message = error.message.replace(/^\S+ failed: \S+( \(HTTP \d+\))?: /, "");
  return new AgentCallError(message, {
    errorType: error.errorType,
    status: error.status,
    capability: error.capability,
    jobId: error.jobId,
    retryAfterSeconds: error.retryAfterSeconds,
    queued,
    cause: error.cause,
  });
}

interface PollTarget {
  url: URL;
  token: string;
  init: RequestInit;
}

/** Where a 202 says to poll (its Location, same origin only) and with what (its job_token). */
async function pollTarget(accepted: Response, job: PollJob): Promise<PollTarget> {
  const fail = (message: string) =>
    new AgentCallError(`${message}; the payment is settled only for a job that completed`, {
      errorType: "protocol",
      status: 202,
      capability: job.capability,
      jobId: job.jobId,
    });
  const location = accepted.headers.get("location");
  const body: unknown = await accepted.json().catch(() => undefined);
  const token = (body as { job_token?: unknown } | undefined)?.job_token;
  if (!location || typeof token !== "string")
    throw fail(`POST ${job.url} answered 202 without a Location and job_token to poll`);
  const url = new URL(location, job.url);
  if (url.origin !== new URL(job.url).origin)
    throw fail(`POST ${job.url} answered 202 with a Location on another origin (${url.origin})`);
  return { url, token, init: { headers: { authorization: `Bearer ${token}` } } };
}

/** A 200 whose status is "queued" or "running". */
async function stillRunning(answer: Response): Promise<boolean> {
  if (answer.status !== 200) return false;
  const body: unknown = await answer
    .clone()
    .json()
    .catch(() => undefined);
  const status = (body as { status?: unknown } | undefined)?.status;
  return status === "queued" || status === "running";
}

/** Waits `ms`; an abort is noticed by the next poll (the retrying fetch throws it). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
