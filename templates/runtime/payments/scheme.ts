/**
 * One network the gate takes payment on, as the paid pipeline sees it: the family's module (EVM
 * today, payments/evm/) answers offer, verify, replay key, confirm and settle for it. The gate
 * (gate.ts) holds one per offered network and hands each payment to the network it names.
 * Part of your project: edit freely.
 */
import type { Capability, PaidPayment } from "../types.js";
import type { NetworkFamily } from "./networks.js";
import type { PaymentOffer } from "./x402.js";

/**
 * The payment a client sent: a header's name (for messages) and value, or (MCP) where in the
 * request it was and the PaymentPayload object itself.
 */
export type SentPayment = { name: string; value: string } | { name: string; object: unknown };

/** What the chain says of a settlement that was sent but not confirmed (reconcile.ts). */
export type Reconciled =
  | { status: "confirmed"; transaction: string }
  | { status: "failed"; reason: string }
  | { status: "unknown"; reason: string };

/** An unconfirmed settlement's payment as it was sent to settle (reconcile's `again`). */
export type SettleAgain = Pick<
  PaidPayment,
  "x402Version" | "network" | "payer" | "payload" | "requirement"
>;

/** A settled payment, on any network: what PAYMENT-RESPONSE reports. */
export interface Receipt {
  /** The transaction (EVM: its 0x hash; Solana: its base58 signature). */
  transaction: string;
  network: string;
  payer: string;
}

export interface NetworkScheme {
  readonly family: NetworkFamily;
  /** CAIP-2 id (x402 v2) and v1 name (the CAIP-2 id when x402 v1 has none) of the network. */
  readonly caip2: string;
  readonly v1Name: string;
  /**
   * True when an offer's maxTimeoutSeconds is the payment's own life (Solana: its blockhash's), not
   * stretched to the job's deadline as the gate does for the others.
   */
  readonly fixedWindow?: boolean;
  /** What we ask for on this network to run `capability` for a job due at `deadline`. */
  offer(capability: Capability, resourceUrl: string, deadline?: number): PaymentOffer;
  /** Checks a payment that names this network; throws PaymentError saying what is wrong. */
  verify(
    sent: SentPayment,
    capability: Capability,
    job: { deadline: number },
    resourceUrl: string,
  ): Promise<PaidPayment>;
  /** The payment's identity in the ledger: one payment pays for one job, across instances. */
  replayKey(payment: PaidPayment): string;
  /**
   * The replay key of a payment as sent, by decoding only (nothing checked; undefined when it
   * does not decode): a stored answer for this exact payment is looked up with it before the
   * payment's time window is checked. Absent: looked up after verification only.
   */
  replayKeyOf?(sent: SentPayment): string | undefined;
  /** Chain-state checks, after the payment is reserved; throws PaymentError. */
  confirm(payment: PaidPayment): Promise<void>;
  /** Charges the payment; throws SettlementError (settlement.ts) when it could not. */
  settle(payment: PaidPayment): Promise<Receipt>;
  /**
   * What became of a settlement sent but not confirmed: the payment's replay key, its transaction
   * (when known), validBefore, (Solana) the transaction's blockhash, and its payer (Solana: whose
   * transactions are searched when the transaction is not known). Absent: always unknown (the
   * entry expires with the payment).
   */
  reconcile?(
    auth: string,
    tx: string | undefined,
    validBefore: number,
    blockhash?: string,
    payer?: string,
    /** What it pays (atomic units): a transaction found without being recorded must pay it to us. */
    amount?: string,
    /** Given only while the payment's caller waits for the answer: it may be settled again. */
    again?: SettleAgain,
  ): Promise<Reconciled>;
  /**
   * Whether a job due at `deadline` (Unix seconds) can be paid on this network: a Solana payment
   * dies with its blockhash, so long jobs cannot be. Absent: always. Says why not, else undefined.
   */
  unpayable?(deadline: number, nowMs?: number): string | undefined;
  /** One line for the startup log: how payments on this network are checked and settled (no secrets). */
  describe(): string;
}
