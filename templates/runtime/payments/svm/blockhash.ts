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

export const blockhashClock = (rpcUrl: string, timeoutMs = 5_000): BlockhashClock =>
  new Clock(rpcUrl, timeoutMs);

class Clock implements BlockhashClock {
  /** Blockhash -> the last block height at which a transaction using it can land. */
  private readonly lastValid = new Map<string, number>();
  private tip: { height: number; slot: number; at: number } | undefined;
  private reading: Promise<void> | undefined;
  /** Slot -> block height of the blocks fetched so far. */
  private readonly fetched = new Map<number, number>();

  constructor(
    private readonly rpcUrl: string,
    private readonly timeoutMs: number,
  ) {}

  private call(method: string, params: unknown[]): Promise<unknown> {
    return rpcCall(this.rpcUrl, method, params, this.timeoutMs);
  }

  /** The block height now, counted forward from the last read at one block per slot (at most). */
  private height(nowMs = Date.now()): number {
    return this.tip!.height + Math.floor((nowMs - this.tip!.at) / SLOT_MS);
  }

  /** Blocks left to the blockhash's last valid height; undefined when it is not known. */
  private left(blockhash: string): number | undefined {
    const last = this.lastValid.get(blockhash);
    return last === undefined ? undefined : last - this.height();
  }

  async problem(blockhash: string, by: number, nowMs = Date.now()): Promise<string | undefined> {
    const need = Math.max(0, by - nowMs / 1000);
    const needBlocks = Math.ceil((need * 1000) / SLOT_MS);
    const fresh = this.tip !== undefined && Date.now() - this.tip.at < FRESH_MS;
    if (fresh && (this.left(blockhash) ?? -1) >= needBlocks) return undefined;
    await this.refresh();
    if (!this.lastValid.has(blockhash)) {
      const answer = (await this.call("isBlockhashValid", [blockhash, CONFIRMED])) as {
        value?: unknown;
      };
      if (answer?.value !== true)
        return `the transaction's blockhash ${blockhash} has expired (or the network does not know it): it can no longer land. Sign a new transaction with a fresh blockhash`;
      await this.lookUp(blockhash, MAX_PROCESSING_AGE - needBlocks);
    }
    const left = this.left(blockhash);
    if (left !== undefined && left >= needBlocks) return undefined;
    const life =
      left === undefined
        ? `is more than ${Math.max(0, MAX_PROCESSING_AGE - needBlocks)} blocks old`
        : `can land for ${Math.max(0, left)} more blocks (about ${Math.floor((Math.max(0, left) * SLOT_MS) / 1000)} s, to block height ${this.lastValid.get(blockhash)})`;
    return (
      `the transaction's blockhash expires before the job's deadline plus ${SETTLEMENT_MARGIN_SECONDS} s to settle ` +
      `(${Math.ceil(need)} s from now, ${needBlocks} blocks): it ${life}. Sign a new transaction with a fresh blockhash`
    );
  }

  async valid(blockhash: string): Promise<boolean | undefined> {
    try {
      const answer = (await this.call("isBlockhashValid", [blockhash, CONFIRMED])) as {
        value?: unknown;
      };
      return typeof answer?.value === "boolean" ? answer.value : undefined;
    } catch {
      return undefined;
    }
  }

  /** Reads the block height and the latest blockhash; one read at a time, shared by every payment waiting. */
  private refresh(): Promise<void> {
    return (this.reading ??= this.readTip().finally(() => {
      this.reading = undefined;
    }));
  }

  private async readTip(): Promise<void> {
    const [latest, blockHeight] = await Promise.all([
      this.call("getLatestBlockhash", [CONFIRMED]) as Promise<LatestBlockhash>,
      this.call("getBlockHeight", [CONFIRMED]),
    ]);
    const lv = Number(latest?.value?.lastValidBlockHeight);
    const slot = Number(latest?.context?.slot);
    if (!Number.isSafeInteger(lv) || !Number.isSafeInteger(slot) || typeof blockHeight !== "number")
      throw new Error("getLatestBlockhash or getBlockHeight answered an unexpected shape");
    this.tip = { height: blockHeight, slot, at: Date.now() };
    if (this.lastValid.size > 4096)
      for (const [hash, last] of this.lastValid)
        if (last < blockHeight) this.lastValid.delete(hash);
    this.lastValid.set(String(latest.value!.blockhash), lv);
  }

  /** Finds the block `blockhash` names among the last `maxAge` blocks, newest first; remembers each block seen. */
  private async lookUp(blockhash: string, maxAge: number): Promise<void> {
    if (maxAge < 0) return;
    const { slot, height: top } = this.tip!;
    const slots = await this.call("getBlocks", [
      Math.max(0, slot - 2 * maxAge - 16),
      slot,
      CONFIRMED,
    ]);
    const newestFirst = Array.isArray(slots) ? [...(slots as number[])].reverse() : [];
    if (this.fetched.size > 4096)
      for (const s of this.fetched.keys())
        if (s < slot - 4 * MAX_PROCESSING_AGE) this.fetched.delete(s);
    for (let i = 0; i < newestFirst.length; i += ROUND) {
      // A block fetched before is not fetched again: its blockhash is remembered already.
      const heights = await Promise.all(
        newestFirst.slice(i, i + ROUND).map(async (s) => this.fetched.get(s) ?? this.block(s)),
      );
      if (this.lastValid.has(blockhash)) return;
      if (heights.some((h) => h !== null && h < top - maxAge)) return;
    }
  }

  /** Fetches a block, remembers its blockhash's life, and answers its height; null for a skipped slot. */
  private async block(slot: number): Promise<number | null> {
    const params = { ...CONFIRMED, transactionDetails: "none", rewards: false };
    const b = (await this.call("getBlock", [slot, params]).catch(() => null)) as {
      blockhash?: unknown;
      blockHeight?: unknown;
    } | null;
    if (typeof b?.blockhash !== "string" || typeof b.blockHeight !== "number") return null;
    this.lastValid.set(b.blockhash, b.blockHeight + MAX_PROCESSING_AGE);
    this.fetched.set(slot, b.blockHeight);
    return b.blockHeight;
  }
}

interface LatestBlockhash {
  context?: { slot?: unknown };
  value?: { blockhash?: unknown; lastValidBlockHeight?: unknown };
}
