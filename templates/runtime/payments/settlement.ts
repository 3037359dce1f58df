/**
 * Settlement: turning a verified authorization into money received, after the job succeeded.
 * Two routes ship with the runtime, chosen by configuration (../config.ts):
 *   - facilitator.ts: an x402 facilitator's /verify and /settle (X402_FACILITATOR_URL);
 *   - direct-settlement.ts: this server sends USDC's transferWithAuthorization itself
 *     (X402_RPC_URL + X402_SETTLER_KEY; that account pays the gas).
 * Anything implementing Settler can be passed as `createApp(agent, { payment: { settler } })`.
 * Part of your project: edit freely.
 */
import type { VerifiedPayment } from "../types.js";

type Hex = `0x${string}`;

/**
 * Seconds an authorization must stay valid after the job's deadline (or now, if later).
 * Settlement starts when the handler returns (at the latest at the deadline), and the transfer
 * must be mined before validBefore or the token contract refuses it: the client would get the
 * result for free. The reference facilitator refuses to settle an authorization with less than
 * 6 s left; on top of that come one or two Base blocks (2 s each) to get mined, the facilitator
 * or RPC round trips, and clock skew between client, server and chain. 15 s covers those with
 * room to spare while costing clients nothing (they sign validBefore = now + 300 s by default).
 */
export const SETTLEMENT_MARGIN_SECONDS = 15;

/** A settled payment: what the PAYMENT-RESPONSE header reports. */
export interface SettlementResult {
  /** Hash of the mined transferWithAuthorization transaction. */
  transaction: Hex;
  /** Network as the client named it. */
  network: string;
  payer: Hex;
}

export interface Settler {
  /**
   * Optional check before the handler runs (the facilitator's /verify). Throws PaymentError with
   * a reason the client can act on; any other error is treated as ours (500).
   */
  verify?(payment: VerifiedPayment): Promise<void>;
  /**
   * Charges the payment and resolves once it is final. Throws SettlementError when nothing was
   * charged, or when the outcome is unknown (then with `uncertain` set).
   */
  settle(payment: VerifiedPayment): Promise<SettlementResult>;
}

export interface SettlementErrorOptions {
  /** A transaction that was sent but not confirmed in time (EVM: its hash; Solana: its signature): it may still land. */
  broadcastTx?: Hex | string;
  /** The payment may have gone through (e.g. the facilitator stopped answering mid-settle). */
  uncertain?: boolean;
  /**
   * Nothing was charged, and retrying cannot change that: the token (or the facilitator, having
   * simulated it) refused this authorization. It is never run again.
   */
  permanent?: boolean;
  /**
   * What the payer can do now, said for the network (e.g. Solana: whether the transaction can still
   * land); the generic advice about the authorization's validBefore otherwise.
   */
  advice?: string;
  /** The facilitator's errorReason, when it gave one (resettle.ts reads it). */
  reason?: string;
  /** The transaction a failed settlement names (one that reverted). */
  transaction?: string;
  cause?: unknown;
}

/**
 * Settlement failed. `uncertain` (always so with `broadcastTx`): it may have gone through, so the
 * authorization must never be submitted again. Otherwise nothing was charged; `permanent`: the
 * token refused it, so running the job again for it would be work for free; else (an RPC or
 * facilitator outage) the payer may send the same authorization again.
 */
export class SettlementError extends Error {
  readonly broadcastTx?: Hex | string;
  readonly uncertain: boolean;
  readonly permanent: boolean;
  readonly advice?: string;
  readonly reason?: string;
  readonly transaction?: string;

  constructor(message: string, options: SettlementErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SettlementError";
    if (options.advice) this.advice = options.advice;
    if (options.reason) this.reason = options.reason;
    if (options.transaction) this.transaction = options.transaction;
    if (options.broadcastTx) this.broadcastTx = options.broadcastTx;
    this.uncertain = options.broadcastTx !== undefined || options.uncertain === true;
    this.permanent = !this.uncertain && options.permanent === true;
  }
}

/** Seconds of slack in an offered validity window, for clock skew between client and server. */
const CLOCK_SLACK_SECONDS = 30;

/**
 * maxTimeoutSeconds to offer: the configured default, or more when the job's deadline needs it.
 * Clients sign validBefore = now + maxTimeoutSeconds, and the gate needs validBefore to be at least
 * the deadline plus SETTLEMENT_MARGIN_SECONDS, so a one-hour job is offered a bit over an hour. The
 * deadline itself is bounded (MAX_DEADLINE_SECONDS, 7 days by default), so this is too.
 */
export function timeoutFor(configured: number, deadline: number | undefined, nowMs = Date.now()) {
  if (deadline === undefined) return configured;
  const needed =
    Math.ceil(deadline - nowMs / 1000) + SETTLEMENT_MARGIN_SECONDS + CLOCK_SLACK_SECONDS;
  return Math.max(configured, needed);
}
