/**
 * The Solana payer family's guard, shared like guard.ts by `create-agent call` and every generated client.
 * On Solana the payment is a partially signed transaction: it is decoded (by a SolanaReader, built on
 * @solana/kit and loaded only when a Solana offer is taken, so this file imports nothing) and must hold
 * exactly one SPL TransferChecked of the offer's mint, from the payer's own token account to the associated
 * token account of the offer's payee, of the offer's amount and at most the cap, and nothing else but
 * compute-budget and memo instructions; the payer must not be its fee payer.
 *
 * Web-standard code only, like guard.ts.
 */
import {
  type PayerFamily,
  type PaymentOffer,
  shown,
  type SignedPayment,
  type SigningLimit,
} from "./guard.js";
import {
  checkSignedAmount,
  offersSignedFor,
  type SignedRefusal,
  signedHead,
  signedPayment,
  signedRefusal,
} from "./guard-signed.js";

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
 * Checks a Solana payment (the exact scheme's partially signed transaction) at the last moment before it is
 * sent: exactly one TransferChecked, of the SPL Token program, signed by `payer` from its own associated
 * token account, to the associated token account of the payee of one of `offers` (same x402 version,
 * scheme, network, mint and amount), of at most `maxAtomic` in a 6-decimal token; besides it only
 * compute-budget and memo instructions; `payer` is not the fee payer. Returns what was signed.
 */
export async function checkSignedSolanaPayment(
  header: string,
  offers: readonly PaymentOffer[],
  limit: SigningLimit,
  solana: SolanaReader,
): Promise<SignedPayment> {
  const refuse = signedRefusal("Solana payment");
  const head = signedHead(header, refuse);
  const { network, acceptedAsset } = head;
  if (typeof network !== "string" || !SVM_PAYER.pays(SVM_PAYER.networks[network] ?? network))
    throw refuse(`names the network ${shown(network)}, not a Solana network`);
  const wire = head.payload?.transaction;
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
  checkSignedAmount(head, amount, limit, refuse, "transfers");
  if (acceptedAsset !== undefined && acceptedAsset !== transfer.mint)
    throw refuse(`transfers the mint ${transfer.mint} for an offer of ${shown(acceptedAsset)}`);
  if (transfer.authority !== limit.payer)
    throw refuse(`is signed for the account ${transfer.authority}, not the payer ${limit.payer}`);
  if (transfer.source !== (await solana.associatedTokenAccount(limit.payer, transfer.mint)))
    throw refuse(`transfers from ${transfer.source}, not the payer's own token account`);
  const candidates = offersSignedFor(head, amount, offers).filter((o) => o.asset === transfer.mint);
  for (const offer of candidates) {
    const payeeAccount = await solana
      .associatedTokenAccount(offer.payTo, transfer.mint)
      .catch(() => undefined); // a payee that is no Solana address has no token account
    if (transfer.destination === payeeAccount)
      return signedPayment(offer, amount, transfer.authority);
  }
  throw refuse(
    `(${amount} atomic units of ${transfer.mint} to the token account ${transfer.destination} on ${network}) matches none of the offers that were checked`,
  );
}

/**
 * The one SPL TransferChecked of a Solana payment; refused when there is none or more than one, or when any
 * other instruction is not a compute-budget or memo one.
 */
function soleTransfer(view: SolanaTransactionView, refuse: SignedRefusal): SolanaTransfer {
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

/** The Solana payer family: the exact scheme's partially signed transactions on solana networks. */
export const SVM_PAYER: PayerFamily = {
  id: "svm",
  networks: {
    solana: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
    "solana-devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  },
  pays: (network) => /^solana:[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(network),
  maxDeadlineSeconds: SOLANA_MAX_DEADLINE_SECONDS,
  claims: (payload) => "transaction" in payload,
  checkSigned: (header, offers, limit, reader) => {
    if (!reader)
      throw signedRefusal("payment")(
        "is a Solana transaction, and no Solana reader was loaded to check it",
      );
    return checkSignedSolanaPayment(header, offers, limit, reader as SolanaReader);
  },
};
