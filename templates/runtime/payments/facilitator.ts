/**
 * Settlement through an x402 facilitator (X402_FACILITATOR_URL): the standard HTTP API,
 * POST /verify and POST /settle, each with {x402Version, paymentPayload, paymentRequirements}.
 * The facilitator submits the transfer and pays the gas; this server holds no key.
 * Requests, credentials and the redaction of their answers: facilitator-http.ts. At startup
 * (checkFacilitator, facilitator-supported.ts) its GET /supported must list our network:
 * otherwise it would refuse every payment, or fail to settle it after the job ran.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import type { Authenticate } from "./facilitator-credentials.js";
import { ask, displayUrl, FacilitatorError, type FacilitatorRequest } from "./facilitator-http.js";
import { isObject } from "../ops/json-object.js";
import { SettlementError, type Settler } from "./settlement.js";
import type { VerifiedPayment } from "../types.js";

export { displayUrl, FacilitatorError, type FacilitatorRequest } from "./facilitator-http.js";
export {
  checkFacilitator,
  describeKinds,
  fetchSupported,
  matchingKinds,
  networkLabel,
  SETTLE_DIRECTLY,
  SUPPORTED_TIMEOUT_MS,
  type SupportedKind,
  supportProblem,
} from "./facilitator-supported.js";

type Hex = `0x${string}`;

/**
 * x402's answer for a transfer a facilitator sent but did not see confirmed: asked again with the
 * same payment, it looks that transaction up instead of sending another (@x402/core's
 * PendingSettlementStore).
 */
export const SETTLEMENT_PENDING = "settlement_pending";

const isTxHash = (tx: unknown): tx is Hex =>
  typeof tx === "string" && /^0x[0-9a-fA-F]{64}$/.test(tx);

/** An x402 facilitator's /verify and /settle. */
export type FacilitatorClient = ReturnType<typeof createFacilitatorClient>;

export function createFacilitatorClient(
  url: string,
  timeoutMs: number,
  authenticate?: Authenticate,
) {
  const base = url.replace(/\/+$/, "");

  /** POSTs to /verify or /settle; the answer must be a JSON object whose `field` is a boolean. */
  async function call(
    path: "verify" | "settle",
    p: FacilitatorRequest,
    field: "isValid" | "success",
  ) {
    const endpoint = `${base}/${path}`;
    const shown = displayUrl(endpoint);
    const request = {
      x402Version: p.x402Version,
      paymentPayload: p.payload, // verbatim: what the client signed and sent
      paymentRequirements: p.requirement,
    };
    const { status, body } = await ask(
      endpoint,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request),
      },
      timeoutMs,
      authenticate,
      // A settle request refused for its credentials is treated as unconfirmed, like a timeout:
      // a proxy or load balancer may answer 401/403 after the facilitator acted (never run again).
      path === "settle",
    );
    if (!isObject(body))
      throw new FacilitatorError(
        `facilitator ${shown} answered HTTP ${status} with something that is not a JSON object`,
        true,
      );
    // Without it a settle answer is uncertain (the facilitator may have acted); a verify answer is not.
    if (typeof body[field] !== "boolean")
      throw new FacilitatorError(
        `facilitator ${shown} answered without ${field}`,
        path === "settle",
      );
    return body;
  }

  return {
    /** The facilitator's base URL (may hold credentials: show it with displayUrl). */
    url,
    /** POST /verify: {isValid, invalidReason?, invalidMessage?, payer?}. */
    async verify(p: FacilitatorRequest) {
      const body = await call("verify", p, "isValid");
      return body as { isValid: boolean; invalidReason?: string; invalidMessage?: string };
    },
    /** POST /settle: {success, transaction, network, payer?, errorReason?, errorMessage?}. */
    async settle(p: FacilitatorRequest) {
      const body = await call("settle", p, "success");
      return body as {
        success: boolean;
        transaction?: string;
        network?: string;
        payer?: string;
        errorReason?: string;
        errorMessage?: string;
      };
    },
  };
}

/**
 * "code: message" from a facilitator's answer, on one line. Only the first paragraph of the
 * message is kept: the reference facilitator passes on viem's multi-paragraph error texts.
 */
function reason(code: unknown, message: unknown): string {
  const text = (s: unknown) =>
    typeof s === "string"
      ? (s.split("\n\n")[0] ?? "").replace(/\s+/g, " ").trim().slice(0, 300)
      : "";
  return [text(code), text(message)].filter((s) => s !== "").join(": ") || "no reason given";
}

export function createFacilitatorSettler(url: string, timeoutMs: number): Settler {
  const client = createFacilitatorClient(url, timeoutMs);
  return settlerFor(() => client);
}

/**
 * A Settler over the facilitator `pick` returns for each payment (a FacilitatorClient, or a
 * PaymentError refusing the payment before anything runs when no facilitator settles its kind).
 */
export function settlerFor(
  pick: (payment: VerifiedPayment) => FacilitatorClient | Promise<FacilitatorClient>,
): Settler {
  return {
    async verify(payment) {
      // No facilitator for this kind of payment: pick refuses it (PaymentError), nothing runs.
      const client = await pick(payment);
      let answer: Awaited<ReturnType<FacilitatorClient["verify"]>>;
      try {
        answer = await client.verify(payment);
      } catch (err) {
        // Fail closed: without the facilitator's word the job is not run.
        const message = err instanceof Error ? err.message : String(err);
        throw new PaymentError(
          `payment could not be verified, so the job was not run: ${message}; try again later`,
          { cause: err, code: "facilitator_unavailable" },
        );
      }
      if (!answer.isValid)
        throw new PaymentError(
          `the facilitator refused the payment: ${reason(answer.invalidReason, answer.invalidMessage)}`,
          { code: "facilitator_refused" },
        );
    },

    async settle(payment) {
      let client: FacilitatorClient;
      try {
        client = await pick(payment);
      } catch (err) {
        // Nothing was sent anywhere: not charged.
        throw new SettlementError(err instanceof Error ? err.message : String(err), { cause: err });
      }
      let answer: Awaited<ReturnType<FacilitatorClient["settle"]>>;
      try {
        answer = await client.settle(payment);
      } catch (err) {
        if (!(err instanceof FacilitatorError)) throw err;
        throw new SettlementError(
          err.uncertain
            ? `${err.message}; the payment may or may not have been settled`
            : err.message,
          { uncertain: err.uncertain, cause: err },
        );
      }
      const tx = answer.transaction;
      const why = reason(answer.errorReason, answer.errorMessage);
      // Sent, but its receipt not seen in time (x402's settle retry, resettle.ts, reaches it); also
      // when the facilitator could not keep it for that retry (its reason is then another).
      const pending =
        answer.errorReason === SETTLEMENT_PENDING ||
        (typeof answer.errorMessage === "string" &&
          answer.errorMessage.startsWith(SETTLEMENT_PENDING));
      if (!answer.success && pending)
        throw new SettlementError(
          `the facilitator sent the transfer but has not seen it confirmed: ${why}; the payment may or may not have been settled`,
          { uncertain: true, ...(isTxHash(tx) && { broadcastTx: tx }), reason: SETTLEMENT_PENDING },
        );
      // Any other answer of success: false is the facilitator's verdict on this authorization (it
      // simulates the transfer first): not an outage, so the authorization is not run again.
      if (!answer.success)
        throw new SettlementError(
          `the facilitator could not settle the payment: ${why}` +
            (tx ? ` (transaction ${tx})` : ""),
          {
            permanent: true,
            ...(answer.errorReason && { reason: answer.errorReason }),
            ...(isTxHash(tx) && { transaction: tx }),
          },
        );
      if (!isTxHash(tx))
        throw new SettlementError(
          `the facilitator reported success without a transaction hash (${JSON.stringify(tx)}); the payment may or may not have been settled`,
          { uncertain: true },
        );
      return {
        transaction: tx,
        network: typeof answer.network === "string" ? answer.network : payment.network,
        payer: (typeof answer.payer === "string" ? answer.payer : payment.payer) as Hex,
      };
    },
  };
}
