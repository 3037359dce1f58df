/**
 * A reservation one request holds on an authorization: its lease is renewed for as long as the
 * request's handler or settlement runs, and it ends either spent (charged, or maybe charged) or
 * released (nothing charged). Ledger failures here never lose a result that was paid for: they are
 * logged and counted, and a lease left behind frees itself. Part of your project: edit freely.
 */
import type { Metrics } from "../ops/metrics.js";
import type { Logger } from "../types.js";
import { keepLease } from "./lease.js";
import type { JobResult, Ledger } from "./ledger.js";

export interface Hold {
  /**
   * Marks the authorization spent for `ttlMs`, caching `completed` for identical retries.
   * Never throws: the charge already happened.
   */
  spent(ttlMs: number, completed?: JobResult): Promise<void>;
  /**
   * The caller left before settlement: marks the authorization held for `ttlMs`, keeping
   * `completed` (unsettled) for an identical retry. Throws when the ledger could not keep it.
   */
  held(ttlMs: number, completed: JobResult): Promise<void>;
  /** Frees the authorization once the handler has stopped (at once if it has). No-op once spent. */
  releaseAfter(handlerStopped: Promise<void>): void;
  /** Frees the authorization now. No-op once spent. */
  release(): Promise<void>;
}

export interface HoldOptions {
  /** When the first lease ends (ms since the epoch); renewals keep it while the request runs. */
  leaseEndsAt: number;
  logger: Logger;
  metrics: Metrics;
}

export function holdReservation(
  ledger: Ledger,
  auth: string,
  token: string,
  { leaseEndsAt, logger, metrics }: HoldOptions,
): Hold {
  const quietly = async (operation: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      metrics.ledgerError(operation);
      logger.error(`payment ledger: could not ${operation}`, { error: String(err) });
    }
  };
  const lease = keepLease(ledger, auth, token, {
    leaseEndsAt,
    onError: (err) => {
      metrics.ledgerError("renew a reservation");
      logger.warn("payment ledger: could not renew a reservation", { error: String(err) });
    },
  });
  const release = async () => {
    await quietly("release the reservation", () => ledger.release(auth, token));
    lease.stop();
  };
  let done = false;
  return {
    async spent(ttlMs, completed) {
      done = true;
      lease.stop();
      await quietly("mark the authorization spent", () =>
        ledger.markSettled(auth, ttlMs, completed),
      );
    },
    async held(ttlMs, completed) {
      await ledger.hold(auth, ttlMs, completed); // if this throws, release() frees it: nothing was charged
      done = true;
      lease.stop();
    },
    releaseAfter(handlerStopped) {
      if (done) return;
      done = true;
      void handlerStopped.then(release);
    },
    async release() {
      if (done) return;
      done = true;
      await release();
    },
  };
}
