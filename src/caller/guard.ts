/**
 * The payer's guard, shared by `create-agent call` and every generated client (this one file is compiled
 * into the CLI and copied verbatim into each client): what a hostile service can say is read the way the
 * code that signs reads it, and the payment that is about to leave the process is checked itself.
 *
 * - An offer's amount is read by its x402 version exactly as the exact scheme of that version signs it:
 *   v2 signs `amount`, v1 signs `maxAmountRequired`. Both must be decimal strings of atomic units; a second
 *   amount field must say the same. Any offer that breaks this refuses the whole answer: a service that
 *   says two things about a price is not paid at all.
 * - The signed payment (the PAYMENT-SIGNATURE / X-PAYMENT header value) is decoded and checked at the last
 *   moment before it is sent: an EIP-3009 transfer authorization from the payer, for one of the offers
 *   checked, to that offer's payee, of at most the cap. What is reported as paid is what it says.
 *   On Solana the payment is a partially signed transaction: it is decoded (by a SolanaReader, built on
 *   @solana/kit and loaded only when a Solana offer is taken, so this file imports nothing) and must hold
 *   exactly one SPL TransferChecked of the offer's mint, from the payer's own token account to the
 *   associated token account of the offer's payee, of the offer's amount and at most the cap, and nothing
 *   else but compute-budget and memo instructions; the payer must not be its fee payer.
 * - Every answer is read up to a size limit, so an answer with no end cannot grow the caller's memory.
 *
 * Web-standard APIs only (atob, TextDecoder, streams): generated clients run in Node, Deno, Bun and browsers.
 */

/** The most bytes read of one answer, by what it is; past it the answer is refused (documented limits). */
export const ANSWER_LIMITS = {
  /** GET /about, the capability declaration: 1 MiB. */
  about: 1024 * 1024,
  /** A 402 answer's body, the payment offer: 256 KiB. */
  offer: 256 * 1024,
  /** A job result or error body: 16 MiB. */
  result: 16 * 1024 * 1024,
} as const;

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

const ATOMIC_AMOUNT = /^\d{1,78}$/;

function shown(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === undefined) return "missing";
  if (typeof value === "number" || typeof value === "bigint") return `the number ${String(value)}`;
  return `a${Array.isArray(value) ? "n array" : value === null ? " null" : ` ${typeof value}`}`;
}

function isObjectRecord(value: unknown): value is Record<string, unknown> {
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
  if (!Array.isArray(accepts) || accepts.length === 0) throw refuse(`has no "accepts" entries`);
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
function decodeBase64Json(value: string, what: string, reason: PaymentGuardReason): unknown {
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

/** The head of a signed payment: its x402 version, scheme and network, and (v2) the offer it accepts. */
interface SignedHead {
  decoded: Record<string, unknown>;
  version: 1 | 2;
  scheme: unknown;
  network: unknown;
  /** v2: the accepted offer's asset, as written. */
  acceptedAsset: unknown;
  /** v2: the accepted offer's amount, read as the exact scheme of v2 signs it. */
  acceptedAmount: bigint | undefined;
}

/** Decodes a payment header about to be sent and reads its head, or refuses it (`refuse`'s words). */
function signedHead(header: string, refuse: (problem: string) => PaymentGuardError): SignedHead {
  const decoded = decodeBase64Json(header, "the payment header about to be sent", "signed");
  if (!isObjectRecord(decoded)) throw refuse("is not a JSON object");
  const version = decoded.x402Version;
  if (version !== 1 && version !== 2) throw refuse(`has x402Version ${shown(version)}`);
  if (version === 1)
    return {
      decoded,
      version,
      scheme: decoded.scheme,
      network: decoded.network,
      acceptedAsset: undefined,
      acceptedAmount: undefined,
    };
  const accepted = decoded.accepted;
  if (!isObjectRecord(accepted)) throw refuse(`names no "accepted" offer`);
  let acceptedAmount: bigint;
  try {
    acceptedAmount = offerAmount(2, accepted);
  } catch (error) {
    throw refuse(`accepts an offer whose ${(error as Error).message}`);
  }
  const { scheme, network, asset: acceptedAsset } = accepted;
  return { decoded, version, scheme, network, acceptedAsset, acceptedAmount };
}

/**
 * Checks the payment a request is about to carry, at the last moment before it is sent: it must be an
 * EIP-3009 transfer authorization (the exact scheme on EVM, the only one this payer signs) from `payer`,
 * whose signed `value` is a decimal string of at most `maxAtomic`, for one of `offers` (same x402 version,
 * scheme, network, payee, amount and, in v2, asset). Returns what was signed; throws otherwise.
 */
export function checkSignedPayment(
  header: string,
  offers: readonly PaymentOffer[],
  limit: { maxAtomic: bigint; payer: string },
): SignedPayment {
  const refuse = (problem: string) =>
    new PaymentGuardError("signed", `the payment about to be sent ${problem}; it was not sent`);
  const { decoded, version, scheme, network, acceptedAsset, acceptedAmount } = signedHead(
    header,
    refuse,
  );
  const asset = typeof acceptedAsset === "string" ? acceptedAsset : undefined;
  const inner = decoded.payload;
  const authorization = isObjectRecord(inner) ? inner.authorization : undefined;
  if (
    !isObjectRecord(inner) ||
    !isObjectRecord(authorization) ||
    typeof inner.signature !== "string"
  )
    throw refuse(
      "is not an EIP-3009 transfer authorization, the only kind this payer signs (the exact scheme in USDC on an EVM network)",
    );
  const { value, from, to } = authorization;
  if (typeof value !== "string" || !ATOMIC_AMOUNT.test(value))
    throw refuse(`signs a value of ${shown(value)}, not a decimal string of atomic units`);
  const amount = BigInt(value);
  if (typeof from !== "string" || typeof to !== "string")
    throw refuse("has no payer or payee address in its authorization");
  if (amount > limit.maxAtomic)
    throw refuse(`signs ${amount} atomic units, more than the ${limit.maxAtomic} allowed`);
  if (acceptedAmount !== undefined && acceptedAmount !== amount)
    throw refuse(`signs ${amount} atomic units for an offer of ${acceptedAmount}`);
  if (from.toLowerCase() !== limit.payer.toLowerCase())
    throw refuse(`is signed for the account ${from}, not the payer ${limit.payer}`);
  const offer = offers.find(
    (o) =>
      o.x402Version === version &&
      o.scheme === scheme &&
      o.network === network &&
      o.amount === amount &&
      o.payTo.toLowerCase() === to.toLowerCase() &&
      (asset === undefined || o.asset.toLowerCase() === asset.toLowerCase()),
  );
  if (!offer)
    throw refuse(
      `(${amount} atomic units to ${to} on ${String(network)}) matches none of the offers that were checked`,
    );
  return {
    x402Version: version,
    network: offer.network,
    amount,
    payer: from,
    payTo: offer.payTo,
    asset: offer.asset,
  };
}

/**
 * The whole body of `response`, read up to `limit` bytes: a longer one (by Content-Length, or as it
 * streams) is cancelled and refused with PaymentGuardError("too-large") naming `what` and the limit.
 */
export async function readLimited(
  response: Response,
  limit: number,
  what: string,
): Promise<Uint8Array<ArrayBuffer>> {
  const tooLarge = () =>
    new PaymentGuardError(
      "too-large",
      `${what} is larger than ${describeBytes(limit)}, the most this caller reads of one answer`,
    );
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const whole = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    whole.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return whole;
}

function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

/** The networks a payer knows by name: x402 v1 name -> CAIP-2 id (the server's network table, same ids). */
export const PAYER_NETWORKS: Readonly<Record<string, string>> = {
  base: "eip155:8453",
  "base-sepolia": "eip155:84532",
  polygon: "eip155:137",
  arbitrum: "eip155:42161",
  "arbitrum-sepolia": "eip155:421614",
  avalanche: "eip155:43114",
  ethereum: "eip155:1",
  solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
};

/** A network name or CAIP-2 id as its CAIP-2 id ("solana-devnet" -> "solana:EtWT..."); unknown names as given. */
export function networkId(network: string): string {
  return Object.prototype.hasOwnProperty.call(PAYER_NETWORKS, network)
    ? PAYER_NETWORKS[network]!
    : network;
}

/** The known name of a network ("eip155:84532" -> "base-sepolia"), else undefined. */
export function networkName(network: string): string | undefined {
  const id = networkId(network);
  return Object.keys(PAYER_NETWORKS).find((name) => PAYER_NETWORKS[name] === id);
}

/** Which kind of payment a network takes: an EVM authorization or a Solana transaction. */
export function networkFamily(network: string): "evm" | "svm" | undefined {
  const id = networkId(network);
  if (/^eip155:\d+$/.test(id)) return "evm";
  if (/^solana:[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(id)) return "svm";
  return undefined;
}

/**
 * The environment variable of a network's own RPC endpoint, as the server names its per-network settings:
 * X402_RPC_URL_ and the network's known name (else the id as given), upper-cased, every character other
 * than A-Z and 0-9 as "_" ("solana:EtWT..." -> X402_RPC_URL_SOLANA_DEVNET).
 */
export function rpcUrlVariable(network: string): string {
  const written = networkName(network) ?? network;
  return `X402_RPC_URL_${written.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * The latest deadline a job paid on Solana may have, in seconds from now: a Solana transaction dies with its
 * blockhash (about 60 s), and the server takes a job on Solana only when its deadline plus 15 s of
 * settlement fits that life. The server's rule, stated here for the payer.
 */
export const SOLANA_MAX_DEADLINE_SECONDS = 30;

/** The SPL Token program (USDC's on Solana), the Compute Budget and the Memo programs. */
export const SOLANA_PROGRAMS = {
  token: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  computeBudget: "ComputeBudget111111111111111111111111111111",
  memo: "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
} as const;

/** One SPL TransferChecked, as @solana-program/token parses it. */
export interface SolanaTransfer {
  source: string;
  mint: string;
  destination: string;
  authority: string;
  amount: bigint;
  decimals: number;
}

/** A decoded Solana transaction: its fee payer and every instruction's program (and transfer, if it is one). */
export interface SolanaTransactionView {
  feePayer: string;
  instructions: Array<{ program: string; transfer?: SolanaTransfer }>;
}

/**
 * What the guard needs to read a Solana payment, built on @solana/kit and @solana-program/token
 * (solana-payer.ts): injected, so this file stays free of those packages.
 */
export interface SolanaReader {
  /** Decodes a base64 wire transaction; throws when it is not one. */
  read(transaction: string): SolanaTransactionView;
  /** The associated token account of `owner` for `mint` under the SPL Token program. */
  associatedTokenAccount(owner: string, mint: string): Promise<string>;
}

/** USDC's decimals: the cap is counted in its millionths. */
const USDC_TOKEN_DECIMALS = 6;

/**
 * Checks the payment a request is about to carry, whatever its network: an EVM authorization as
 * checkSignedPayment does, a Solana transaction as checkSignedSolanaPayment does (with `solana`, the reader
 * loaded when a Solana offer was taken; without it a Solana payment is refused).
 */
export async function checkPaymentToSend(
  header: string,
  offers: readonly PaymentOffer[],
  limit: { maxAtomic: bigint; payer: string },
  solana?: SolanaReader,
): Promise<SignedPayment> {
  const decoded = decodeBase64Json(header, "the payment header about to be sent", "signed");
  const inner = isObjectRecord(decoded) ? decoded.payload : undefined;
  if (isObjectRecord(inner) && "transaction" in inner) {
    if (!solana)
      throw new PaymentGuardError(
        "signed",
        "the payment about to be sent is a Solana transaction, and no Solana reader was loaded to check it; it was not sent",
      );
    return checkSignedSolanaPayment(header, offers, limit, solana);
  }
  return checkSignedPayment(header, offers, limit);
}

/**
 * Checks a Solana payment (the exact scheme's partially signed transaction) at the last moment before it is
 * sent: exactly one TransferChecked, of the SPL Token program, signed by `payer` from its own associated
 * token account, to the associated token account of the payee of one of `offers` (same x402 version,
 * scheme, network, mint and amount), of at most `maxAtomic` in a 6-decimal token; besides it only
 * compute-budget and memo instructions; `payer` is not the fee payer. Returns what was signed.
 */
export async function checkSignedSolanaPayment(
  header: string,
  offers: readonly PaymentOffer[],
  limit: { maxAtomic: bigint; payer: string },
  solana: SolanaReader,
): Promise<SignedPayment> {
  const refuse = (problem: string) =>
    new PaymentGuardError(
      "signed",
      `the Solana payment about to be sent ${problem}; it was not sent`,
    );
  const { decoded, version, scheme, network, acceptedAsset, acceptedAmount } = signedHead(
    header,
    refuse,
  );
  if (typeof network !== "string" || networkFamily(network) !== "svm")
    throw refuse(`names the network ${shown(network)}, not a Solana network`);
  const inner = decoded.payload;
  const wire = isObjectRecord(inner) ? inner.transaction : undefined;
  if (typeof wire !== "string") throw refuse("carries no transaction");
  let view: SolanaTransactionView;
  try {
    view = solana.read(wire);
  } catch (error) {
    throw refuse(`is not a Solana transaction this payer can read (${(error as Error).message})`);
  }
  if (view.feePayer === limit.payer) throw refuse(`makes the payer ${limit.payer} its fee payer`);
  const transfer = soleTransfer(view, refuse);
  const amount = transfer.amount;
  if (transfer.decimals !== USDC_TOKEN_DECIMALS)
    throw refuse(
      `transfers a token of ${transfer.decimals} decimals, not USDC's ${USDC_TOKEN_DECIMALS}`,
    );
  if (amount > limit.maxAtomic)
    throw refuse(`transfers ${amount} atomic units, more than the ${limit.maxAtomic} allowed`);
  if (acceptedAmount !== undefined && acceptedAmount !== amount)
    throw refuse(`transfers ${amount} atomic units for an offer of ${acceptedAmount}`);
  if (acceptedAsset !== undefined && acceptedAsset !== transfer.mint)
    throw refuse(`transfers the mint ${transfer.mint} for an offer of ${shown(acceptedAsset)}`);
  if (transfer.authority !== limit.payer)
    throw refuse(`is signed for the account ${transfer.authority}, not the payer ${limit.payer}`);
  if (transfer.source !== (await solana.associatedTokenAccount(limit.payer, transfer.mint)))
    throw refuse(`transfers from ${transfer.source}, not the payer's own token account`);
  const candidates = offers.filter(
    (o) =>
      o.x402Version === version &&
      o.scheme === scheme &&
      o.network === network &&
      o.amount === amount &&
      o.asset === transfer.mint,
  );
  for (const offer of candidates) {
    const payeeAccount = await solana
      .associatedTokenAccount(offer.payTo, transfer.mint)
      .catch(() => undefined); // a payee that is no Solana address has no token account
    if (transfer.destination === payeeAccount)
      return {
        x402Version: version,
        network: offer.network,
        amount,
        payer: transfer.authority,
        payTo: offer.payTo,
        asset: offer.asset,
      };
  }
  throw refuse(
    `(${amount} atomic units of ${transfer.mint} to the token account ${transfer.destination} on ${network}) matches none of the offers that were checked`,
  );
}

/**
 * The one SPL TransferChecked of a Solana payment; refused when there is none or more than one, or when any
 * other instruction is not a compute-budget or memo one.
 */
function soleTransfer(
  view: SolanaTransactionView,
  refuse: (problem: string) => PaymentGuardError,
): SolanaTransfer {
  const transfers: SolanaTransfer[] = [];
  for (const [index, instruction] of view.instructions.entries()) {
    if (instruction.program === SOLANA_PROGRAMS.token && instruction.transfer) {
      transfers.push(instruction.transfer);
      continue;
    }
    if (
      instruction.program === SOLANA_PROGRAMS.computeBudget ||
      instruction.program === SOLANA_PROGRAMS.memo
    )
      continue;
    throw refuse(
      `holds instruction ${index} of program ${instruction.program}${instruction.program === SOLANA_PROGRAMS.token ? " that is not a TransferChecked" : ""}: only one SPL TransferChecked, compute-budget and memo instructions are sent`,
    );
  }
  if (transfers.length !== 1)
    throw refuse(`holds ${transfers.length} token transfers, not exactly one`);
  return transfers[0]!;
}

/** The network a payer pays on, or why there is none (for the payer to say in its own words). */
export type NetworkChoice =
  | { ok: true; id: string; family: "evm" | "svm" }
  | {
      ok: false;
      /** not-offered: the wanted network is not in the 402; solana-deadline: only Solana has a key, and the
       * job's deadline is too far for it; no-key: no offered network has a key (`family`: the first's). */
      problem: "not-offered" | "solana-deadline" | "no-key";
      family?: "evm" | "svm";
      offered: string[];
    };

/**
 * The network to pay on: `wanted` when given (a name or CAIP-2 id) and offered, else the first offered
 * network the payer holds a key for, Solana only when the job is due within SOLANA_MAX_DEADLINE_SECONDS.
 */
export function choosePaymentNetwork(
  offers: readonly PaymentOffer[],
  wanted: string | undefined,
  keys: { evm: boolean; svm: boolean },
  deadlineSeconds: number,
): NetworkChoice {
  const offered = [...new Set(offers.map((o) => o.network))];
  if (wanted !== undefined) {
    const id = networkId(wanted);
    const family = networkFamily(id);
    return family && offers.some((o) => networkId(o.network) === id)
      ? { ok: true, id, family }
      : { ok: false, problem: "not-offered", offered };
  }
  let solanaTooLate = false;
  for (const offer of offers) {
    const family = networkFamily(offer.network);
    if (family === "evm" && keys.evm) return { ok: true, id: networkId(offer.network), family };
    if (family === "svm" && keys.svm) {
      if (deadlineSeconds <= SOLANA_MAX_DEADLINE_SECONDS)
        return { ok: true, id: networkId(offer.network), family };
      solanaTooLate = true;
    }
  }
  if (solanaTooLate) return { ok: false, problem: "solana-deadline", family: "svm", offered };
  const families = new Set(offers.map((o) => networkFamily(o.network)));
  const first = offers.find((o) => networkFamily(o.network) !== undefined) ?? offers[0]!;
  const family =
    families.has("evm") && families.has("svm")
      ? undefined
      : (networkFamily(first.network) ?? "evm");
  return { ok: false, problem: "no-key", ...(family ? { family } : {}), offered };
}
