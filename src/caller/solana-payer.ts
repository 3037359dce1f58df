/**
 * What a Solana payer needs from the official Solana libraries, shared by `create-agent call` and generated
 * clients (this file is compiled into the CLI and copied verbatim into every client):
 * - the payer guard's reader (guard-svm.ts SolanaReader): @solana/kit decodes the wire transaction and its
 *   message, @solana-program/token identifies and parses the SPL Token instructions and derives associated
 *   token accounts. Nothing here parses transaction bytes by hand;
 * - the payer's key as solana-keygen and wallets write it (base58, or a JSON byte array).
 *
 * The modules are handed in, not imported: `create-agent call` loads them only when a Solana offer is taken
 * (its light install has none of them), and a generated client passes its own dynamic imports. Their
 * shapes are written out below; a client compiles against the real packages, and
 * test/cli/guard-solana.test.ts builds a reader from them.
 */
import { PaymentGuardError } from "./guard.js";
import type { SolanaReader, SolanaTransactionView } from "./guard-svm.js";

/** Bytes as @solana/kit hands them over (its ReadonlyUint8Array): passed on, never read here. */
type Bytes = object;

/** What the reader uses of @solana/kit. */
export interface SolanaKitModule {
  getBase64Encoder(): { encode(value: string): Bytes };
  getTransactionDecoder(): { decode(bytes: never): { messageBytes: Bytes } };
  getCompiledTransactionMessageDecoder(): { decode(bytes: never): object };
  decompileTransactionMessage(compiled: never): {
    feePayer: { address: string };
    instructions: readonly {
      programAddress: string;
      accounts?: readonly { address: string }[];
      data?: Bytes;
    }[];
  };
}

/** What the reader uses of @solana-program/token. */
export interface SolanaTokenModule {
  TOKEN_PROGRAM_ADDRESS: string;
  TokenInstruction: { TransferChecked: number };
  identifyTokenInstruction(instruction: { data: never }): number;
  parseTransferCheckedInstruction(instruction: never): {
    accounts: {
      source: { address: string };
      mint: { address: string };
      destination: { address: string };
      authority: { address: string };
    };
    data: { amount: bigint; decimals: number };
  };
  findAssociatedTokenPda(seeds: {
    owner: never;
    mint: never;
    tokenProgram: never;
  }): Promise<readonly [string, number]>;
}

/** A SolanaReader over the official libraries. */
export function solanaReader(kit: SolanaKitModule, token: SolanaTokenModule): SolanaReader {
  return {
    read(transaction: string): SolanaTransactionView {
      const bytes = kit.getBase64Encoder().encode(transaction);
      const wire = kit.getTransactionDecoder().decode(bytes as never);
      const compiled = kit
        .getCompiledTransactionMessageDecoder()
        .decode(wire.messageBytes as never);
      // Throws for a message that loads accounts from lookup tables: their contents are not in it.
      const message = kit.decompileTransactionMessage(compiled as never);
      return {
        feePayer: String(message.feePayer.address),
        instructions: message.instructions.map((instruction) => {
          const program = String(instruction.programAddress);
          if (program !== String(token.TOKEN_PROGRAM_ADDRESS) || !instruction.data)
            return { program };
          let kind: number | undefined;
          try {
            kind = token.identifyTokenInstruction({ data: instruction.data as never });
          } catch {
            kind = undefined; // not an instruction of the SPL Token program's list
          }
          if (kind !== token.TokenInstruction.TransferChecked) return { program };
          const parsed = token.parseTransferCheckedInstruction(instruction as never);
          return {
            program,
            transfer: {
              source: String(parsed.accounts.source.address),
              mint: String(parsed.accounts.mint.address),
              destination: String(parsed.accounts.destination.address),
              authority: String(parsed.accounts.authority.address),
              amount: parsed.data.amount,
              decimals: parsed.data.decimals,
            },
          };
        }),
      };
    },
    async associatedTokenAccount(owner: string, mint: string): Promise<string> {
      const [address] = await token.findAssociatedTokenPda({
        owner: owner as never,
        mint: mint as never,
        tokenProgram: token.TOKEN_PROGRAM_ADDRESS as never,
      });
      return String(address);
    },
  };
}

/**
 * The 64 bytes of a Solana secret key (32 secret, 32 public), from base58 text or the JSON byte array that
 * solana-keygen writes. Throws PaymentGuardError("offer"...) naming `variable`, never the key itself.
 */
export function solanaKeyBytes(
  text: string,
  variable: string,
  base58: { encode(value: string): ArrayLike<number> },
): Uint8Array {
  const refuse = () =>
    new PaymentGuardError(
      "key",
      `${variable} is not a Solana secret key: give the 64-byte key as base58 text or as the JSON array of 64 numbers that solana-keygen writes (its value is not shown); nothing was signed`,
    );
  const trimmed = text.trim();
  let bytes: number[];
  try {
    bytes = trimmed.startsWith("[")
      ? (JSON.parse(trimmed) as number[])
      : Array.from(base58.encode(trimmed));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)
  )
    throw refuse();
  return Uint8Array.from(bytes);
}
