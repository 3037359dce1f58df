/**
 * The payer's answer reader, shared like guard.ts by `create-agent call` and every generated client: every
 * answer is read up to a size limit, so an answer with no end cannot grow the caller's memory.
 *
 * Web-standard APIs only (streams): generated clients run in Node, Deno, Bun and browsers.
 */
import { PaymentGuardError } from "./guard.js";

/** The most bytes read of one answer, by what it is; past it the answer is refused (documented limits). */
export const ANSWER_LIMITS = {
  /** GET /about, the capability declaration: 1 MiB. */
  about: 1024 * 1024,
  /** A 402 answer's body, the payment offer: 256 KiB. */
  offer: 256 * 1024,
  /** A job result or error body: 16 MiB. */
  result: 16 * 1024 * 1024,
} as const;

/**
 * The whole body of `response`, read up to `limit` bytes: a longer one (by Content-Length, or as it
 * streams) is cancelled and refused with PaymentGuardError("too-large") naming `what` and the limit.
 */
export async function readLimited(
  response: Response,
  limit: number,
  what: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () =>
    new PaymentGuardError(
      "too-large",
      `${what} is larger than ${describeBytes(limit)}, the most this caller reads of one answer`,
    );
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}
