// What a test service answers, as the tests expect it: makeAgent()'s GET /health body and a paid job's
// answer read with fetch.
import { expect } from "vitest";
import { makeAgent, unb64 } from "./helpers.js";

/**
 * makeAgent()'s GET /health answer: 200 "ok", or 503 "degraded" naming `problems`; `more` adds fields
 * (its networks' records).
 */
export function agentHealth(problems: string[] = [], more: Record<string, unknown> = {}) {
  const { name, version } = makeAgent();
  const status = problems.length ? "degraded" : "ok";
  const body = { name, version, status, ...(problems.length ? { problems } : {}), ...more };
  return { status: problems.length ? 503 : 200, body };
}

/** A paid job's fetch answer (`text` its body): 200 with `output`, PAYMENT-RESPONSE a success on `network` by `payer`. */
export function expectPaidAnswer(
  res: Response,
  text: string,
  output: unknown,
  network: string,
  payer: string,
): void {
  expect(res.status, text).toBe(200);
  expect(JSON.parse(text).output).toEqual(output);
  expect(unb64(res.headers.get("payment-response")!)).toMatchObject({
    success: true,
    network,
    payer,
  });
}
