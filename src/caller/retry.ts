/**
 * A fetch that re-sends the IDENTICAL request (same URL, headers, payment signature, body and job_id)
 * when the connection fails before a complete answer arrived. Safe for paid jobs: a create-agent server
 * runs one authorization at most once and answers an identical retry of a settled job from its cache
 * (templates/runtime/jobs/paid.ts), so the caller is charged once. While the first attempt is still
 * running, a retry gets a 402 saying the authorization is "in use", or its settlement "unconfirmed" (the
 * result is held): both are waited out too. A paid attempt that gets no complete answer within its time
 * limit is re-sent once. Nothing here ever signs anything: a retry re-sends the authorization it was given.
 */
import { answerFault, isNetworkFailure } from "./lost-answer.js";
import { describeFetchError } from "./service.js";
import { CallError } from "./errors.js";
import { ANSWER_LIMITS, readLimited } from "./guard-read.js";
import { PaymentGuardError } from "./guard.js";

export interface RetryOptions {
  fetchImpl?: typeof fetch;
  /** Waits before each resend after a network failure; their count is the most resends (default 5). */
  delaysMs?: readonly number[];
  /** A paid request refused as "in use" is re-sent until this time (ms since the epoch). */
  inUseUntilMs?: number;
  /** Longest wait for one attempt's complete answer, in ms (default: none). */
  attemptTimeoutMs?: number;
  /** Told about every resend, in words. */
  onRetry?: (message: string) => void;
  sleep?: (ms: number) => Promise<void>;
}

/** 0.5, 1, 2, 4 and 4 s: at most five resends, about 11.5 s of waiting in all. */
export const RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000, 4000];
/** Waits between resends of a paid request that is still running on the server. */
const IN_USE_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000];
/** A paid request's settlement unconfirmed (its result held): the 402 saying so. */
const UNCONFIRMED = /\bsettlement is (still )?unconfirmed\b/i;
/** Why a 402 is waited out, in words. */
const WAIT_WORDS = {
  "in use": "is still running this job from an earlier attempt",
  unconfirmed: "holds this job's result until its payment's settlement is confirmed",
  asked: "asks for the identical request again later (HTTP 402 with Retry-After)",
} as const;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Does the request carry a payment (x402 v2 or v1 header)? */
function isPaid(headers: Headers): boolean {
  return headers.has("payment-signature") || headers.has("x-payment");
}

/** An error message saying the authorization is in use by a job still running (paid.ts "in_use"). */
export const saysInUse = (error: unknown): boolean =>
  typeof error === "string" && /\bin use\b/i.test(error);

/** An error message saying its settlement is unconfirmed, the result held (paid-steps.ts "settlement_uncertain"). */
export const saysUnconfirmed = (error: unknown): boolean =>
  typeof error === "string" && UNCONFIRMED.test(error);

/**
 * A 402 to wait out: the authorization in use by a job still running, or its settlement unconfirmed,
 * as the error says; or any 402 payment error (spec 2.5) with Retry-After, how a create-agent server
 * marks both ("asked": the identical request gets this job's answer later). Waiting re-sends what was
 * signed, never more.
 */
function waitable(
  response: Response,
  body: Uint8Array,
): "in use" | "unconfirmed" | "asked" | undefined {
  if (response.status !== 402) return undefined;
  let said: { error?: unknown; error_type?: unknown } = {};
  try {
    said = JSON.parse(new TextDecoder().decode(body)) ?? {};
  } catch {
    return undefined;
  }
  if (saysInUse(said.error)) return "in use";
  if (saysUnconfirmed(said.error)) return "unconfirmed";
  return said.error_type === "payment" && response.headers.has("retry-after") ? "asked" : undefined;
}

/** One request being sent, and what every attempt at it says. */
interface Sending {
  request: Request;
  headers: Headers;
  body: ArrayBuffer | undefined;
  paid: boolean;
  /** Added to every final error of a paid request: the payment may have been charged. */
  signedNote: string;
  /** What a resend keeps the same, in words. */
  same: string;
  fetchImpl: typeof fetch;
  delays: readonly number[];
  sleep: (ms: number) => Promise<void>;
  tell: (message: string) => void;
  options: RetryOptions;
}

/** What the attempts so far came to. */
interface Attempts {
  failures: number;
  inUse: number;
  timedOut: boolean;
}

export function retryingFetch(options: RetryOptions = {}): typeof fetch {
  return async (input, init) => {
    // One snapshot of the request, re-sent byte for byte on every attempt.
    const request = new Request(input, init);
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const headers = new Headers(request.headers);
    const paid = isPaid(headers);
    const sending: Sending = {
      request,
      headers,
      body,
      paid,
      signedNote: paid
        ? "; a payment authorization was signed for this job and the server may have run and charged it: check the payer's USDC transfers before calling again"
        : "",
      same: paid
        ? "the same payment authorization and job_id, so it is charged at most once"
        : "the same job_id",
      fetchImpl: options.fetchImpl ?? fetch,
      delays: options.delaysMs ?? RETRY_DELAYS_MS,
      sleep: options.sleep ?? defaultSleep,
      tell: options.onRetry ?? (() => {}),
      options,
    };
    const attempts: Attempts = { failures: 0, inUse: 0, timedOut: false };
    for (;;) {
      let answer: { response: Response; data: Uint8Array };
      try {
        answer = await attempt(sending);
      } catch (error) {
        await afterFailure(error, sending, attempts);
        continue;
      }
      const { response, data } = answer;
      if (await waitedToResend(response, data, sending, attempts)) continue;
      return new Response(NULL_BODY_STATUSES.has(response.status) ? null : data, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
  };
}

/** One attempt: the answer and its whole body (a redirect is refused, never followed). */
async function attempt(sending: Sending): Promise<{ response: Response; data: Uint8Array }> {
  const { request, headers, body, paid, signedNote, options } = sending;
  const response = await sending.fetchImpl(request.url, {
    method: request.method,
    headers,
    // A redirect is an answer, never followed: it would carry the job (and a payment) elsewhere.
    redirect: "manual",
    ...(body === undefined ? {} : { body }),
    ...(options.attemptTimeoutMs === undefined
      ? {}
      : { signal: AbortSignal.timeout(options.attemptTimeoutMs) }),
  });
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => {});
    const location = response.headers.get("location");
    throw new CallError(
      "service",
      `${request.method} ${request.url} answered HTTP ${response.status}, a redirect${location ? ` to ${location}` : ""}: a job${paid ? " and its payment are" : " is"} never sent on to another address; call the service's own URL${location ? " (if you trust that address, call it directly)" : ""}${signedNote}`,
      { status: response.status },
    );
  }
  // The whole answer, or it counts as lost: a connection cut mid-body is retried too.
  const limit = response.status === 402 ? ANSWER_LIMITS.offer : ANSWER_LIMITS.result;
  const data = await readLimited(response, limit, `the answer to ${request.method} ${request.url}`);
  return { response, data };
}

/**
 * An attempt that failed: throws when it is final (a definite answer, too many failures, a second
 * timeout), else says so and returns once it is time to send the identical request again.
 */
async function afterFailure(error: unknown, sending: Sending, attempts: Attempts): Promise<void> {
  const { request, paid, signedNote, same, delays, tell } = sending;
  if (error instanceof CallError) throw error;
  if (error instanceof PaymentGuardError)
    throw new CallError("service", `${error.message}${signedNote}`);
  if ((error as Error | undefined)?.name === "TimeoutError") {
    const within = `no complete answer within ${Math.round((sending.options.attemptTimeoutMs ?? 0) / 1000)} s`;
    // A paid answer that never came is lost too: the identical request once more gets it
    // (the service answers a resend of its payment from its ledger), never a second charge.
    if (!paid || attempts.timedOut)
      throw new CallError("network", `${request.method} ${request.url}: ${within}${signedNote}`);
    attempts.timedOut = true;
    tell(`${request.url}: ${within}; sending the identical request once more (${same})`);
    return;
  }
  if (!isNetworkFailure(error))
    throw new CallError(
      "service",
      `${request.method} ${request.url} failed: ${answerFault(error)}; not sent again${signedNote}`,
    );
  const delay = delays[attempts.failures];
  if (delay === undefined)
    throw new CallError(
      "network",
      `${request.method} ${request.url} failed ${attempts.failures + 1} times: ${describeFetchError(error)}${signedNote}`,
    );
  attempts.failures++;
  tell(
    `connection to ${request.url} failed before the answer arrived (${describeFetchError(error)}); sending the identical request again in ${seconds(delay)} (${same}), retry ${attempts.failures} of ${delays.length}`,
  );
  await sending.sleep(delay);
}

/**
 * A complete answer that asks to be asked again: a 503 with Retry-After (the service is shutting down or
 * its payment ledger is unreachable, and it says nothing was run or charged), a 429 (the payer's cap), or a paid job still running
 * from an earlier attempt ("in use"). Waits and returns true when the identical request is to be re-sent.
 */
async function waitedToResend(
  response: Response,
  data: Uint8Array,
  sending: Sending,
  attempts: Attempts,
): Promise<boolean> {
  const { request, paid, same, delays, tell, sleep, options } = sending;
  const retryAfter = retryAfterMs(response);
  if (retryAfter !== undefined && attempts.failures < delays.length) {
    attempts.failures++;
    tell(
      `${request.url} ${response.status === 429 ? "is running as many jobs of this payer as it takes at once" : "is unavailable for now"} (HTTP ${response.status}, nothing run or charged); sending the identical request again in ${seconds(retryAfter)}, retry ${attempts.failures} of ${delays.length}`,
    );
    await sleep(retryAfter);
    return true;
  }
  const wait = paid ? waitable(response, data) : undefined;
  if (wait) {
    const own = IN_USE_DELAYS_MS[Math.min(attempts.inUse, IN_USE_DELAYS_MS.length - 1)]!;
    const delay = Math.max(own, headerMs(response) ?? 0);
    if (options.inUseUntilMs !== undefined && Date.now() + delay <= options.inUseUntilMs) {
      attempts.inUse++;
      const why = WAIT_WORDS[wait];
      tell(`the server ${why}; asking again in ${seconds(delay)} (${same})`);
      await sleep(delay);
      return true;
    }
  }
  return false;
}

/** Longest Retry-After honoured; a longer one is answered as it is. */
const MAX_RETRY_AFTER_MS = 30_000;

/**
 * A 503's or 429's Retry-After (seconds) in ms, when it is short enough to wait for (a 429: the payer's
 * MAX_JOBS_PER_PAYER jobs are running; this one was not run, its payment is free to send again).
 */
function retryAfterMs(response: Response): number | undefined {
  if (response.status !== 503 && response.status !== 429) return undefined;
  return headerMs(response);
}

/** Retry-After (seconds) in ms, when it is short enough to wait for. */
function headerMs(response: Response): number | undefined {
  const value = response.headers.get("retry-after");
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  const ms = Number(value.trim()) * 1000;
  return ms <= MAX_RETRY_AFTER_MS ? Math.max(ms, 100) : undefined;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}
