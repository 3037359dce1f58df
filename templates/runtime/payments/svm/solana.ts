/**
 * @x402/svm and @solana/kit, as the runtime uses them (svm/scheme.ts). They load only when a Solana
 * network is configured, with an import() whose specifier TypeScript does not follow, typed by the
 * interfaces below: exactly what the runtime calls. Their declarations would otherwise be part of
 * every `npm run typecheck` of your project. The create-agent repo checks that the real packages
 * (the versions your package.json pins) still fit these interfaces, and runs this code against a
 * real Solana runtime. Part of your project: edit freely.
 */

/** Bytes as @solana/kit hands them over (its ReadonlyUint8Array). */
export type Bytes = Omit<Uint8Array, "copyWithin" | "fill" | "reverse" | "set" | "sort"> & {
  readonly [index: number]: number;
};

/** A decoded Solana transaction: its message bytes and the signatures by signer address. */
export interface SolanaTransaction {
  messageBytes: Bytes;
  signatures: Readonly<Record<string, Bytes | null>>;
}

/** A compiled message (@solana/kit): its accounts, its instructions by account index, its blockhash. */
export interface CompiledMessage {
  staticAccounts: readonly string[];
  instructions: readonly {
    programAddressIndex: number;
    accountIndices?: readonly number[];
    data?: Bytes;
  }[];
  /** The recent blockhash (or durable nonce), base58. */
  lifetimeToken: string;
}

/** A @solana/kit decoder: `decode(bytes, offset)`. */
export interface Decoder<T> {
  decode(bytes: Bytes | Uint8Array, offset?: number): T;
}

/** A key pair signer (@solana/kit): its address, and what @x402/svm signs with. */
export interface KeyPairSigner {
  address: string;
}

/** What a facilitator-side scheme answers (@x402/core's VerifyResponse and SettleResponse). */
export interface SvmVerifyResponse {
  isValid: boolean;
  invalidReason?: string;
  invalidMessage?: string;
  payer?: string;
}
export interface SvmSettleResponse {
  success: boolean;
  transaction: string;
  network: string;
  payer?: string;
  errorReason?: string;
  errorMessage?: string;
}

/**
 * The x402 PaymentPayload and PaymentRequirements, as the scheme takes them (x402 v2's shapes; the
 * v1 scheme takes the same declared types and reads v1's `scheme`/`network`/`maxAmountRequired`).
 */
export interface SvmPaymentPayload {
  x402Version: number;
  accepted: SvmRequirements;
  payload: Record<string, unknown>;
  resource?: { url: string; description?: string; mimeType?: string };
}
export interface SvmRequirements {
  scheme: string;
  network: `${string}:${string}`;
  asset: string;
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, unknown>;
}

/** @x402/svm's facilitator signer over RPC clients (opaque here: handed back to the scheme). */
export type FacilitatorSvmSigner = object;
/** A @solana/kit RPC client (opaque here). */
export type SolanaRpc = object;

/** What the runtime takes from "@x402/svm". */
export interface X402Svm {
  toFacilitatorSvmSigner(
    signer: KeyPairSigner,
    rpc: Record<string, SolanaRpc>,
  ): FacilitatorSvmSigner;
}

/** What the runtime takes from "@x402/svm/exact/facilitator": the official exact scheme, facilitator side. */
export interface X402SvmFacilitator {
  ExactSvmScheme: new (
    signer: FacilitatorSvmSigner,
    settlementCache?: undefined,
    options?: { maxComputeUnits?: number; maxPriorityFeeMicroLamports?: number },
  ) => SvmFacilitatorScheme;
}

/** A facilitator-side exact scheme: what both x402 versions' classes answer. */
export interface SvmFacilitatorScheme {
  verify(payload: SvmPaymentPayload, requirements: SvmRequirements): Promise<SvmVerifyResponse>;
  settle(payload: SvmPaymentPayload, requirements: SvmRequirements): Promise<SvmSettleResponse>;
}

/** What the runtime takes from "@x402/svm/exact/v1/facilitator": the same scheme for x402 v1 payments. */
export interface X402SvmFacilitatorV1 {
  ExactSvmSchemeV1: new (signer: FacilitatorSvmSigner) => SvmFacilitatorScheme;
}

/** What the runtime takes from "@solana/kit". */
export interface SolanaKit {
  createKeyPairSignerFromBytes(bytes: Uint8Array): Promise<KeyPairSigner>;
  createSolanaRpc(url: string, config?: { headers?: { authorization: string } }): SolanaRpc;
  devnet(url: string): string;
  mainnet(url: string): string;
  getTransactionDecoder(): Decoder<SolanaTransaction>;
  getCompiledTransactionMessageDecoder(): Decoder<CompiledMessage>;
  getU32Decoder(): Decoder<number>;
  getU64Decoder(): Decoder<bigint>;
}

/** import() of a specifier in a variable: TypeScript does not resolve it; Node resolves it as usual. */
const load = (specifier: string): Promise<unknown> => import(specifier);

export const loadX402Svm = async (): Promise<X402Svm> => (await load("@x402/svm")) as X402Svm;
export const loadX402SvmFacilitator = async (): Promise<X402SvmFacilitator> =>
  (await load("@x402/svm/exact/facilitator")) as X402SvmFacilitator;
export const loadX402SvmFacilitatorV1 = async (): Promise<X402SvmFacilitatorV1> =>
  (await load("@x402/svm/exact/v1/facilitator")) as X402SvmFacilitatorV1;
export const loadSolanaKit = async (): Promise<SolanaKit> =>
  (await load("@solana/kit")) as SolanaKit;
