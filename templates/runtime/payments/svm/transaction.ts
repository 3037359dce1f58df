/**
 * What the gate reads from a Solana payment's transaction before anything runs, decoded once with
 * @solana/kit's codecs (its transaction and compiled-message decoders; the compute-budget
 * instructions' data read with its u32/u64 decoders at the layout @solana-program/compute-budget
 * declares: one discriminator byte, then the value, little-endian):
 *   - its message hash (the replay key; the same base64 SHA-256 @x402/svm keys duplicates by);
 *   - its blockhash (blockhash.ts checks it outlives the job);
 *   - its compute budget: SetComputeUnitLimit and SetComputeUnitPrice, which set what this server's
 *     (or the facilitator's) fee payer pays for it, checked against SOLANA_MAX_COMPUTE_UNITS and
 *     SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS; any other compute-budget instruction, or one of these two
 *     with other data than its layout's (the runtime reads the value and ignores what follows, so a
 *     byte more would have hidden a price from the cap), is refused;
 *   - that no instruction names the fee payer (the message's first account): it only pays the fees.
 *     The official checks let up to four Lighthouse or Memo instructions through with any accounts,
 *     which could spend the fee payer's SOL (rent of accounts it funds); no x402 client sends one so.
 * The official verification (svm/scheme.ts confirm()) still checks everything else.
 * Part of your project: edit freely.
 */
import { createHash } from "node:crypto";
import type { SolanaKit } from "./solana.js";

/** The compute-budget program, and its two instructions that set a price (discriminators). */
const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
/** A transaction that sets no limit may use up to this many compute units (the runtime's maximum). */
export const RUNTIME_MAX_COMPUTE_UNITS = 1_400_000;

/** What the official client sends: 20,000 compute units at 1 micro-lamport each. */
export const DEFAULT_MAX_COMPUTE_UNITS = 40_000;
export const DEFAULT_MAX_PRIORITY_FEE_MICROLAMPORTS = 10_000;

/** The most a payment may ask the fee payer to spend on compute (SOLANA_MAX_*). */
export interface ComputeBudgetCaps {
  maxComputeUnits: number;
  maxPriorityFeeMicroLamports: number;
}

export interface ReadTransaction {
  /** SHA-256 of the message, base64 (what the payer signed, whoever fills the fee payer's slot). */
  messageHash: string;
  /** The message's recent blockhash (base58). */
  blockhash: string;
  /** SetComputeUnitLimit's units; undefined when the transaction sets none. */
  computeUnitLimit: number | undefined;
  /** SetComputeUnitPrice's micro-lamports per compute unit; 0 when it sets none. */
  computeUnitPrice: bigint;
  /** Why the fee payer could be made to pay more than fees (the instructions above), or undefined. */
  unsafe: string | undefined;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A reader of base64 wire transactions (its decoders made once); it throws on anything else. */
export function transactionReader(kit: SolanaKit): (base64: string) => ReadTransaction {
  const decoders = {
    transaction: kit.getTransactionDecoder(),
    message: kit.getCompiledTransactionMessageDecoder(),
    u32: kit.getU32Decoder(),
    u64: kit.getU64Decoder(),
  };
  return (base64) => readTransaction(decoders, base64);
}

type Decoders = {
  transaction: ReturnType<SolanaKit["getTransactionDecoder"]>;
  message: ReturnType<SolanaKit["getCompiledTransactionMessageDecoder"]>;
  u32: ReturnType<SolanaKit["getU32Decoder"]>;
  u64: ReturnType<SolanaKit["getU64Decoder"]>;
};

function readTransaction(decoders: Decoders, base64: string): ReadTransaction {
  if (!BASE64.test(base64)) throw new Error("not base64");
  const transaction = decoders.transaction.decode(Buffer.from(base64, "base64"));
  const message = decoders.message.decode(transaction.messageBytes);
  let computeUnitLimit: number | undefined;
  let computeUnitPrice = 0n;
  let unsafe: string | undefined;
  for (const [n, instruction] of message.instructions.entries()) {
    const accounts = [instruction.programAddressIndex, ...(instruction.accountIndices ?? [])];
    if (accounts.includes(0)) unsafe ??= `instruction ${n + 1} names the fee payer`;
    if (message.staticAccounts[instruction.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM)
      continue;
    const data = instruction.data;
    // As the runtime: a second instruction setting the same value fails the transaction, so the
    // larger one is what it could have cost.
    if (data?.[0] === SET_COMPUTE_UNIT_LIMIT && data.length === 5) {
      const units = decoders.u32.decode(data, 1);
      computeUnitLimit = Math.max(computeUnitLimit ?? 0, units);
    } else if (data?.[0] === SET_COMPUTE_UNIT_PRICE && data.length === 9) {
      const price = decoders.u64.decode(data, 1);
      if (price > computeUnitPrice) computeUnitPrice = price;
    } else
      unsafe ??= `instruction ${n + 1} is a compute-budget instruction other than SetComputeUnitLimit (5 bytes) or SetComputeUnitPrice (9 bytes)`;
  }
  return {
    messageHash: createHash("sha256")
      .update(transaction.messageBytes as Uint8Array)
      .digest("base64"),
    blockhash: message.lifetimeToken,
    computeUnitLimit,
    computeUnitPrice,
    unsafe,
  };
}

/** Why this transaction is refused before anything runs (a code and the words), or undefined. */
export function transactionProblem(
  read: ReadTransaction,
  caps: ComputeBudgetCaps,
): { code: string; text: string } | undefined {
  if (read.unsafe)
    return {
      code: "fee_payer_exposed",
      text: `${read.unsafe}. The fee payer only pays the fees: sign the transaction an x402 client builds (compute budget, TransferChecked, memo)`,
    };
  const costly = computeBudgetProblem(read, caps);
  if (costly)
    return {
      code: "compute_budget_too_high",
      text: `${costly}. This server's fee payer pays for it; sign a transaction within the cap (the official x402 client asks 20000 units at 1 micro-lamport)`,
    };
  return undefined;
}

/** Why the fee payer would pay more than the caps allow for this transaction, or undefined. */
function computeBudgetProblem(read: ReadTransaction, caps: ComputeBudgetCaps): string | undefined {
  const units = read.computeUnitLimit ?? RUNTIME_MAX_COMPUTE_UNITS;
  if (units > caps.maxComputeUnits)
    return read.computeUnitLimit === undefined
      ? `the transaction sets no compute unit limit (SetComputeUnitLimit), so it may use up to ${RUNTIME_MAX_COMPUTE_UNITS} compute units, above this server's cap of ${caps.maxComputeUnits} (SOLANA_MAX_COMPUTE_UNITS)`
      : `the transaction's SetComputeUnitLimit asks for ${units} compute units, above this server's cap of ${caps.maxComputeUnits} (SOLANA_MAX_COMPUTE_UNITS)`;
  if (read.computeUnitPrice > BigInt(caps.maxPriorityFeeMicroLamports))
    return `the transaction's SetComputeUnitPrice is ${read.computeUnitPrice} micro-lamports per compute unit, above this server's cap of ${caps.maxPriorityFeeMicroLamports} (SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS)`;
  return undefined;
}
