/**
 * Whether a Solana transaction whose signature is not known landed (svm/reconcile.ts asks): a
 * facilitator's /settle that did not answer in time, or an x402 v1 facilitator that named no
 * transaction. Every copy of the transaction carries the payer's signature over one message, so it
 * is found by that message among the recent transactions of an account it must touch: the payer's
 * (the transfer's authority signs it, so it is one of the transaction's accounts).
 *   - getSignaturesForAddress(payer) at "confirmed", newest first, PAGE at a time (at most
 *     MAX_PAGES), back to the earliest time the transaction could have landed (its sending, less
 *     BLOCK_TIME_SLACK_SECONDS for a block's clock), and, asked to, from a node that has seen at
 *     least a given slot (minContextSlot: a lagging node behind a load balancer errs, not omits);
 *   - each signature landed since is fetched (getTransaction, base64) and its message
 *     hashed as the replay key hashes it (svm/transaction.ts, with @solana/kit's decoder), at most
 *     MAX_FETCHED new ones per search (a signature's message is remembered, so the next search goes
 *     on where this one stopped), all within SEARCH_MS.
 *   landed: found, with its signature and its error on chain (null when it succeeded);
 *   absent: the whole window was searched and it is not there;
 *   unsure: the search was cut short (its bounds, its time, the RPC): never taken for absent.
 * Part of your project: edit freely.
 */
import { rpcCall } from "../json-rpc.js";

/** Signatures asked per getSignaturesForAddress call, and at most this many calls per search. */
const PAGE = 100;
const MAX_PAGES = 3;
/** Transactions fetched (getTransaction) per search, besides those remembered. */
const MAX_FETCHED = 10;
/** How long one search may take in all. */
const SEARCH_MS = 15_000;
/** A block's time (blockTime) may differ from this server's clock by this much. */
const BLOCK_TIME_SLACK_SECONDS = 120;
/** Signatures whose message hash is remembered. */
const REMEMBERED = 4096;
const CONFIRMED = "confirmed";

export interface LandedQuery {
  /** An account the transaction must touch (the payer's). */
  address: string;
  /** SHA-256 of its message, base64 (svm/transaction.ts). */
  messageHash: string;
  /** Unix seconds: it cannot have landed before (it was sent after). */
  from: number;
  /** The answer must come from a node that has seen this slot (undefined: any). */
  minContextSlot?: number;
}

export type Landed =
  | { status: "landed"; signature: string; err: unknown }
  | { status: "absent" }
  | { status: "unsure"; reason: string };

export interface LandedFinder {
  find(query: LandedQuery): Promise<Landed>;
}

type Call = (method: string, params: unknown[]) => Promise<unknown>;
type MessageHashOf = (base64: string) => { messageHash: string };

interface SignatureInfo {
  signature: string;
  blockTime?: unknown;
  err?: unknown;
}

/** A finder over the network's RPC; `reader` decodes a wire transaction (svm/transaction.ts). */
export function landedFinder(
  rpcUrl: string,
  reader: Promise<MessageHashOf>,
  timeoutMs = 5_000,
): LandedFinder {
  /** Signature -> its message's hash ("" when it is no transaction we could have sent). */
  const hashes = new Map<string, string>();
  const remember = (signature: string, hash: string) => {
    if (hashes.size >= REMEMBERED) hashes.delete(hashes.keys().next().value!);
    hashes.set(signature, hash);
  };
  return {
    async find(query) {
      const until = Date.now() + SEARCH_MS;
      const call: Call = (method, params) => {
        const left = until - Date.now();
        if (left <= 0) throw new Error(`the search took more than ${SEARCH_MS / 1000} s`);
        return rpcCall(rpcUrl, method, params, Math.min(timeoutMs, left));
      };
      try {
        return await search(call, await reader, hashes, remember, query);
      } catch (err) {
        return {
          status: "unsure",
          reason: `could not search ${query.address}'s transactions: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
    },
  };
}

async function search(
  call: Call,
  read: MessageHashOf,
  hashes: Map<string, string>,
  remember: (signature: string, hash: string) => void,
  q: LandedQuery,
): Promise<Landed> {
  const from = q.from - BLOCK_TIME_SLACK_SECONDS;
  let fetched = 0;
  let before: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list = await signaturesOf(call, q, before);
    for (const info of list) {
      const time = typeof info.blockTime === "number" ? info.blockTime : undefined;
      if (time !== undefined && time < from) return { status: "absent" }; // newest first: the rest is older
      let hash = hashes.get(info.signature);
      if (hash === undefined) {
        if (fetched === MAX_FETCHED)
          return { status: "unsure", reason: `more than ${MAX_FETCHED} transactions to look at` };
        fetched += 1;
        hash = await messageHash(call, read, info.signature);
        if (hash === undefined)
          return {
            status: "unsure",
            reason: `transaction ${info.signature} could not be fetched yet`,
          };
        remember(info.signature, hash);
      }
      if (hash === q.messageHash)
        return { status: "landed", signature: info.signature, err: info.err ?? null };
    }
    if (list.length < PAGE) return { status: "absent" }; // the account's whole history
    before = list[list.length - 1]!.signature;
  }
  return {
    status: "unsure",
    reason: `${q.address} has more than ${PAGE * MAX_PAGES} recent transactions`,
  };
}

/** One page of the account's signatures at "confirmed", newest first, older than `before`. */
async function signaturesOf(
  call: Call,
  q: LandedQuery,
  before: string | undefined,
): Promise<SignatureInfo[]> {
  const config = {
    commitment: CONFIRMED,
    limit: PAGE,
    ...(before && { before }),
    ...(q.minContextSlot !== undefined && { minContextSlot: q.minContextSlot }),
  };
  const list = await call("getSignaturesForAddress", [q.address, config]);
  if (
    !Array.isArray(list) ||
    list.some((i) => typeof (i as { signature?: unknown })?.signature !== "string")
  )
    throw new Error("getSignaturesForAddress answered an unexpected shape");
  return list as SignatureInfo[];
}

/** The hash of a landed transaction's message; undefined when the RPC does not have it (yet). */
async function messageHash(
  call: Call,
  read: MessageHashOf,
  signature: string,
): Promise<string | undefined> {
  const config = { encoding: "base64", commitment: CONFIRMED, maxSupportedTransactionVersion: 0 };
  const found = (await call("getTransaction", [signature, config])) as {
    transaction?: unknown;
  } | null;
  if (found === null) return undefined;
  const wire = Array.isArray(found?.transaction) ? found.transaction[0] : undefined;
  if (typeof wire !== "string") throw new Error("getTransaction answered an unexpected shape");
  try {
    return read(wire).messageHash;
  } catch {
    return ""; // it does not decode as a transaction: not one we could have sent
  }
}
