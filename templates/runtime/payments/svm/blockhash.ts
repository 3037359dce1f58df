/**
 * How long a Solana payment can still land: its transaction dies with its blockhash, 150 blocks after
 * the block that blockhash names, and it is settled only after the job. Before a job runs, the gate
 * asks the network's RPC (X402_RPC_URL_<NET>) whether the blockhash outlives the job's deadline plus
 * SETTLEMENT_MARGIN_SECONDS; otherwise the payment is refused and nothing runs.
 * A wire transaction carries its blockhash, not its last valid block height, so the height is learned:
 *   - getLatestBlockhash names the latest blockhash and its lastValidBlockHeight;
 *   - isBlockhashValid refuses a blockhash that has expired or that the network never made;
 *   - an older one is looked up in the recent blocks (getBlocks, getBlock: its block's height), newest
 *     first, only as far back as a blockhash could be and still outlive the job.
 * Every blockhash learned is remembered, and the block height is read at most once a second (and
 * counted forward at one block per 400 ms slot, the fastest a block comes, in between), so a busy
 * server asks the RPC about a blockhash once. Part of your project: edit freely.
 */
import { rpcCall } from "../json-rpc.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../settlement.js";

/** A transaction lands while the block height is at most its blockhash's block height plus this. */
const MAX_PROCESSING_AGE = 150;
/** One slot: no block comes faster, so N blocks left last at least N times this. */
const SLOT_MS = 400;
/** How long a block height read stays the base of the estimate. */
const FRESH_MS = 1_000;
/** Blocks looked up per round of getBlock calls. */
const ROUND = 8;
const CONFIRMED = { commitment: "confirmed" };

export interface BlockhashClock {
  /**
   * Why a transaction with this blockhash could not land by `by` (Unix seconds), or undefined when
   * it can. Throws when the RPC could not tell.
   */
  problem(blockhash: string, by: number, nowMs?: number): Promise<string | undefined>;
  /** Whether the blockhash can still land now; undefined when the RPC could not tell. */
  valid(blockhash: string): Promise<boolean | undefined>;
}

export function blockhashClock(rpcUrl: string, timeoutMs = 5_000): BlockhashClock {
  const call = (method: string, params: unknown[]) => rpcCall(rpcUrl, method, params, timeoutMs);
  /** Blockhash -> the last block height at which a transaction using it can land. */
  const lastValid = new Map<string, number>();
  let tip: { height: number; slot: number; at: number } | undefined;
  let reading: Promise<void> | undefined;

  const height = (nowMs: number) => tip!.height + Math.floor((nowMs - tip!.at) / SLOT_MS);

  async function readTip(): Promise<void> {
    const [latest, blockHeight] = await Promise.all([
      call("getLatestBlockhash", [CONFIRMED]) as Promise<LatestBlockhash>,
      call("getBlockHeight", [CONFIRMED]),
    ]);
    const lv = Number(latest?.value?.lastValidBlockHeight);
    const slot = Number(latest?.context?.slot);
    if (!Number.isSafeInteger(lv) || !Number.isSafeInteger(slot) || typeof blockHeight !== "number")
      throw new Error("getLatestBlockhash or getBlockHeight answered an unexpected shape");
    tip = { height: blockHeight, slot, at: Date.now() };
    if (lastValid.size > 4096)
      for (const [hash, last] of lastValid) if (last < blockHeight) lastValid.delete(hash);
    lastValid.set(String(latest.value!.blockhash), lv);
  }
  /** One read at a time, shared by every payment waiting for it. */
  const refresh = (): Promise<void> =>
    (reading ??= readTip().finally(() => {
      reading = undefined;
    }));

  /** Finds the block that `blockhash` names among the last `maxAge` blocks; remembers each block seen. */
  async function lookUp(blockhash: string, maxAge: number): Promise<void> {
    const { slot, height: top } = tip!;
    const slots = (await call("getBlocks", [
      Math.max(0, slot - 2 * maxAge - 16),
      slot,
      CONFIRMED,
    ])) as number[];
    const newestFirst = Array.isArray(slots) ? [...slots].reverse() : [];
    for (let i = 0; i < newestFirst.length; i += ROUND) {
      const blocks = await Promise.all(newestFirst.slice(i, i + ROUND).map(block));
      let older = false;
      for (const b of blocks) {
        if (!b) continue;
        lastValid.set(b.blockhash, b.blockHeight + MAX_PROCESSING_AGE);
        if (b.blockHeight < top - maxAge) older = true;
      }
      if (lastValid.has(blockhash) || older) return;
    }
  }
  const block = async (
    slot: number,
  ): Promise<{ blockhash: string; blockHeight: number } | null> => {
    const params = { ...CONFIRMED, transactionDetails: "none", rewards: false };
    const b = (await call("getBlock", [slot, params]).catch(() => null)) as {
      blockhash?: unknown;
      blockHeight?: unknown;
    } | null;
    return typeof b?.blockhash === "string" && typeof b.blockHeight === "number"
      ? { blockhash: b.blockhash, blockHeight: b.blockHeight }
      : null;
  };

  return {
    async problem(blockhash, by, nowMs = Date.now()) {
      const need = Math.max(0, by - nowMs / 1000);
      const needBlocks = Math.ceil((need * 1000) / SLOT_MS);
      const enough = () => {
        const last = lastValid.get(blockhash);
        return last !== undefined && last - height(Date.now()) >= needBlocks;
      };
      if (tip && Date.now() - tip.at < FRESH_MS && enough()) return undefined;
      await refresh();
      if (!lastValid.has(blockhash)) {
        const answer = (await call("isBlockhashValid", [blockhash, CONFIRMED])) as {
          value?: unknown;
        };
        if (answer?.value !== true)
          return `the transaction's blockhash ${blockhash} has expired (or the network does not know it): it can no longer land. Sign a new transaction with a fresh blockhash`;
        await lookUp(blockhash, MAX_PROCESSING_AGE - needBlocks);
      }
      if (enough()) return undefined;
      const last = lastValid.get(blockhash);
      const left =
        last === undefined
          ? `is more than ${Math.max(0, MAX_PROCESSING_AGE - needBlocks)} blocks old`
          : `can land for ${Math.max(0, last - height(Date.now()))} more blocks (about ${Math.max(0, Math.floor(((last - height(Date.now())) * SLOT_MS) / 1000))} s, block height ${last})`;
      return (
        `the transaction's blockhash expires before the job's deadline plus ${SETTLEMENT_MARGIN_SECONDS} s to settle ` +
        `(${Math.ceil(need)} s from now, ${needBlocks} blocks): it ${left}. Sign a new transaction with a fresh blockhash`
      );
    },
    async valid(blockhash) {
      try {
        const answer = (await call("isBlockhashValid", [blockhash, CONFIRMED])) as {
          value?: unknown;
        };
        return typeof answer?.value === "boolean" ? answer.value : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

interface LatestBlockhash {
  context?: { slot?: unknown };
  value?: { blockhash?: unknown; lastValidBlockHeight?: unknown };
}
