/**
 * The payer guard's Solana reader (guard.ts SolanaReader), built on the official Solana libraries: @solana/kit
 * decodes the wire transaction and its message, @solana-program/token identifies and parses the SPL Token
 * instructions and derives associated token accounts. Nothing here parses bytes by hand.
 *
 * The modules are handed in, not imported: `create-agent call` loads them only when a Solana offer is taken
 * (its light install has none of them), and a generated client passes its own imports (this file is copied
 * verbatim into every client). Their shapes are written out below; a client compiles against the real
 * packages, and test/cli/guard-solana.test.ts builds a reader from them.
 */
import type { SolanaReader, SolanaTransactionView } from "./guard.js";

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
