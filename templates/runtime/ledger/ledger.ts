/**
 * The payment ledger: what makes "one authorization = one handler run = at most one charge" hold,
 * inside one process (memory.ts, the default) or across every instance that shares a Redis
 * (ledger/redis/, chosen by REDIS_URL). Part of your project: edit freely.
 *
 * An authorization (an EIP-3009 transfer, identified by chain, token, payer and nonce) goes:
 *
 *   free --reserve--> pending (a lease held by one request, named by a token)
 *   pending --release--> free          the job failed before anything was charged
 *   pending --markSettled--> spent     charged (or maybe charged); its result is cached with it
 *   pending --lease expires--> free    the instance holding it died; nothing can still settle it
 *   pending --hold--> held             the job succeeded but its caller left before settlement: not
 *                                      charged; the answer waits for an identical retry
 *   held --claimHeld--> claimed        one identical retry settles it (others: in flight)
 *   claimed --markSettled--> spent     charged, the answer cached and returned to that retry
 *   claimed --returnHeld / lease expires--> held   the retry could not settle (or left): held again
 * A held authorization runs no other job for its remaining life; it is never charged unless an
 * identical retry (same payment, capability and input, over either transport) is there to receive
 * the answer.
 *
 * A live instance renews its lease (lease.ts) for as long as its handler or its settlement is
 * still running, abandoned handlers included, so one authorization never has two handlers running.
 */
import type { PaidPayment, VerifiedPayment } from "../types.js";

/** A response as the pipeline sends it, its body already serialized (so it is stored and resent byte for byte). */
export interface StoredResult {
  status: number;
  headers: Record<string, string>;
  /** The JSON body, serialized. */
  body: string;
}

/**
 * What reserve() (or claimHeld()) found: the authorization is now ours (with the token that proves
 * it), in use by another request, spent, or held (an answer waiting for an identical retry).
 */
export type Reservation =
  | { status: "reserved"; token: string }
  | { status: "in-flight" }
  | { status: "settled" }
  | { status: "held" };

/**
 * A job's answer as the ledger keeps it, with what identifies the request that produced it: an
 * answer is returned only to a retry with the same payment and the same request (jobs/identity.ts).
 */
export interface JobResult {
  jobId: string;
  value: StoredResult;
  /** Hash of the capability and the canonical input. */
  request: string;
  /** Hash of the payment as sent (the signed payload, canonical JSON). */
  payment: string;
  /** Held because its settlement was sent but not confirmed: what a reconciler checks (jobs/reconcile.ts). */
  unconfirmed?: UnconfirmedSettlement;
}

/** A settlement sent but not confirmed: enough to ask the chain what became of it, and to answer. */
export interface UnconfirmedSettlement {
  /** The transaction sent, when known. */
  tx?: string;
  x402Version: number;
  /** The payment's network, as the client named it (the receipt's), and its payer. */
  network: string;
  payer: string;
  /** Unix seconds: after this (and the chain's margin) nothing can charge the payment any more. */
  validBefore: number;
  /** Solana: the transaction's blockhash (once expired, a transaction not landed never will). */
  blockhash?: string;
  /** The amount it pays (atomic units): a transaction found without being recorded must pay it. */
  amount?: string;
  /** The payment and requirement as sent to settle: a facilitator can be asked again (evm/resettle.ts). */
  payload?: Record<string, unknown>;
  requirement?: Record<string, unknown>;
}

/** A result found by getResult: settled (charged, the answer to replay) or held (not charged yet). */
export interface FoundResult extends JobResult {
  settled: boolean;
}

export interface Ledger {
  /** One line for the startup log: where the ledger lives and what it protects. Never includes secrets. */
  describe(): string;
  /** Atomically claims `auth` for `leaseMs`, unless it is pending (another request's) or spent. */
  reserve(auth: string, leaseMs: number): Promise<Reservation>;
  /** Extends our pending lease to `leaseMs` from now. False when it is no longer ours (expired, or spent). */
  renew(auth: string, token: string, leaseMs: number): Promise<boolean>;
  /** Frees `auth` if it is still the pending reservation named by `token`; never frees a spent one. */
  release(auth: string, token: string): Promise<void>;
  /**
   * Marks `auth` spent for `ttlMs` (whoever holds it: it was charged or may have been) and, in the
   * same atomic step, caches `result` for identical retries (same authorization and request).
   */
  markSettled(auth: string, ttlMs: number, result?: JobResult): Promise<void>;
  /**
   * Marks `auth` held for `ttlMs` (its job succeeded, its caller left before settlement: nothing
   * charged) and, in the same atomic step, keeps `result` (unsettled) for an identical retry.
   */
  hold(auth: string, ttlMs: number, result: JobResult): Promise<void>;
  /**
   * Atomically claims a held `auth` for `leaseMs` so one retry settles it: "reserved" with a token,
   * or what it is instead (a claim whose lease ran out is held again, and can be claimed).
   */
  claimHeld(auth: string, leaseMs: number): Promise<Reservation>;
  /** Our claim on a held `auth` (named by `token`) ends unsettled: held again. */
  returnHeld(auth: string, token: string): Promise<void>;
  /**
   * The result kept for `auth`, settled or held (one authorization runs one job, so it has at most
   * one result; its jobId, request and payment say which request made it).
   */
  getResult(auth: string): Promise<FoundResult | undefined>;
  /**
   * Held results whose settlement is unconfirmed (hold() with `unconfirmed` lists them), oldest
   * first, at most `limit`; a listed one may be resolved already (forgetUnconfirmed drops it).
   */
  listUnconfirmed(limit: number): Promise<Array<{ auth: string; jobId: string }>>;
  forgetUnconfirmed(auth: string, jobId: string): Promise<void>;
  /**
   * Runs `work` while holding the lock `name`, exclusive across every instance sharing the ledger
   * (direct settlement uses it so one settler account sends one transaction at a time). Waits at
   * most `holdMs` for the lock, which frees itself `holdMs` after it was taken if its holder died.
   */
  exclusive<T>(name: string, holdMs: number, work: () => Promise<T>): Promise<T>;
  /**
   * Keeps `value` under `key` for `ttlMs`, replacing what was there (the A2A transport's tasks, so a
   * task's next turn may land on any instance sharing the ledger). Optional: a ledger of your own
   * without it keeps A2A tasks in this process only.
   */
  putRecord?(key: string, value: string, ttlMs: number): Promise<void>;
  /** The value putRecord kept under `key`, until its ttl ran out. */
  getRecord?(key: string): Promise<string | undefined>;
  /**
   * Keeps `value` under the claim `key` for `ttlMs` unless a claim is kept there, in one atomic
   * step across every instance sharing the ledger: undefined when this call kept it, else the value
   * already kept (the A2A transport's claim of a task by its first payment: one task, one job).
   * Claims are not records: putRecord and getRecord neither see nor replace them. A ledger of
   * your own offers all three of putRecord, getRecord and claimRecord, or none.
   */
  claimRecord?(key: string, value: string, ttlMs: number): Promise<string | undefined>;
  /** True when the store answers now (GET /health reports it). */
  ping(): Promise<boolean>;
  /** Closes connections (graceful shutdown). */
  close(): Promise<void>;
}

/** The ledger could not be read or written: paid jobs are refused (503) until it is back. */
export class LedgerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LedgerUnavailableError";
  }
}

/** `chainId:asset:from:nonce`, lowercased: the identity of an EIP-3009 authorization. */
export function authorizationKey(
  payment: Pick<VerifiedPayment, "chainId" | "asset" | "authorization">,
): string {
  const { chainId, asset, authorization: a } = payment;
  return `${chainId}:${asset}:${a.from}:${a.nonce}`.toLowerCase();
}

/**
 * Milliseconds to remember a spent authorization: until its validBefore (after that the token
 * contract refuses it anyway, so forgetting it is safe), and at least 1 s.
 */
export function authorizationTtlMs(payment: PaidPayment, nowMs = Date.now()): number {
  return Math.max(1000, validBefore(payment) * 1000 - nowMs);
}

/** Unix seconds after which the payment can no longer be charged (its head's validBefore). */
export function validBefore(payment: PaidPayment): number {
  return payment.validBefore;
}
