// The kit's transaction history, as a node's JSON-RPC tells it (rpc.ts): LiteSVM knows a signature's status
// only, so every transaction that lands (with its error, when it failed in execution) is kept here with its wire
// bytes, slot, time of landing and accounts, and these methods answer in a real node's shapes:
// - getSignatureStatuses: each signature's status (null for one that never landed);
// - getSignaturesForAddress(address, { limit, before, until, commitment, minContextSlot }): the transactions
//   whose accounts include the address, newest first ({ signature, slot, err, memo, blockTime,
//   confirmationStatus }), at most `limit` (1000 by default and at most), after `before` and down to `until`
//   (both exclusive); commitment "processed" is refused, and so is a minContextSlot past the current slot
//   (-32016), as a node does;
// - getTransaction(signature, { encoding: "base64", maxSupportedTransactionVersion }): null for an unknown
//   signature; { slot, blockTime, transaction: [base64, "base64"], meta, version }. A version-0 transaction asked
//   without maxSupportedTransactionVersion is refused as a node does. Only base64 is served (other encodings are
//   a JSON-RPC error, like the kit's other methods); meta holds err, status, logMessages and computeUnitsConsumed
//   (LiteSVM keeps no balances before and after, so those are not made up).
// Every landed transaction is "finalized" at once: the kit has no forks.
import { getCompiledTransactionMessageDecoder, type Transaction } from "@solana/kit";

export interface Landed {
  signature: string;
  slot: number;
  /** Unix seconds when it landed (a node's blockTime). */
  blockTime: number;
  err: unknown;
  /** The transaction as sent, base64. */
  wire: string;
  accounts: readonly string[];
  version: "legacy" | 0;
  logs: string[];
  computeUnits: number;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_LIMIT = 1000;

export function transactionHistory() {
  const landed: Landed[] = []; // oldest first
  const bySignature = new Map<string, Landed>();

  function signaturesFor(address: string, config: Record<string, unknown> = {}, slot: number) {
    if (config.commitment === "processed")
      throw new RpcError(-32602, "Method does not support commitment below `confirmed`");
    if (config.minContextSlot !== undefined && Number(config.minContextSlot) > slot)
      throw new RpcError(-32016, "Minimum context slot has not been reached");
    const limit = config.limit === undefined ? MAX_LIMIT : Number(config.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new RpcError(-32602, `Invalid limit; max ${MAX_LIMIT}`);
    let newest = landed.length - 1;
    if (config.before !== undefined) {
      const from = bySignature.get(String(config.before));
      if (!from) return [];
      newest = landed.indexOf(from) - 1;
    }
    const out = [];
    for (let i = newest; i >= 0 && out.length < limit; i--) {
      const tx = landed[i]!;
      if (config.until !== undefined && tx.signature === config.until) break;
      if (!tx.accounts.includes(address)) continue;
      out.push({
        signature: tx.signature,
        slot: tx.slot,
        err: tx.err,
        memo: null,
        blockTime: tx.blockTime,
        confirmationStatus: "finalized",
      });
    }
    return out;
  }

  function transaction(signature: string, config: Record<string, unknown> = {}) {
    const encoding = config.encoding ?? "json";
    if (encoding !== "base64")
      throw new RpcError(
        -32602,
        `this test RPC answers base64 transactions only, not ${String(encoding)}`,
      );
    const tx = bySignature.get(signature);
    if (!tx) return null;
    const max = config.maxSupportedTransactionVersion;
    if (tx.version !== "legacy" && max === undefined)
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    return {
      slot: tx.slot,
      blockTime: tx.blockTime,
      transaction: [tx.wire, "base64"],
      meta: {
        err: tx.err,
        status: tx.err === null ? { Ok: null } : { Err: tx.err },
        logMessages: tx.logs,
        computeUnitsConsumed: tx.computeUnits,
      },
      ...(max !== undefined && { version: tx.version }),
    };
  }

  function statuses(signatures: string[]) {
    return signatures.map((signature) => {
      const tx = bySignature.get(signature);
      if (!tx) return null;
      return {
        slot: tx.slot,
        confirmations: null,
        err: tx.err,
        status: tx.err === null ? { Ok: null } : { Err: tx.err },
        confirmationStatus: "finalized",
      };
    });
  }

  return {
    has: (signature: string) => bySignature.has(signature),
    /** Records a transaction that landed now, at `slot`, with its execution error (null: success). */
    record(
      tx: Transaction,
      wire: string,
      landing: { signature: string; slot: number; err: unknown; logs: string[]; units: bigint },
    ) {
      const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      const entry: Landed = {
        signature: landing.signature,
        slot: landing.slot,
        blockTime: Math.floor(Date.now() / 1000),
        err: landing.err,
        wire,
        accounts: message.staticAccounts,
        version: message.version,
        logs: landing.logs,
        computeUnits: Number(landing.units),
      };
      landed.push(entry);
      bySignature.set(entry.signature, entry);
    },
    signaturesFor,
    transaction,
    statuses,
  };
}
