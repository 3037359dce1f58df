/**
 * viem, as the runtime uses it (checks.ts, direct-settlement.ts, module.ts). It is loaded with an
 * import() whose specifier TypeScript does not follow, and typed by the interfaces below: exactly
 * what the runtime calls. viem's own declarations (~500 files with ox and abitype) would otherwise
 * be part of every `npm run typecheck` of your project, and make it several times slower. The
 * create-agent repo checks that the real viem (the version your package.json pins) still fits these
 * interfaces, and runs this code against a real chain. To call more of viem here, add what you call
 * to the interfaces (or import viem directly: it type-checks either way, only slower).
 * Part of your project: edit freely.
 */
import type { USDC_ABI } from "./usdc-abi.js";
import type { transferTypedData } from "../../x402.js";

export type Hex = `0x${string}`;
export type UsdcAbi = typeof USDC_ABI;

/** USDC's transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature). */
export type TransferArgs = readonly [Hex, Hex, bigint, bigint, bigint, Hex, Hex];

/** viem's BaseError: every error viem throws. */
export interface ViemError extends Error {
  /** One-line summary; unlike `message` it never contains the RPC URL. */
  shortMessage: string;
  /** The first error in the `cause` chain (this one included) that `fn` accepts, else null. */
  walk(fn: (err: unknown) => boolean): Error | null;
}

/** An error class, for `instanceof`. */
export interface ErrorClass<T extends Error> {
  new (...args: never[]): T;
  readonly prototype: T;
}

/** A chain as defineChain makes it: its id and name, its currency, and the RPC endpoint to use. */
export interface Chain {
  id: number;
  name: string;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  rpcUrls: { default: { http: readonly string[] } };
}
/** What viem's transport and account objects are to the runtime: values it hands back to viem. */
export type Transport = (...args: never[]) => unknown;
export interface LocalAccount {
  address: Hex;
  type: "local";
}
/** A transaction prepared by the wallet client (chain id, type, fees and gas filled in). */
export type PreparedTransaction = object;

export interface PublicClient {
  getChainId(): Promise<number>;
  getCode(args: { address: Hex }): Promise<Hex | undefined>;
  /** EIP-1271 (and plain ECDSA) check of typed data signed by `address`. */
  verifyTypedData(
    args: { address: Hex; signature: Hex } & ReturnType<typeof transferTypedData>,
  ): Promise<boolean>;
  readContract(args: {
    address: Hex;
    abi: UsdcAbi;
    functionName: "balanceOf";
    args: readonly [Hex];
  }): Promise<bigint>;
  readContract(args: {
    address: Hex;
    abi: UsdcAbi;
    functionName: "authorizationState";
    args: readonly [Hex, Hex];
  }): Promise<boolean>;
  /** eth_call of the transfer as `account`; throws (a ContractFunctionRevertedError in its causes) on a revert. */
  simulateContract(args: {
    address: Hex;
    abi: UsdcAbi;
    functionName: "transferWithAuthorization";
    args: TransferArgs;
    account: Hex | LocalAccount;
  }): Promise<unknown>;
  getTransactionCount(args: { address: Hex; blockTag: "pending" }): Promise<number>;
  waitForTransactionReceipt(args: {
    hash: Hex;
    timeout: number;
  }): Promise<{ status: "success" | "reverted" }>;
  /** Throws (an error named TransactionReceiptNotFoundError) while the transaction is not mined. */
  getTransactionReceipt(args: {
    hash: Hex;
  }): Promise<{ status: "success" | "reverted"; blockNumber: bigint }>;
  getBlockNumber(): Promise<bigint>;
  /** Logs of USDC's AuthorizationUsed(authorizer, nonce) from `fromBlock` on. */
  getContractEvents(args: {
    address: Hex;
    abi: UsdcAbi;
    eventName: "AuthorizationUsed";
    args: { authorizer: Hex; nonce: Hex };
    fromBlock: bigint;
  }): Promise<Array<{ transactionHash: Hex | null; blockNumber: bigint | null }>>;
  /** Logs of USDC's Transfer(from, to, value) in blocks `fromBlock` to `toBlock`. */
  getContractEvents(args: {
    address: Hex;
    abi: UsdcAbi;
    eventName: "Transfer";
    args: { from: Hex; to: Hex };
    fromBlock: bigint;
    toBlock: bigint;
  }): Promise<Array<{ transactionHash: Hex | null; args: { value?: bigint } }>>;
}

export interface WalletClient {
  prepareTransactionRequest(args: {
    to: Hex;
    data: Hex;
    parameters: Array<"chainId" | "type" | "fees" | "gas">;
  }): Promise<PreparedTransaction>;
  signTransaction(args: PreparedTransaction & { nonce: number }): Promise<Hex>;
  sendRawTransaction(args: { serializedTransaction: Hex }): Promise<Hex>;
}

/** What the runtime takes from "viem". */
export interface Viem {
  BaseError: ErrorClass<ViemError>;
  ContractFunctionRevertedError: ErrorClass<ViemError & { reason?: string | undefined }>;
  /** The node answered a JSON-RPC request with an error; `details` is the node's own words. */
  RpcRequestError: ErrorClass<ViemError & { details: string }>;
  HttpRequestError: ErrorClass<ViemError>;
  TimeoutError: ErrorClass<ViemError>;
  NonceTooLowError: ErrorClass<ViemError>;
  createPublicClient(args: {
    chain: Chain;
    transport: Transport;
    pollingInterval?: number;
  }): PublicClient;
  createWalletClient(args: {
    account: LocalAccount;
    chain: Chain;
    transport: Transport;
  }): WalletClient;
  defineChain(chain: Chain): Chain;
  http(url: string): Transport;
  encodeFunctionData(args: {
    abi: UsdcAbi;
    functionName: "transferWithAuthorization";
    args: TransferArgs;
  }): Hex;
}

/** What the runtime takes from "viem/accounts". */
export interface ViemAccounts {
  privateKeyToAccount(privateKey: Hex): LocalAccount;
  privateKeyToAddress(privateKey: Hex): Hex;
}

/** import() of a specifier in a variable: TypeScript does not resolve it; Node resolves it as usual. */
const load = (specifier: string): Promise<unknown> => import(specifier);

export const loadViem = async (): Promise<Viem> => (await load("viem")) as Viem;
export const loadViemAccounts = async (): Promise<ViemAccounts> =>
  (await load("viem/accounts")) as ViemAccounts;
