/**
 * Keeps a reservation's lease alive while this instance still works on it (its handler, even an
 * abandoned one, or its settlement), so no other request can run the same authorization. If this
 * instance dies the renewals stop, and the lease frees itself at most `windowMs` after the last
 * one (never later than the initial lease unless renewed). Part of your project: edit freely.
 */
import type { Ledger } from "./ledger.js";

export interface KeepLeaseOptions {
  /** When the initial lease ends (ms since the epoch): renewals never shorten it. */
  leaseEndsAt: number;
  /** How often to renew (default 5000 ms). */
  renewEveryMs?: number;
  /** How long each renewal holds the lease past now, at least (default 15000 ms). */
  windowMs?: number;
  /** A renewal failed (the ledger is unreachable); renewing goes on. */
  onError?: (err: unknown) => void;
}

export function keepLease(
  ledger: Ledger,
  auth: string,
  token: string,
  options: KeepLeaseOptions,
): { stop(): void } {
  const renewEveryMs = options.renewEveryMs ?? 5000;
  const windowMs = options.windowMs ?? 15_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const renew = async (): Promise<void> => {
    timer = undefined;
    try {
      const leaseMs = Math.max(options.leaseEndsAt - Date.now(), windowMs);
      // False: the lease is no longer ours (settled, released or expired); it never comes back.
      if (!(await ledger.renew(auth, token, leaseMs))) stopped = true;
    } catch (err) {
      try {
        options.onError?.(err);
      } catch {
        // a throwing onError must not stop the renewals
      }
    }
    schedule();
  };

  // The next renewal is scheduled once this one is answered, so renewals never overlap.
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => void renew(), renewEveryMs);
    timer.unref();
  };

  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
