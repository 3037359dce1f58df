// A loopback Solana JSON-RPC endpoint over one in-process LiteSVM: the methods the official @x402/svm client,
// facilitator and a self-settling server call, answered in a real node's shapes, plus the behaviour where a real
// node differs from LiteSVM (see /work/shared/notes/networks-mcp-browser.md, "Solana in tests"):
// - simulating a message that already landed is refused (AlreadyProcessed), signed or not;
// - blocks (blocks.ts): a blockhash lives 150 blocks (isBlockhashValid, getLatestBlockhash's lastValidBlockHeight,
//   getBlocks, getBlock), and advance() ages it, which LiteSVM alone cannot;
// - simulate with replaceRecentBlockhash runs the message with the latest blockhash (compute-unit estimators,
//   such as the x402 v1 client's, simulate with a placeholder blockhash);
// - re-sending a landed transaction answers its signature again, and its status stays success;
// - a transaction that fails in execution with skipPreflight still gets its signature back (its status carries
//   the error); one the runtime refuses before execution (bad signature, unknown blockhash) is a JSON-RPC error;
// - holdSends(): a transaction sent is answered its signature but waits unlanded (its status unknown, as a node's
//   for one not processed yet) until landHeld() lands it (while its blockhash lives) or dropHeld() loses it;
// - the landed transactions' history (history.ts): getSignatureStatuses, getSignaturesForAddress, getTransaction.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

import {
  type Address,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  type Transaction,
} from "@solana/kit";
import { getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { FailedTransactionMetadata, type LiteSVM } from "litesvm";
import { closeServer, listenLocal } from "../runtime/servers.js";
import { chainOf } from "./blocks.js";
import { RpcError, transactionHistory } from "./history.js";

/** Devnet's genesis hash: its first 32 characters are the CAIP-2 reference of solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1. */
export const DEVNET_GENESIS_HASH = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG";

export interface RpcOptions {
  /** What getGenesisHash answers (devnet's by default): another one makes the endpoint "another network". */
  genesisHash?: string;
  /** USDC decimals for jsonParsed token accounts and getTokenAccountBalance. */
  decimals: number;
  /**
   * What getLatestBlockhash answers: the newest blockhash LiteSVM accepts (default), or the newest block's, as a
   * node does (after the kit advanced, a blockhash no transaction can use: for tests that only read blocks).
   */
  latest?: "usable" | "newest";
}

export interface RpcServer {
  url: string;
  /** Every method called, in order (tests may read which calls the official code made). */
  calls: string[];
  /** Makes `n` more blocks: the current blockhash ages by n (and expires past 150, blocks.ts). */
  advance(n: number): void;
  /** From now, transactions sent get their signature back but wait unlanded (until landHeld or dropHeld). */
  holdSends(): void;
  /** Lands the waiting transactions (as sendTransaction would have) and stops holding; their signatures. */
  landHeld(): string[];
  /** Loses the waiting transactions (never landed) and stops holding. */
  dropHeld(): void;
  close(): Promise<void>;
}

export async function serveRpc(svm: LiteSVM, options: RpcOptions): Promise<RpcServer> {
  const genesisHash = options.genesisHash ?? DEVNET_GENESIS_HASH;
  const base58 = getBase58Decoder();
  /** The landed transactions; message hash -> signature (a real node knows a message once landed). */
  const history = transactionHistory();
  const byMessage = new Map<string, string>();
  const calls: string[] = [];
  /** Transactions sent while holding: signature -> their sendTransaction params. */
  let held: Map<string, unknown[]> | undefined;

  const chain = chainOf(svm);
  const slot = () => BigInt(chain.slot());
  const context = () => ({ slot: Number(slot()) });
  const messageKey = (tx: Transaction) =>
    createHash("sha256").update(Uint8Array.from(tx.messageBytes)).digest("hex");

  function decode(encoded: unknown, encoding: unknown): Transaction {
    if (typeof encoded !== "string")
      throw new RpcError(-32602, "invalid transaction: expected a string");
    if (encoding !== undefined && encoding !== "base64") {
      throw new RpcError(
        -32602,
        `this test RPC takes base64 transactions only, not ${String(encoding)}`,
      );
    }
    try {
      return getTransactionDecoder().decode(getBase64Encoder().encode(encoded));
    } catch (error) {
      throw new RpcError(-32602, `invalid transaction: ${String(error)}`);
    }
  }

  function firstSignature(tx: Transaction): string {
    const bytes = Object.values(tx.signatures)[0];
    return bytes ? base58.decode(bytes) : base58.decode(new Uint8Array(64));
  }

  function account(address: string, encoding: unknown) {
    const found = svm.getAccount(address as Address);
    if (!found.exists) return null;
    const common = {
      executable: found.executable,
      lamports: Number(found.lamports),
      owner: found.programAddress,
      rentEpoch: 0,
      space: found.data.length,
    };
    if (
      encoding === "jsonParsed" &&
      found.programAddress === TOKEN_PROGRAM_ADDRESS &&
      found.data.length === 165
    ) {
      const token = getTokenDecoder().decode(found.data);
      return {
        ...common,
        data: {
          program: "spl-token",
          parsed: {
            type: "account",
            info: {
              isNative: false,
              mint: token.mint,
              owner: token.owner,
              state: "initialized",
              tokenAmount: tokenAmount(token.amount),
            },
          },
          space: 165,
        },
      };
    }
    if (encoding !== undefined && encoding !== "base64" && encoding !== "jsonParsed") {
      throw new RpcError(
        -32602,
        `this test RPC answers base64 accounts only, not ${String(encoding)}`,
      );
    }
    return { ...common, data: [Buffer.from(found.data).toString("base64"), "base64"] };
  }

  function tokenAmount(amount: bigint) {
    const ui = Number(amount) / 10 ** options.decimals;
    return {
      amount: amount.toString(),
      decimals: options.decimals,
      uiAmount: ui,
      uiAmountString: String(ui),
    };
  }

  /** The transaction with its message's blockhash replaced (signatures no longer match: sigVerify is off). */
  function withLatestBlockhash(tx: Transaction): Transaction {
    const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    const messageBytes = getCompiledTransactionMessageEncoder().encode({
      ...compiled,
      lifetimeToken: svm.latestBlockhash(),
    } as never);
    return { ...tx, messageBytes: messageBytes as Transaction["messageBytes"] };
  }

  function simulate(params: unknown[]) {
    const config = (params[1] ?? {}) as {
      sigVerify?: boolean;
      encoding?: string;
      innerInstructions?: boolean;
      replaceRecentBlockhash?: boolean;
    };
    let tx = decode(params[0], config.encoding);
    if (byMessage.has(messageKey(tx))) {
      // A real node refuses a message it has already processed, whether or not this copy is fully signed.
      return {
        context: context(),
        value: {
          err: "AlreadyProcessed",
          logs: [],
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        },
      };
    }
    const sigVerify = config.sigVerify === true;
    // As a real node: the two options exclude each other, and the replacement is the latest blockhash.
    if (config.replaceRecentBlockhash === true) {
      if (sigVerify)
        throw new RpcError(-32602, "sigVerify may not be used with replaceRecentBlockhash");
      tx = withLatestBlockhash(tx);
    }
    svm.withSigverify(sigVerify);
    let result;
    try {
      result = svm.simulateTransaction(tx as never);
    } catch (error) {
      // LiteSVM asserts a fully signed transaction before simulating with sigverify on.
      return {
        context: context(),
        value: {
          err: "SignatureFailure",
          logs: [String(error)],
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        },
      };
    } finally {
      svm.withSigverify(true);
    }
    const meta = result.meta();
    return {
      context: context(),
      value: {
        err: result instanceof FailedTransactionMetadata ? errorJson(result.err()) : null,
        logs: meta.logs(),
        accounts: null,
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        returnData: null,
        ...(config.innerInstructions ? { innerInstructions: [] } : {}),
        ...(config.replaceRecentBlockhash === true ? { replacementBlockhash: chain.latest() } : {}),
      },
    };
  }

  function send(params: unknown[]) {
    const config = (params[1] ?? {}) as { encoding?: string; skipPreflight?: boolean };
    const tx = decode(params[0], config.encoding);
    const signature = firstSignature(tx);
    // A real node answers a landed transaction sent again with its signature (nothing happens twice).
    if (history.has(signature)) return signature;
    if (held) {
      held.set(signature, params);
      return signature;
    }
    const key = messageKey(tx);
    if (byMessage.has(key)) {
      throw new RpcError(
        -32002,
        "Transaction simulation failed: This transaction has already been processed",
      );
    }
    if (!config.skipPreflight) {
      const preflight = simulate([params[0], { sigVerify: true, encoding: config.encoding }]);
      if (preflight.value.err !== null) {
        throw new RpcError(
          -32002,
          `Transaction simulation failed: ${JSON.stringify(preflight.value.err)}`,
        );
      }
    }
    let result;
    try {
      result = svm.sendTransaction(tx as never);
    } catch (error) {
      throw new RpcError(-32003, `Transaction signature verification failure: ${String(error)}`);
    }
    const failed = result instanceof FailedTransactionMetadata ? result : undefined;
    const err = failed ? errorJson(failed.err()) : null;
    // Only execution errors land (with the fee charged); the rest never reach a block.
    if (typeof err === "string") throw new RpcError(-32002, `Transaction failed: ${err}`);
    const meta = failed
      ? failed.meta()
      : (result as Exclude<typeof result, FailedTransactionMetadata>);
    history.record(tx, String(params[0]), {
      signature,
      slot: Number(slot()),
      err,
      logs: meta.logs(),
      units: meta.computeUnitsConsumed(),
    });
    byMessage.set(key, signature);
    return signature;
  }

  function call(method: string, params: unknown[]): unknown {
    switch (method) {
      case "getLatestBlockhash":
        return {
          context: context(),
          value: options.latest === "newest" ? chain.newest() : chain.latest(),
        };
      case "isBlockhashValid":
        return { context: context(), value: chain.isValid(String(params[0])) };
      case "getBlocks":
        return chain.slots(Number(params[0]), Number(params[1] ?? chain.slot()));
      case "getBlock": {
        const block = chain.block(Number(params[0]));
        if (!block)
          throw new RpcError(
            -32007,
            `Slot ${String(params[0])} was skipped, or missing due to ledger jump to recent snapshot`,
          );
        const { blockhash, previousBlockhash, parentSlot, blockHeight } = block;
        return { blockhash, previousBlockhash, parentSlot, blockHeight, blockTime: null };
      }
      case "getAccountInfo": {
        const config = (params[1] ?? {}) as { encoding?: string };
        return { context: context(), value: account(String(params[0]), config.encoding) };
      }
      case "getMultipleAccounts": {
        const config = (params[1] ?? {}) as { encoding?: string };
        const addresses = (params[0] ?? []) as string[];
        return {
          context: context(),
          value: addresses.map((address) => account(address, config.encoding)),
        };
      }
      case "getBalance":
        return {
          context: context(),
          value: Number(svm.getBalance(String(params[0]) as Address) ?? 0n),
        };
      case "getTokenAccountBalance": {
        const found = svm.getAccount(String(params[0]) as Address);
        if (!found.exists || found.programAddress !== TOKEN_PROGRAM_ADDRESS) {
          throw new RpcError(-32602, "Invalid param: could not find account");
        }
        return {
          context: context(),
          value: tokenAmount(getTokenDecoder().decode(found.data).amount),
        };
      }
      case "getMinimumBalanceForRentExemption":
        return Number(svm.minimumBalanceForRentExemption(BigInt(Number(params[0] ?? 0))));
      case "getGenesisHash":
        return genesisHash;
      case "getSlot":
      case "getBlockHeight":
        return Number(slot());
      case "getHealth":
        return "ok";
      case "getVersion":
        return { "solana-core": "litesvm-1.5.0", "feature-set": 0 };
      case "simulateTransaction":
        return simulate(params);
      case "sendTransaction":
        return send(params);
      case "getSignatureStatuses":
        return { context: context(), value: history.statuses((params[0] ?? []) as string[]) };
      case "getSignaturesForAddress":
        return history.signaturesFor(
          String(params[0]),
          params[1] as Record<string, unknown>,
          Number(slot()),
        );
      case "getTransaction":
        return history.transaction(String(params[0]), params[1] as Record<string, unknown>);
      default:
        throw new RpcError(-32601, `Method not found: ${method} (this test RPC does not serve it)`);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) =>
      reply(res, { jsonrpc: "2.0", id: null, error: { code: -32603, message: String(error) } }),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return reply(res, {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error" },
      });
    }
    const one = (request: unknown) => {
      const { id, method, params } = (request ?? {}) as {
        id?: unknown;
        method?: unknown;
        params?: unknown;
      };
      if (typeof method !== "string") {
        return {
          jsonrpc: "2.0",
          id: id ?? null,
          error: { code: -32600, message: "Invalid request" },
        };
      }
      calls.push(method);
      try {
        return { jsonrpc: "2.0", id, result: call(method, Array.isArray(params) ? params : []) };
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603;
        return {
          jsonrpc: "2.0",
          id,
          error: { code, message: error instanceof Error ? error.message : String(error) },
        };
      }
    };
    return reply(res, Array.isArray(body) ? body.map(one) : one(body));
  }

  return {
    url: await listenLocal(server),
    calls,
    advance: (n) => chain.advance(n),
    holdSends: () => {
      held ??= new Map();
    },
    landHeld: () => {
      const waiting = [...(held ?? new Map<string, unknown[]>()).values()];
      held = undefined;
      return waiting.map((params) => send(params));
    },
    dropHeld: () => {
      held = undefined;
    },
    close: () => closeServer(server),
  };
}

function reply(res: ServerResponse, body: unknown) {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === "bigint" ? Number(value) : value,
  );
  res.writeHead(200, { "content-type": "application/json" }).end(text);
}

// LiteSVM's errors as a real node writes them: "AlreadyProcessed", {"InstructionError":[2,{"Custom":1}]}...
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled",
];
const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError",
];

function errorJson(err: unknown): unknown {
  if (typeof err === "number") return TRANSACTION_ERRORS[err] ?? `TransactionError(${err})`;
  const value = err as {
    index?: number;
    accountIndex?: number;
    err?: () => unknown;
    toString(): string;
  };
  if (typeof value.index === "number" && typeof value.err === "function") {
    const inner = value.err();
    const code = (inner as { code?: number }).code;
    const instruction =
      typeof inner === "number"
        ? (INSTRUCTION_ERRORS[inner] ?? `InstructionError(${inner})`)
        : typeof code === "number"
          ? { Custom: code }
          : String(inner);
    return { InstructionError: [value.index, instruction] };
  }
  if (typeof value.index === "number") return { DuplicateInstruction: value.index };
  if (typeof value.accountIndex === "number")
    return { InsufficientFundsForRent: { account_index: value.accountIndex } };
  return String(err);
}
