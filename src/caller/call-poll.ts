/**
 * `create-agent call --async`: the service answered POST /execute with 202 (it queued the job, `Prefer:
 * respond-async`), and the job's answer is fetched from its `Location` (GET /jobs/<id>) with the 202's
 * `job_token` as `Authorization: Bearer <job_token>`, until it is no longer "queued" or "running".
 * Waits start at 1 s and grow 1.5x up to 15 s, never sooner than the service's Retry-After; polling stops
 * at the job's deadline plus the settlement margin. The token is sent only to the service's own origin,
 * and printed only when the user stops waiting (Ctrl-C): the job was accepted with its payment and is charged
 * once it completes, so the way to its answer is then printed, with the token. Polling is a GET: it never
 * signs or pays anything, and a lost poll is asked again. A poll answered 404 means the service lost the job
 * (it restarted with an empty queue, or its Redis did) or never had it on this instance: the job's request is
 * then sent again, once, identically (`resend`: the same payment, settled at most once), and the service
 * answers it from its ledger (the job completed and was charged: its result and receipt) or queues it again
 * under the same payment (polled as before). A second 404 is final. A 502/503/504 is asked again (the
 * queue unreachable, a proxy, a restart) unless it says it is the job's answer: the service marks every
 * answer about the job with `Job-Status` (templates/runtime/queue/poll.ts), and a job whose handler failed
 * with a 503 (UnavailableError) is answered so on every poll: that is its failure, returned at once.
 */
import { isObject } from "../json-object.js";
import { shellQuote } from "../shell-quote.js";
import { onStopSignals } from "../stop-signals.js";
import { CallError } from "./errors.js";
import { ANSWER_LIMITS, readLimited } from "./guard-read.js";
import { isNetworkFailure } from "./lost-answer.js";
import { describeFetchError } from "./service.js";

/** First wait between polls, its growth, and its cap (a Retry-After above the cap is honoured). */
export const POLL_DELAYS = { firstMs: 1000, factor: 1.5, maxMs: 15_000 } as const;
/** Longest Retry-After honoured between polls. */
const MAX_RETRY_AFTER_MS = 60_000;
/** Answers to a poll that say "not now", unless they carry a final Job-Status (isJobAnswer). */
const ASK_AGAIN = new Set([502, 503, 504]);
/** Longest wait for one poll's answer. */
const POLL_TIMEOUT_MS = 30_000;

/** The answer a poll ended with: the job's result or error body, as POST /execute would have sent it. */
export interface PolledAnswer {
  status: number;
  text: string;
  headers: Headers;
}

export interface PollOptions {
  /** The POST /execute URL the 202 answered (its Location is resolved against it). */
  executeUrl: string;
  /** The 202's headers and body, already read. */
  accepted: { headers: Headers; text: string };
  /** Polling stops here (ms since the epoch): the deadline plus the settlement margin. */
  untilMs: number;
  note: (line: string) => void;
  fetchImpl?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Added to every error: what may have been paid. */
  signedNote?: string;
  /** Whether a payment went with the job (it is then charged once it completes, waited for or not). */
  paid?: boolean;
  /** Sends the job's request again, identically; undefined when there is nothing to send. */
  resend?: () => Promise<Response> | undefined;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Where to poll and with what: the 202's Location (same origin only) and its job_token. */
export function acceptedJob(
  executeUrl: string,
  accepted: { headers: Headers; text: string },
  signedNote = "",
): { url: string; token: string; jobId: string | undefined } {
  const location = accepted.headers.get("location");
  let body: unknown;
  try {
    body = JSON.parse(accepted.text);
  } catch {
    body = undefined;
  }
  const token = isObject(body) && typeof body.job_token === "string" ? body.job_token : undefined;
  if (!location || !token)
    throw new CallError(
      "service",
      `POST ${executeUrl} answered 202 without ${location ? "a job_token" : "a Location"} to poll the job with${signedNote}`,
      { status: 202 },
    );
  const url = new URL(location, executeUrl);
  if (url.origin !== new URL(executeUrl).origin)
    throw new CallError(
      "service",
      `POST ${executeUrl} answered 202 with a Location on another origin (${url.origin}): the job's credential is never sent elsewhere${signedNote}`,
      { status: 202 },
    );
  const jobId = isObject(body) && typeof body.job_id === "string" ? body.job_id : undefined;
  return { url: url.href, token, jobId };
}

/** Polls the queued job until its answer arrives; throws when polling must stop. */
export async function pollJob(options: PollOptions): Promise<PolledAnswer> {
  const { executeUrl, note, signedNote = "" } = options;
  const { url, token, jobId } = acceptedJob(executeUrl, options.accepted, signedNote);
  const named = jobId === undefined ? "the job" : `job ${jobId}`;
  const charged = options.paid ? "it is charged once it completes, even if you stop waiting: " : "";
  // Listening before the line that tells the user Ctrl-C is theirs to press.
  const stopWaiting = onInterrupt(() =>
    note(
      `stopped waiting. ${named} still runs${options.paid ? " and, once it completes, is charged" : ""}. Fetch its answer (kept for a while, JOB_RESULT_TTL_SECONDS on the service) with:\n  curl -H ${shellQuote(`authorization: Bearer ${token}`)} ${shellQuote(url)}`,
    ),
  );
  note(
    `${named} was queued by the service (HTTP 202); polling ${url} until it finishes (${charged}Ctrl-C prints how to fetch its answer later)`,
  );
  try {
    return await pollUntilDone(options, url, token);
  } finally {
    stopWaiting();
  }
}

/**
 * Until the handler it returns is called: on SIGINT or SIGTERM, `say` what to do next, then exit 130 (the
 * process would otherwise end without a word).
 */
function onInterrupt(say: () => void): () => void {
  return onStopSignals(() => {
    say();
    process.exit(130);
  });
}

async function pollUntilDone(
  options: PollOptions,
  url: string,
  token: string,
): Promise<PolledAnswer> {
  const { note, signedNote = "" } = options;
  const sleep = options.sleep ?? defaultSleep;
  let job = { url, token };
  let resend = options.resend;
  // The first wait: at least POLL_DELAYS.firstMs, at least the 202's Retry-After.
  let wait = Math.max(POLL_DELAYS.firstMs, retryAfterMs(options.accepted.headers) ?? 0);
  let backoff: number = POLL_DELAYS.firstMs;
  for (;;) {
    if (Date.now() + wait > options.untilMs)
      throw new CallError(
        "deadline",
        `the job at ${job.url} had no answer by its deadline plus the settlement margin; polling stopped${signedNote}`,
      );
    await sleep(wait);
    const answer = await pollOnce(job.url, job.token, options.fetchImpl ?? fetch, note);
    backoff = Math.min(POLL_DELAYS.maxMs, backoff * POLL_DELAYS.factor);
    if (answer === undefined) {
      wait = backoff;
      continue;
    }
    if (answer.status === 404 && resend) {
      const again = await askAgain(resend, options, job.url);
      resend = undefined;
      if (again === undefined || again.status !== 202) return again ?? answer;
      job = acceptedJob(options.executeUrl, again, signedNote);
      wait = Math.max(POLL_DELAYS.firstMs, retryAfterMs(again.headers) ?? 0);
      continue;
    }
    if (!stillRunning(answer)) return answer;
    wait = Math.max(backoff, retryAfterMs(answer.headers) ?? 0);
  }
}

/** The job's request sent again after its poll answered 404 (the service lost the job), saying so. */
async function askAgain(
  resend: NonNullable<PollOptions["resend"]>,
  options: PollOptions,
  url: string,
): Promise<PolledAnswer | undefined> {
  options.note(
    `the service no longer knows the job at ${url} (HTTP 404: it restarted, or lost its queue); sending the job's request again, once, identically${options.paid ? " (the same payment: it is settled at most once)" : ""}`,
  );
  try {
    const again = await resend();
    if (again === undefined) return undefined;
    const data = await readLimited(
      again,
      ANSWER_LIMITS.result,
      `the answer to POST ${options.executeUrl}`,
    );
    return { status: again.status, text: new TextDecoder().decode(data), headers: again.headers };
  } catch (error) {
    if (error instanceof CallError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new CallError(
      "network",
      `POST ${options.executeUrl}, sent again after the poll's 404, failed: ${message}${options.signedNote ?? ""}`,
    );
  }
}

/** One GET of the job: its answer, or undefined when it is to be asked again (lost, 502/503/504). */
async function pollOnce(
  url: string,
  token: string,
  fetchImpl: typeof fetch,
  note: (line: string) => void,
): Promise<PolledAnswer | undefined> {
  let response: Response;
  let data: Uint8Array;
  try {
    response = await fetchImpl(url, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(POLL_TIMEOUT_MS),
    });
    data = await readLimited(response, ANSWER_LIMITS.result, `the answer to GET ${url}`);
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    if (!isNetworkFailure(error) && name !== "TimeoutError") throw pollFailure(url, error);
    note(`polling ${url} failed (${describeFetchError(error)}); asking again`);
    return undefined;
  }
  // "Not now" from the service or a proxy in front of it: the job is still there; ask again.
  if (ASK_AGAIN.has(response.status) && !isJobAnswer(response.headers)) return undefined;
  return {
    status: response.status,
    text: new TextDecoder().decode(data),
    headers: response.headers,
  };
}

function pollFailure(url: string, error: unknown): CallError {
  if (error instanceof CallError) return error;
  return new CallError(
    "service",
    `GET ${url} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The job's own final answer, as the service marks it (its Job-Status); never a proxy's or an outage's. */
function isJobAnswer(headers: Headers): boolean {
  const status = headers.get("job-status")?.trim().toLowerCase();
  return status === "completed" || status === "failed";
}

/** A 200 whose status is "queued" or "running": the job has not finished. */
function stillRunning(answer: PolledAnswer): boolean {
  if (answer.status !== 200) return false;
  try {
    const body = JSON.parse(answer.text) as unknown;
    return isObject(body) && (body.status === "queued" || body.status === "running");
  } catch {
    return false;
  }
}

/** Retry-After in seconds, as ms (bounded). */
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
}
