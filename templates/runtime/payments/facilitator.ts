/**
 * Settlement through an x402 facilitator (X402_FACILITATOR_URL): the standard HTTP API,
 * POST /verify and POST /settle, each with {x402Version, paymentPayload, paymentRequirements}.
 * The facilitator submits the transfer and pays the gas; this server holds no key.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import { SettlementError, type Settler } from "./settlement.js";
import type { VerifiedPayment } from "../types.js";

type Hex = `0x${string}`;

/**
 * The facilitator could not be asked, or gave no usable answer. `uncertain`: the request may have
 * reached it and been acted on (a timeout, a dropped connection, an unreadable 2xx answer).
 */
export class FacilitatorError extends Error {
  constructor(
    message: string,
    readonly uncertain: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "FacilitatorError";
  }
}

/** Connection errors that prove the request never left this machine or reached the facilitator. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** fetch() wraps network failures as TypeError("fetch failed") with the system error as cause. */
function errorCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? err.cause : undefined;
  return isObject(cause) && typeof cause.code === "string" ? cause.code : undefined;
}

export function createFacilitatorClient(url: string, timeoutMs: number) {
  const base = url.replace(/\/+$/, "");

  async function call(path: "verify" | "settle", p: VerifiedPayment) {
    const endpoint = `${base}/${path}`;
    const request = {
      x402Version: p.x402Version,
      paymentPayload: p.payload, // verbatim: what the client signed and sent
      paymentRequirements: p.requirement,
    };
    let status: number;
    let text: string;
    try {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(timeoutMs), // covers reading the body too
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if (err instanceof Error && err.name === "TimeoutError")
        throw new FacilitatorError(
          `facilitator ${endpoint} did not answer within ${timeoutMs / 1000} s`,
          true,
          { cause: err },
        );
      const code = errorCode(err);
      const detail = code ?? (err instanceof Error ? err.message : String(err));
      throw new FacilitatorError(
        `facilitator ${endpoint} is unreachable (${detail})`,
        code === undefined || !NOT_SENT.has(code),
        { cause: err },
      );
    }
    if (status < 200 || status > 299)
      throw new FacilitatorError(
        `facilitator ${endpoint} answered HTTP ${status}: ${text.slice(0, 300)}`,
        false,
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!isObject(body))
      throw new FacilitatorError(
        `facilitator ${endpoint} answered HTTP ${status} with something that is not a JSON object`,
        true,
      );
    return body;
  }

  return {
    /** POST /verify: {isValid, invalidReason?, invalidMessage?, payer?}. */
    async verify(p: VerifiedPayment) {
      const body = await call("verify", p);
      if (typeof body.isValid !== "boolean")
        throw new FacilitatorError(`facilitator ${base}/verify answered without isValid`, false);
      return body as { isValid: boolean; invalidReason?: string; invalidMessage?: string };
    },
    /** POST /settle: {success, transaction, network, payer?, errorReason?, errorMessage?}. */
    async settle(p: VerifiedPayment) {
      const body = await call("settle", p);
      if (typeof body.success !== "boolean")
        throw new FacilitatorError(`facilitator ${base}/settle answered without success`, true);
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
  return {
    async verify(payment) {
      let answer: Awaited<ReturnType<typeof client.verify>>;
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
      let answer: Awaited<ReturnType<typeof client.settle>>;
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
      if (!answer.success)
        throw new SettlementError(
          `the facilitator could not settle the payment: ${reason(answer.errorReason, answer.errorMessage)}` +
            (tx ? ` (transaction ${tx})` : ""),
        );
      if (typeof tx !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(tx))
        throw new SettlementError(
          `the facilitator reported success without a transaction hash (${JSON.stringify(tx)}); the payment may or may not have been settled`,
          { uncertain: true },
        );
      return {
        transaction: tx as Hex,
        network: typeof answer.network === "string" ? answer.network : payment.network,
        payer: (typeof answer.payer === "string" ? answer.payer : payment.payer) as Hex,
      };
    },
  };
}
