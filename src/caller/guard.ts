/**
 * The payer's guard core, shared by `create-agent call` and every generated client (this file and the other
 * guard files are compiled into the CLI and copied verbatim into each client): what a hostile service can say
 * is read the way the code that signs reads it, and the payment that is about to leave the process is checked
 * itself, by the check of its network family (guard-evm.ts, guard-svm.ts; the registry payer-families.ts).
 *
 * - An offer's amount is read by its x402 version exactly as the exact scheme of that version signs it:
 *   v2 signs `amount`, v1 signs `maxAmountRequired`. Both must be decimal strings of atomic units; a second
 *   amount field must say the same. Any offer that breaks this refuses the whole answer: a service that
 *   says two things about a price is not paid at all.
 * - The signed payment (the PAYMENT-SIGNATURE / X-PAYMENT header value) is checked at the last moment
 *   before it is sent: its family's check reads what it signs, the rules every family shares (its head,
 *   the cap, the offers it can be for) are guard-signed.ts's. What is reported as paid is what it says.
 * - PayerFamily: the one interface a network family of payers implements (its networks, its check of a
 *   signed payment, its deadline limit).
 *
 * Web-standard APIs only (atob, TextDecoder): generated clients run in Node, Deno, Bun and browsers.
 */

/**
 * Why the guard refused: an offer it cannot trust, a signed payment it will not send, an answer too large, a
 * payer key it cannot read.
 */
export type PaymentGuardReason = "offer" | "signed" | "too-large" | "key";

export class PaymentGuardError extends Error {
  override name = "PaymentGuardError";
  constructor(
    readonly reason: PaymentGuardReason,
    message: string,
  ) {
    super(message);
  }
}

/** One way to pay that a 402 offers, with its amount read strictly (atomic units of the asset). */
export interface PaymentOffer {
  x402Version: 1 | 2;
  scheme: string;
  network: string;
  amount: bigint;
  asset: string;
  payTo: string;
}

/** The payment about to be sent, as its signed authorization says. */
export interface SignedPayment {
  x402Version: 1 | 2;
  network: string;
  /** Atomic units signed (the authorization's `value`). */
  amount: bigint;
  payer: string;
  payTo: string;
  asset: string;
}

export const ATOMIC_AMOUNT = /^\d{1,78}$/;

export function shown(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === undefined) return "missing";
  if (typeof value === "number" || typeof value === "bigint") return `the number ${String(value)}`;
  return `a${Array.isArray(value) ? "n array" : value === null ? " null" : ` ${typeof value}`}`;
}

/**
 * What a PaymentRequired's own `error` says, for a message: " (the service says: …)", on one line, without
 * control or direction characters, at most 300 characters; "" when it says nothing.
 */
export function theySay(error: unknown): string {
  if (typeof error !== "string" || error.trim() === "") return "";
  const text = error.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    " ",
  );
  return ` (the service says: ${text.length > 300 ? `${text.slice(0, 300)}…` : text})`;
}

export function isObjectRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The amount of one offer (`accepts` entry) as the exact scheme of `x402Version` signs it; throws when it is
 * not a decimal string, or when the other amount field is present and says something else.
 */
export function offerAmount(x402Version: 1 | 2, entry: Record<string, unknown>): bigint {
  const [signed, other] =
    x402Version === 1 ? ["maxAmountRequired", "amount"] : ["amount", "maxAmountRequired"];
  const value = entry[signed];
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw new PaymentGuardError(
      "offer",
      `"${signed}" (the amount an x402 v${x402Version} payer signs) is ${shown(value)}, not a decimal string of atomic units`,
    );
  if (other in entry) {
    const second = entry[other];
    if (
      typeof second !== "string" ||
      !ATOMIC_AMOUNT.test(second) ||
      BigInt(second) !== BigInt(value)
    )
      throw new PaymentGuardError(
        "offer",
        `"${other}" is ${shown(second)} while "${signed}" is ${JSON.stringify(value)}: the offer states two amounts`,
      );
  }
  return BigInt(value);
}

/** What `signableAmount` answers for an amount it cannot read: above any limit (2^256). */
export const UNREADABLE_AMOUNT = BigInt(2) ** BigInt(256);

/**
 * An x402 client's requirement's amount as the exact scheme of `x402Version` signs it (offerAmount), or
 * UNREADABLE_AMOUNT when it breaks a rule or the version is not 1 or 2: for price policies and hooks, where a
 * requirement that cannot be read must count as too dear.
 */
export function signableAmount(x402Version: number, requirement: object): bigint {
  if (x402Version !== 1 && x402Version !== 2) return UNREADABLE_AMOUNT;
  try {
    return offerAmount(x402Version, requirement as Record<string, unknown>);
  } catch {
    return UNREADABLE_AMOUNT;
  }
}

/**
 * Every offer of a decoded PaymentRequired object (v2 header, or v1 body), checked strictly; throws naming
 * the first entry that breaks a rule. No offer is dropped quietly: one bad entry refuses them all.
 */
export function readOffers(paymentRequired: unknown): PaymentOffer[] {
  const refuse = (problem: string) =>
    new PaymentGuardError("offer", `the service's payment offer ${problem}`);
  if (!isObjectRecord(paymentRequired)) throw refuse("is not a JSON object");
  const version = paymentRequired.x402Version;
  if (version !== 1 && version !== 2)
    throw refuse(`has x402Version ${shown(version)}; this payer speaks x402 versions 1 and 2`);
  const accepts = paymentRequired.accepts;
  if (!Array.isArray(accepts) || accepts.length === 0)
    throw refuse(`has no "accepts" entries${theySay(paymentRequired.error)}`);
  return accepts.map((entry: unknown, index) => {
    const where = `accepts[${index}]`;
    if (!isObjectRecord(entry)) throw refuse(`${where} is not an object`);
    let amount: bigint;
    try {
      amount = offerAmount(version, entry);
    } catch (error) {
      throw refuse(`${where}: ${(error as Error).message}`);
    }
    const text = (key: string): string => {
      const value = entry[key];
      if (typeof value !== "string" || value === "")
        throw refuse(`${where}: "${key}" is ${shown(value)}, not a string`);
      return value;
    };
    return {
      x402Version: version,
      scheme: text("scheme"),
      network: text("network"),
      amount,
      asset: text("asset"),
      payTo: text("payTo"),
    };
  });
}

/** Base64 (standard or URL alphabet) JSON, decoded with web APIs; throws PaymentGuardError(`reason`). */
export function decodeBase64Json(value: string, what: string, reason: PaymentGuardReason): unknown {
  try {
    const binary = atob(value.trim().replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new PaymentGuardError(reason, `${what} is not base64 JSON`);
  }
}

/**
 * The offers of a 402 answer, read from where the official x402 client reads them: the PAYMENT-REQUIRED
 * header when there is one, else a body that says `x402Version: 1`. undefined when it has neither (an error
 * 402 with no offer); throws PaymentGuardError when what it offers breaks a rule.
 */
export function offersOf402(headers: Headers, body: string): PaymentOffer[] | undefined {
  const header = headers.get("payment-required");
  if (header) return readOffers(decodeBase64Json(header, "the PAYMENT-REQUIRED header", "offer"));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  return isObjectRecord(parsed) && parsed.x402Version === 1 ? readOffers(parsed) : undefined;
}

/** The payment header a request carries (x402 v2 PAYMENT-SIGNATURE or v1 X-PAYMENT), if any. */
export function paymentHeaderOf(headers: Headers): string | undefined {
  return headers.get("payment-signature") ?? headers.get("x-payment") ?? undefined;
}

/** A payer family's id: the kind of payment its networks take. */
export type PayerFamilyId = "evm" | "svm";

/** What a payment may sign at most, who must sign it, and how long it may stay valid. */
export interface SigningLimit {
  maxAtomic: bigint;
  payer: string;
  /**
   * The longest, in seconds from now, a payment that says when it expires may stay valid (signingWindow):
   * a service offering a window of years could hold the authorization and settle it at any time.
   */
  validForAtMost: number;
}

/** How long past the job's deadline a payment may stay valid (a seller's own default window is 5 minutes). */
export const WINDOW_PAST_DEADLINE_SECONDS = 3600;

/** SigningLimit.validForAtMost for a job due in `deadlineSeconds`: its deadline plus an hour. */
export function signingWindow(deadlineSeconds: number): number {
  return Math.ceil(deadlineSeconds) + WINDOW_PAST_DEADLINE_SECONDS;
}

/**
 * One network family of payers (guard-evm.ts, guard-svm.ts), registered in payer-families.ts, the only
 * file that names them: its networks, which offers it pays, its check of the payment about to be sent.
 */
export interface PayerFamily {
  id: PayerFamilyId;
  /** Its networks a payer knows by name: x402 v1 name -> CAIP-2 id. */
  networks: Readonly<Record<string, string>>;
  /** Whether it pays on `network` (a CAIP-2 id): the offers on it are this family's to sign. */
  pays(network: string): boolean;
  /** The latest deadline, in seconds from now, a job paid in this family may have; undefined: none. */
  maxDeadlineSeconds?: number;
  /** Whether a decoded payment's `payload` is this family's kind of payment. */
  claims(payload: Record<string, unknown>): boolean;
  /**
   * Checks the payment `header` about to be sent against the offers checked and the limit, with the reader
   * its payer loaded (if it needs one); returns what was signed, throws PaymentGuardError("signed") else.
   */
  checkSigned(
    header: string,
    offers: readonly PaymentOffer[],
    limit: SigningLimit,
    reader: object | undefined,
  ): SignedPayment | Promise<SignedPayment>;
}

/**
 * What a family's payer hands the shared payer core (`call`, the generated client): the address that signs,
 * the reader its guard check needs, and how it registers its official x402 scheme client on `client`.
 */
export interface FamilyPayer<Client> {
  address: string;
  reader: object | undefined;
  register(client: Client): void;
}
