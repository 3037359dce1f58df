/**
 * Idempotent retry: re-sends the IDENTICAL request (same URL, headers, PAYMENT-SIGNATURE and body, so the
 * same job_id) when it got no answer. A paid job is never signed twice: the service answers an identical
 * retry of a settled job from its cache, and answers 402 "in use" while the first attempt still runs, or
 * 402 "settlement is unconfirmed" while it holds the result until its settlement is confirmed (both with
 * Retry-After): this then waits and asks again. Only the payment wrapper above this signs, once per job.
 */
import { ANSWER_LIMITS, readLimited } from "../../src/caller/guard-read.js";
import { PaymentGuardError } from "../../src/caller/guard.js";
import { AgentCallError } from "./errors.js";

/** What fetch is to this client: the global fetch, or any function with its signature. */
export type FetchLike = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

export interface RetryPolicy {
  /** Re-sends after a network failure or a 429/502/503/504 answer. */
  retries: number;
  /** Until when (ms since the epoch) to keep asking while the service says the payment is in use. */
  waitUntilMs: number;
  signal?: AbortSignal | undefined;
  capability: string;
  jobId: string;
}

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A Retry-After longer than this is not waited for: the 503 is returned to the caller. */
const MAX_RETRY_AFTER_MS = 30_000;
/** Pauses between asks while the first attempt of a paid job is still running on the service. */
const IN_USE_DELAYS_MS = [250, 500, 1_000, 2_000, 3_000];
/**
 * Answers that say "not now", never "done": a retry of the identical request is safe (a 429: the payer
 * already runs MAX_JOBS_PER_PAYER jobs there; this one was not run, its payment is free to send again).
 */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Statuses whose Response may not carry a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function retryingFetch(fetchImpl: FetchLike, policy: RetryPolicy): FetchLike {
  return async (input, init) => {
    const request = new Request(input, init);
    const { url, method } = request;
    const headers = new Headers(request.headers);
    const body = method === "GET" || method === "HEAD" ? undefined : await request.arrayBuffer();
    const paid = headers.has("payment-signature") || headers.has("x-payment");
    let retried = 0;
    let inUseWaits = 0;
    for (;;) {
      throwIfAborted(policy);
      let response: Response;
      try {
        const sent = await fetchImpl(url, {
          method,
          headers,
          // A redirect is an answer, never followed: it would carry the job and its payment elsewhere.
          redirect: "manual",
          ...(body === undefined ? {} : { body: body.slice(0) }),
          ...(policy.signal ? { signal: policy.signal } : {}),
        });
        // Node returns the 3xx itself; a browser an "opaqueredirect" answer with status 0.
        if (sent.type === "opaqueredirect" || (sent.status >= 300 && sent.status < 400)) {
          await sent.body?.cancel().catch(() => {});
          throw answerError(policy, sent.status, { method, url, paid }, redirected(sent));
        }
        response = await buffered(sent, `the answer to ${method} ${url}`);
      } catch (error) {
        if (error instanceof AgentCallError) throw error;
        if (policy.signal?.aborted) throw abortedError(policy, error);
        if (error instanceof PaymentGuardError)
          throw answerError(policy, undefined, { method, url, paid }, error.message);
        const fault = answerFault(error);
        if (fault) throw answerError(policy, undefined, { method, url, paid }, fault);
        if (!isTransportFailure(error) || retried >= policy.retries)
          throw networkError(policy, { method, url, paid, attempts: retried + 1, error });
        await sleep(backoff(retried++), policy);
        continue;
      }
      const wait = retryWait(response, retried, policy);
      if (wait !== undefined) {
        retried++;
        await sleep(wait, policy);
        continue;
      }
      const held = paid ? await heldWait(response, retried, inUseWaits, policy) : undefined;
      if (held !== undefined) {
        inUseWaits++;
        await sleep(held, policy);
        continue;
      }
      return response;
    }
  };
}

/**
 * The wait before re-sending a paid request whose 402 says to wait, or undefined: it is the answer. Only a
 * re-send can find its own payment in use (the first attempt is still running); any attempt can find its
 * settlement unconfirmed (the result is held until it is).
 */
async function heldWait(response: Response, retried: number, waits: number, policy: RetryPolicy) {
  const says = response.status === 402 ? await saysWait(response) : undefined;
  if (says === undefined || (says === "in use" && retried === 0)) return undefined;
  const own = IN_USE_DELAYS_MS[Math.min(waits, IN_USE_DELAYS_MS.length - 1)] ?? 1_000;
  const asked = retryAfterMs(response) ?? 0;
  const wait = Math.max(own, asked <= MAX_RETRY_AFTER_MS ? asked : 0);
  return Date.now() + wait <= policy.waitUntilMs ? wait : undefined;
}

/** The wait before asking again after a "not now" answer (429/502/503/504), or undefined: it is returned. */
function retryWait(response: Response, retried: number, policy: RetryPolicy): number | undefined {
  if (!RETRY_STATUSES.has(response.status) || isJobAnswer(response) || retried >= policy.retries)
    return undefined;
  const wait = retryAfterMs(response) ?? backoff(retried);
  return wait <= MAX_RETRY_AFTER_MS ? wait : undefined;
}

/**
 * Reads the whole body now, up to its limit (a 402's offer, or a result), so a connection reset mid-body is
 * a network failure retried here too, and an answer with no end is refused instead of filling memory.
 */
async function buffered(response: Response, what: string): Promise<Response> {
  const limit = response.status === 402 ? ANSWER_LIMITS.offer : ANSWER_LIMITS.result;
  const data = await readLimited(response, limit, what);
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : data, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * A 402 payment error (spec 2.5) that says to wait: the authorization is in use by a job still running,
 * or its settlement is unconfirmed (the result is held until it is), in its words; or, with any words, a
 * Retry-After, how the service marks both ("asked": the identical request gets this job's answer later).
 */
async function saysWait(
  response: Response,
): Promise<"in use" | "unconfirmed" | "asked" | undefined> {
  try {
    const body: unknown = JSON.parse(await response.clone().text());
    if (typeof body !== "object" || body === null) return undefined;
    const { error_type, error } = body as Record<string, unknown>;
    if (error_type !== "payment" || typeof error !== "string") return undefined;
    if (/\bin use\b/i.test(error)) return "in use";
    if (/\bsettlement is (still )?unconfirmed\b/i.test(error)) return "unconfirmed";
    return response.headers.has("retry-after") ? "asked" : undefined;
  } catch {
    return undefined;
  }
}

function backoff(retried: number): number {
  return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retried);
}

/**
 * A queued job's own final answer (GET /jobs/<id>): the service marks it with `Job-Status`, so a 503 that
 * is the job's failure (its handler's UnavailableError) is returned, while a proxy's or an outage's (none)
 * is asked again.
 */
export function isJobAnswer(response: Response): boolean {
  const status = response.headers.get("job-status")?.trim().toLowerCase();
  return status === "completed" || status === "failed";
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function throwIfAborted(policy: RetryPolicy): void {
  if (policy.signal?.aborted) throw abortedError(policy, policy.signal.reason);
}

function sleep(ms: number, policy: RetryPolicy): Promise<void> {
  const { signal } = policy;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(policy, signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError(policy, signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function abortedError(policy: RetryPolicy, cause: unknown): AgentCallError {
  return new AgentCallError("the call was aborted", {
    errorType: "aborted",
    capability: policy.capability,
    jobId: policy.jobId,
    cause,
  });
}

/** Error codes of Node's fetch (undici) that mean the answer itself was wrong, not the connection. */
const ANSWER_FAULTS: Record<string, string> = {
  UND_ERR_HEADERS_OVERFLOW: "the answer's headers are larger than fetch accepts (16 KiB in Node)",
  UND_ERR_RES_EXCEEDED_MAX_SIZE: "the answer is larger than fetch accepts",
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: "the answer's body does not match its Content-Length",
};

/** The error and its causes, outermost first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && chain.length < 5; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
    if (typeof e !== "object" || e === null) break;
  }
  return chain;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** What a failed fetch says about the answer itself (never retried), if that is what failed. */
function answerFault(error: unknown): string | undefined {
  for (const e of causes(error)) {
    const words = ANSWER_FAULTS[codeOf(e) ?? ""];
    if (words) return words;
  }
  return undefined;
}

/**
 * A failure of the transport (no complete answer arrived): fetch's TypeError, except "redirect" and
 * other answers that failed for what they were (answerFault).
 */
function isTransportFailure(error: unknown): boolean {
  return error instanceof TypeError && !/redirect/i.test(describe(error));
}

function redirected(response: Response): string {
  const location = response.headers.get("location");
  return `it answered with a redirect${location ? ` to ${location}` : ""}; a job and its payment are never sent on to another address (call the service's own URL)`;
}

function answerError(
  policy: RetryPolicy,
  status: number | undefined,
  what: { method: string; url: string; paid: boolean },
  problem: string,
): AgentCallError {
  const paid = what.paid ? "; a payment was signed for this job and sent with the request" : "";
  return new AgentCallError(`${what.method} ${what.url}: ${problem}; not sent again${paid}`, {
    errorType: "protocol",
    status,
    capability: policy.capability,
    jobId: policy.jobId,
  });
}

function networkError(
  policy: RetryPolicy,
  what: { method: string; url: string; paid: boolean; attempts: number; error: unknown },
): AgentCallError {
  const tries = what.attempts === 1 ? "1 attempt" : `${what.attempts} attempts`;
  const paid = what.paid
    ? "; a payment was signed for this job: the service settles it only for a job it completed"
    : "";
  return new AgentCallError(
    `no answer from ${what.method} ${what.url} after ${tries}: ${describe(what.error)}${paid}`,
    { errorType: "network", capability: policy.capability, jobId: policy.jobId, cause: what.error },
  );
}

/** "ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:1)" from fetch's TypeError and its cause. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    return typeof code === "string" ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}
