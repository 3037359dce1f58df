/**
 * A ledger read or claim on a paid job's way in (paid.ts, identifier.ts, stored-answer.ts): when the
 * ledger cannot be reached, the job is refused as unavailable (an UnavailableError asking to
 * retry later), and nothing runs or is charged; a claim the ledger did not give us is refused saying why (notOurs). Part of your
 * project: edit freely.
 */
import { PaymentError, UnavailableError } from "../errors.js";
import type { Metrics } from "../ops/metrics.js";
import type { Logger } from "../types.js";

/** Seconds a caller is asked to wait when the ledger is unreachable. */
export const LEDGER_RETRY_AFTER_SECONDS = 5;
/** Added to a reservation's lease beyond the deadline and the settlement timeout. */
export const LEASE_MARGIN_MS = 10_000;

/** Runs `work`; a failure is counted, logged and turned into an UnavailableError. */
export async function ledgerStep<T>(
  metrics: Metrics,
  logger: Logger,
  operation: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    metrics.ledgerError(operation);
    logger.error(`payment ledger: could not ${operation}; paid jobs are refused until it is back`, {
      error: String(err),
    });
    throw new UnavailableError(
      `the payment ledger is unreachable, so no paid job can start; nothing was run or charged; retry in ${LEDGER_RETRY_AFTER_SECONDS} s`,
      LEDGER_RETRY_AFTER_SECONDS,
      { cause: err },
    );
  }
}

/** Why an authorization the ledger would not give us cannot pay for this job. */
export function notOurs(status: "in-flight" | "settled" | "held"): PaymentError {
  if (status === "settled")
    return new PaymentError(
      "this payment authorization was already used for another job (or refused at settlement): sign a new one (with a fresh nonce)",
      { code: "already_used" },
    );
  if (status === "held")
    return new PaymentError(
      "this payment authorization's job is done and its answer waits for the identical request (same payment, capability and input, over POST /execute or MCP), which gets it (its caller left before settlement, or the settlement is unconfirmed): send that again, or sign a new authorization for this one",
      { code: "held" },
    );
  return new PaymentError(
    "this payment authorization is in use by a job that is still running: for that job's result, send the identical request (same payment, capability and input) again in a moment; a new authorization pays for another job",
    { code: "in_use" },
  );
}
