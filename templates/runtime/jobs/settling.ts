/**
 * A settlement is written down before it is sent (the ledger record `settling:<auth>`, with the answer
 * it pays for and what identifies its payment and request), and the note ended once its outcome is
 * recorded. A process killed in between (kill -9, a crash) leaves it: whoever next meets the payment
 * refused as used or in use (an identical retry on any instance, the job's next worker), once nobody
 * is on it any more, holds that answer as an unconfirmed settlement and asks the chain (reconcile.ts):
 * confirmed, the answer with its receipt, charged once; never "sign a new payment" for a payment that
 * paid. Without a ledger that keeps records, or an RPC to ask (X402_RPC_URL), it is as before.
 * Part of your project: edit freely.
 */
import type { PaymentError } from "../errors.js";
import { validBefore, type FoundResult, type JobResult } from "../ledger/ledger.js";
import type { PaidPayment } from "../types.js";
import { notOurs } from "./ledger-step.js";
import type { JobAnswer } from "./outcome.js";
import { ledgerStep, type PaidJob, refuse } from "./paid-steps.js";
import { unconfirmedTtlMs } from "./reconcile.js";

/** How long the check of a left note claims the authorization (then it is held with the answer). */
const CLAIM_MS = 10_000;

/** What the notes take from storedAnswers (stored-answer.ts). */
export interface NoteParts {
  paymentId(): string;
  requestId(): string;
  settledMeanwhile(auth: string): Promise<JobAnswer | undefined>;
  reconcileHeld(auth: string, found: FoundResult): Promise<JobAnswer>;
  unconfirmed(payment: PaidPayment, settled: { broadcastTx?: string }, body: string): JobResult;
  quietly(operation: string, work: () => Promise<void>): Promise<void>;
}

/** The ledger record of a settlement of `auth` started and not yet recorded (empty once it ended). */
export const settlingKey = (auth: string): string => `settling:${auth}`;

export function settlingNotes(p: PaidJob, parts: NoteParts) {
  const { ledger } = p.s;

  /** The note of a settlement of this payment and request started under `auth`, if one was left. */
  const noteOf = async (auth: string): Promise<JobResult | undefined> => {
    if (!ledger.getRecord) return undefined;
    const note = await ledgerStep(p, "read a settlement's note", () =>
      ledger.getRecord!(settlingKey(auth)),
    );
    const found = note ? (JSON.parse(note) as JobResult) : undefined;
    const ours = found?.payment === parts.paymentId() && found.request === parts.requestId();
    return ours ? found : undefined;
  };

  /** Whether `auth` is now reserved by this request (nobody held it: its settler is gone). */
  const reserved = async (auth: string): Promise<boolean> => {
    const claim = await ledgerStep(p, "reserve the authorization", () =>
      ledger.reserve(auth, CLAIM_MS),
    );
    return claim.status === "reserved";
  };

  return {
    /**
     * Writes down that `payment`'s settlement starts, with its answer; returns what ends the note once
     * the outcome is recorded. A ledger without records, or one failing here, settles as before.
     */
    async settling(payment: PaidPayment, body: string): Promise<() => Promise<void>> {
      const at = settlingKey(p.s.gate.replayKey(payment));
      if (!ledger.putRecord) return async () => undefined;
      const note = JSON.stringify(parts.unconfirmed(payment, {}, body));
      const ttlMs = unconfirmedTtlMs(validBefore(payment));
      await parts.quietly("note a settlement", () => ledger.putRecord!(at, note, ttlMs));
      return () => parts.quietly("end a settlement's note", () => ledger.putRecord!(at, "", 1));
    },

    /**
     * Refuses the payment (`retry`: with a new offer), unless a settlement of it for this request was
     * started and never recorded, and nobody is on it now (`own()` claims it: by default a reservation
     * no live request holds; one that does gets "in use"): then that answer, held until the chain says.
     */
    async refused(
      auth: string | undefined,
      error: PaymentError,
      retry = true,
      own?: () => Promise<boolean>,
    ): Promise<JobAnswer> {
      const note = auth === undefined ? undefined : await noteOf(auth);
      if (!note || auth === undefined) return refuse(p, error, retry);
      if (!(own ? await own() : await reserved(auth))) {
        // Its settler is on it, or recorded it meanwhile: that answer.
        return (await parts.settledMeanwhile(auth)) ?? refuse(p, notOurs("in-flight"), false);
      }
      const ttlMs = unconfirmedTtlMs(note.unconfirmed!.validBefore);
      await ledgerStep(p, "hold an interrupted settlement", () => ledger.hold(auth, ttlMs, note));
      p.logger.warn(
        "a settlement of this payment was started and never recorded: asking the chain",
      );
      return parts.reconcileHeld(auth, { ...note, settled: false });
    },
  };
}
