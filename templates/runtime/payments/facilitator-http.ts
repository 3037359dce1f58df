/**
 * One HTTP request to an x402 facilitator (/verify, /settle, /supported): its credentials added
 * (facilitator-credentials.ts), its answer parsed, and every secret taken out of what comes back before anything
 * reads it. A facilitator may echo a credential in an error text, written with `\u` escapes, percent- or
 * base64-encoded: the secrets are replaced AFTER parsing, in every string of the answer, whatever its
 * encoding (ops/redact.ts), so none reaches a 402 body, an MCP result or a log line.
 * Part of your project: edit freely.
 */
import type { Authenticate } from "./facilitator-credentials.js";
import { isObject } from "../ops/json-object.js";
import { redactDeep, redactText, redactUrl, urlSecrets } from "../ops/redact.js";
import { clip, oneLine } from "../ops/text.js";
import type { VerifiedPayment } from "../types.js";

/** What a facilitator is sent: the payment as the client sent it, and the requirement we offered. */
export type FacilitatorRequest = Pick<VerifiedPayment, "x402Version" | "payload" | "requirement">;

/**
 * The facilitator could not be asked, or gave no usable answer. `uncertain`: the request may have
 * reached it and been acted on (a timeout, a dropped connection, an unreadable 2xx answer).
 */
export class FacilitatorError extends Error {
  /** No answer, or a 429/5xx one: asking again later may well succeed. */
  readonly transient: boolean;
  constructor(
    message: string,
    readonly uncertain: boolean,
    options?: { cause?: unknown; transient?: boolean },
  ) {
    super(message, options);
    this.name = "FacilitatorError";
    this.transient = options?.transient ?? false;
  }
}

/** Whether a failure to ask a facilitator may pass by itself (no answer, 429, 5xx). */
export const isTransient = (err: unknown): boolean =>
  err instanceof FacilitatorError && err.transient;

/** Connection errors that prove the request never left this machine or reached the facilitator. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** fetch() wraps network failures as TypeError("fetch failed") with the system error as cause. */
function errorCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? err.cause : undefined;
  return isObject(cause) && typeof cause.code === "string" ? cause.code : undefined;
}

/** A URL as messages and logs show it: scheme, host and path (no credentials, no query, no key-like segment). */
export function displayUrl(url: string): string {
  return redactUrl(url);
}

/**
 * The FacilitatorError for a request that got no answer (a timeout or a connection failure). The
 * message never repeats the full URL (fetch's own messages may: credentials, query).
 */
function noAnswer(endpoint: string, err: unknown, timeoutMs: number): FacilitatorError {
  const shown = displayUrl(endpoint);
  if (err instanceof Error && err.name === "TimeoutError")
    return new FacilitatorError(
      `facilitator ${shown} did not answer within ${timeoutMs / 1000} s`,
      true,
      { cause: err, transient: true },
    );
  const code = errorCode(err);
  const cause = err instanceof Error ? err.cause : undefined;
  const message =
    err instanceof Error
      ? err.message + (cause instanceof Error ? `: ${cause.message}` : "") // "fetch failed: bad port"
      : String(err);
  const detail = (code ?? message).replaceAll(endpoint, shown).replace(/\/\/[^/@\s]*@/g, "//");
  return new FacilitatorError(
    `facilitator ${shown} is unreachable (${detail})`,
    code === undefined || !NOT_SENT.has(code),
    { cause: err, transient: true },
  );
}

/** Where a request goes: the URL without credentials (fetch refuses them; they become a header). */
function target(endpoint: string): URL {
  const url = new URL(endpoint);
  url.username = "";
  url.password = "";
  return url;
}

/** The credentials for one request, or a FacilitatorError (nothing was sent: e.g. a bad key). */
async function credentials(
  authenticate: Authenticate | undefined,
  method: string,
  endpoint: string,
): Promise<{ headers: Record<string, string>; secrets: string[] }> {
  if (!authenticate) return { headers: {}, secrets: [] };
  try {
    return await authenticate(method, new URL(endpoint));
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new FacilitatorError(
      `could not make the credentials for facilitator ${displayUrl(endpoint)}: ${detail}`,
      false,
    );
  }
}

/** An answer's text as a message shows it: its JSON with every secret out, else the text redacted. */
function shownText(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  try {
    return JSON.stringify(redactDeep(JSON.parse(text), secrets));
  } catch {
    return redactText(text, secrets);
  }
}

/**
 * One request to the facilitator: its 2xx answer parsed as JSON with every secret taken out of every
 * string (`body` undefined when it is not JSON), or a FacilitatorError saying whether the request may have
 * been acted on (no answer) or surely was not (an error status). `authenticate` adds the facilitator's
 * credentials (built per request); no secret is ever put in a message.
 * `settling` (/settle): an error status that may have come after the facilitator acted counts as
 * no answer: a 401/403 (a proxy's, see facilitator.ts), a 408, or a 5xx (a gateway that gave up
 * waiting, or a facilitator that failed after sending the transfer).
 */
export async function ask(
  endpoint: string,
  init: RequestInit & { headers: Record<string, string> },
  timeoutMs: number,
  authenticate: Authenticate | undefined,
  settling = false,
): Promise<{ status: number; body: unknown }> {
  const method = init.method ?? "GET";
  const auth = await credentials(authenticate, method, endpoint);
  // The URL's own secrets too (user, password, query values): a facilitator may echo its URL.
  const secrets = [...auth.secrets, ...urlSecrets(endpoint)];
  // named: RequestInit's HeadersInit is costly to spread
  const headers: Record<string, string> = { ...init.headers, ...auth.headers };
  let status: number;
  let text: string;
  try {
    // The timeout covers reading the body too.
    const res = await fetch(target(endpoint), {
      ...init,
      headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const failure = noAnswer(endpoint, err, timeoutMs);
    if (secrets.length === 0) throw failure;
    throw new FacilitatorError(redactText(failure.message, secrets), failure.uncertain, {
      transient: true,
    });
  }
  if (status < 200 || status > 299) {
    const refused = status === 401 || status === 403;
    const mayHaveActed = refused || status === 408 || status >= 500;
    throw new FacilitatorError(
      `facilitator ${displayUrl(endpoint)} answered HTTP ${status}: ${clip(oneLine(shownText(text, secrets)), 300)}` +
        (refused ? credentialsHint(authenticate !== undefined) : ""),
      mayHaveActed && settling,
      { transient: status === 429 || status >= 500 },
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status, body: redactDeep(body, secrets) };
}

/** What a 401/403 from a facilitator suggests. */
function credentialsHint(sent: boolean): string {
  return sent
    ? " (it refused the credentials sent: check CDP_API_KEY_ID / CDP_API_KEY_SECRET, X402_FACILITATOR_HEADERS, and the server's clock)"
    : " (it wants credentials: set CDP_API_KEY_ID and CDP_API_KEY_SECRET for Coinbase's facilitator, or X402_FACILITATOR_HEADERS)";
}
