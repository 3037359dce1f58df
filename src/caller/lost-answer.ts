/**
 * Whether a failed fetch lost its answer (the connection failed: the identical request may be sent again)
 * or got a definite one that failed for what it was (headers too large, a body past its limit: named,
 * never re-sent). Shared by call's retrying fetch (retry.ts) and its job polling (call-poll.ts).
 */
import { describeFetchError } from "./service.js";

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** The error and its causes, outermost first (undici wraps the transport's error in TypeError). */
function errorChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let e: unknown = error; e instanceof Error && chain.length < 5; e = e.cause) chain.push(e);
  return chain;
}

/**
 * Is this a failure of the connection (the answer was lost), rather than of the request or the answer
 * itself? Only a transport failure is: an answer whose headers are too large, a redirect, or a body past
 * its limit is a definite answer, named and never re-sent.
 */
export function isNetworkFailure(error: unknown): boolean {
  const chain = errorChain(error);
  if (chain.length === 0 || chain[0]!.name === "AbortError" || chain[0]!.name === "TimeoutError")
    return false;
  return chain.some(
    (e) =>
      NETWORK_CODES.has((e as NodeJS.ErrnoException).code ?? "") ||
      /socket hang up|other side closed/i.test(e.message),
  );
}

/** Words for a failure that is not the connection's: what the answer did. */
const ANSWER_FAULTS: Record<string, string> = {
  UND_ERR_HEADERS_OVERFLOW: "the answer's headers are larger than Node's fetch accepts (16 KiB)",
  UND_ERR_RES_EXCEEDED_MAX_SIZE: "the answer is larger than Node's fetch accepts",
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: "the answer's body does not match its Content-Length",
};

export function answerFault(error: unknown): string {
  for (const e of errorChain(error)) {
    const words = ANSWER_FAULTS[(e as NodeJS.ErrnoException).code ?? ""];
    if (words) return words;
  }
  return describeFetchError(error);
}
