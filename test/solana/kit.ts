// The Solana test kit: one in-process LiteSVM (the real Solana runtime with the SPL Token, associated-token, memo
// and compute-budget programs) holding a USDC mint at devnet's USDC address, behind a loopback JSON-RPC endpoint
// (rpc.ts) that the official @x402/svm client, facilitator and a self-settling server talk to as to a node.
// Accounts are written straight into the runtime (no faucet, no mint transactions): a payer holds USDC and no SOL,
// since the x402 fee payer pays every fee.
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { ExactSvmScheme } from "@x402/svm/exact/client";
import { generateKeyPairSync } from "node:crypto";
import {
  type Address,
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  type KeyPairSigner,
} from "@solana/kit";
import {
  AccountState,
  findAssociatedTokenPda,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { LiteSVM } from "litesvm";
import { serveRpc } from "./rpc.js";

export { startSvmFacilitator, type SvmFacilitator } from "./facilitator.js";
export { DEVNET_GENESIS_HASH } from "./rpc.js";

/** Solana devnet as x402 names it (CAIP-2: the first 32 characters of its genesis hash). */
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
/** Devnet's USDC mint (Circle's), the asset @x402/svm offers on devnet by default. */
export const DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU" as Address;
export const USDC_DECIMALS = 6;
/** SOL given by newAccount() unless told: 10 SOL pays a fee payer's fees for any test. */
export const DEFAULT_LAMPORTS = 10_000_000_000n;

const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;

export interface SolanaAccount {
  signer: KeyPairSigner;
  address: Address;
  /** Base58 of the 64-byte secret key (seed + public key), the form SOLANA_*_KEY takes. */
  secretKey: string;
  /** The same 64 bytes as a JSON array, the form `solana-keygen` writes to its key files. */
  keygenJson: string;
}

export interface SolanaKitOptions {
  /** What the RPC's getGenesisHash answers (devnet's by default): another makes it "another network". */
  genesisHash?: string;
  /** What getLatestBlockhash answers (rpc.ts RpcOptions.latest). */
  latest?: "usable" | "newest";
}

export interface SolanaKit {
  rpcUrl: string;
  /** CAIP-2 id of the network this kit plays (devnet). */
  network: string;
  mint: Address;
  /** The runtime itself, for tests that need to look deeper (transaction history, clock). */
  svm: LiteSVM;
  /** JSON-RPC methods called so far, in order. */
  rpcCalls: string[];
  /**
   * Makes `n` more blocks: the current blockhash gets n blocks older, as on a node (a transaction using it
   * lands until it is 150 blocks old, then never; rpc.ts's blocks.ts).
   */
  advanceBlocks(n: number): void;
  /** Sent transactions wait unlanded, their status unknown, until landHeld() or dropHeld() (rpc.ts). */
  holdSends(): void;
  /** Lands the waiting transactions (while their blockhash lives); their signatures. */
  landHeld(): string[];
  /** Loses the waiting transactions: they never land. */
  dropHeld(): void;
  /** A new account with no SOL and a USDC token account (or one of `token`) holding `usdcAtomic`. */
  fundedPayer(usdcAtomic: bigint, token?: Address): Promise<SolanaAccount>;
  /** Adds a 6-decimal SPL mint at `address` (e.g. mainnet USDT's), for tests of other tokens. */
  addMint(address: Address): void;
  /** Opens (or overwrites) `owner`'s associated token account of `token`, holding `amount`. */
  openTokenAccount(owner: Address | string, token: Address, amount?: bigint): Promise<void>;
  /**
   * Freezes `owner`'s USDC token account, keeping its balance, as the mint's freeze authority does: a transfer
   * from or to it then fails in execution (the token program's AccountFrozen), with its fee paid.
   */
  freeze(owner: Address | string): Promise<void>;
  /** A new account holding SOL (a fee payer), with no token account. */
  newAccount(lamports?: bigint): Promise<SolanaAccount>;
  /** A new address whose USDC associated token account exists and is empty (a payee). */
  payee(): Promise<Address>;
  /** USDC (or `token`), atomic, in the owner's associated token account; 0 when it does not exist. */
  usdcBalance(owner: Address | string, token?: Address): Promise<bigint>;
  /** SOL (lamports) the address holds. */
  lamports(owner: Address | string): bigint;
  close(): Promise<void>;
}

export async function startSolanaKit(options: SolanaKitOptions = {}): Promise<SolanaKit> {
  const svm = new LiteSVM();
  const mint = DEVNET_USDC;
  const mintAuthority = (await newKeys()).address;
  const rent = (size: number) => svm.minimumBalanceForRentExemption(BigInt(size));

  const addMint = (address: Address) =>
    svm.setAccount({
      address,
      executable: false,
      lamports: rent(82),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getMintEncoder().encode({
          mintAuthority,
          supply: 1_000_000_000_000_000n,
          decimals: USDC_DECIMALS,
          isInitialized: true,
          freezeAuthority: null,
        }),
      ),
      space: 82n,
    } as never);
  addMint(mint);

  const ata = async (owner: Address, token: Address = mint) =>
    (await findAssociatedTokenPda({ mint: token, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

  async function setTokenAccount(
    owner: Address,
    amount: bigint,
    token: Address = mint,
    state = AccountState.Initialized,
  ) {
    svm.setAccount({
      address: await ata(owner, token),
      executable: false,
      lamports: rent(165),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getTokenEncoder().encode({
          mint: token,
          owner,
          amount,
          delegate: null,
          state,
          isNative: null,
          delegatedAmount: 0n,
          closeAuthority: null,
        }),
      ),
      space: 165n,
    } as never);
  }

  const rpc = await serveRpc(svm, {
    decimals: USDC_DECIMALS,
    genesisHash: options.genesisHash,
    latest: options.latest,
  });

  return {
    rpcUrl: rpc.url,
    network: SOLANA_DEVNET,
    mint,
    svm,
    rpcCalls: rpc.calls,
    advanceBlocks: (n) => rpc.advance(n),
    holdSends: () => rpc.holdSends(),
    landHeld: () => rpc.landHeld(),
    dropHeld: () => rpc.dropHeld(),
    async fundedPayer(usdcAtomic, token) {
      const account = await newKeys();
      await setTokenAccount(account.address, usdcAtomic, token);
      return account;
    },
    addMint,
    openTokenAccount: (owner, token, amount = 0n) =>
      setTokenAccount(owner as Address, amount, token),
    async freeze(owner) {
      const found = svm.getAccount(await ata(owner as Address));
      const amount = found.exists ? getTokenDecoder().decode(found.data).amount : 0n;
      await setTokenAccount(owner as Address, amount, mint, AccountState.Frozen);
    },
    async newAccount(lamports = DEFAULT_LAMPORTS) {
      const account = await newKeys();
      svm.setAccount({
        address: account.address,
        executable: false,
        lamports,
        programAddress: SYSTEM_PROGRAM,
        data: new Uint8Array(0),
        space: 0n,
      } as never);
      return account;
    },
    async payee() {
      const { address } = await newKeys();
      await setTokenAccount(address, 0n);
      return address;
    },
    async usdcBalance(owner, token) {
      const found = svm.getAccount(await ata(owner as Address, token));
      return found.exists ? getTokenDecoder().decode(found.data).amount : 0n;
    },
    lamports(owner) {
      return svm.getBalance(owner as Address) ?? 0n;
    },
    close: () => rpc.close(),
  };
}

/** A fresh ed25519 key pair as Solana writes it: 64 bytes, the 32-byte seed then the 32-byte public key. */
export async function newKeys(): Promise<SolanaAccount> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const seed = Buffer.from(privateKey.export({ format: "jwk" }).d as string, "base64url");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url");
  const bytes = new Uint8Array([...seed, ...pub]);
  const signer = await createKeyPairSignerFromBytes(bytes);
  return {
    signer,
    address: signer.address,
    secretKey: getBase58Decoder().decode(bytes),
    keygenJson: JSON.stringify([...bytes]),
  };
}

/** A v2 payment for `accepted`, made by the official x402 client with an ExactSvmScheme signer. */
export function officialPayment(
  network: string,
  signer: ExactSvmScheme,
  accepted: PaymentRequirements,
): Promise<PaymentPayload> {
  const client = new x402Client().register(network as `${string}:${string}`, signer);
  return client.createPaymentPayload({
    x402Version: 2,
    resource: {
      url: "http://127.0.0.1/execute",
      description: "test",
      mimeType: "application/json",
    },
    accepts: [accepted],
  });
}
