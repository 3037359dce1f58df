// The kit's chain of blocks, as a node's JSON-RPC tells it (rpc.ts): LiteSVM keeps one blockhash at a time, never
// advances on its own and keeps no block history, so the kit keeps one:
// - every blockhash LiteSVM hands out is a block, at the slot (and block height: no slot is skipped) it was
//   first seen; its lastValidBlockHeight is that height plus 150, as a node's getLatestBlockhash says;
// - advance(n) makes n more blocks: the chain's height grows, and LiteSVM's blockhash ages with it (a
//   transaction signed with it still lands, as on a node, for 150 blocks); the new blocks have hashes of their
//   own, which no transaction can use (LiteSVM does not know them), and once the height passes the blockhash's
//   last valid one, LiteSVM's blockhash is expired for real (it then refuses every transaction using it) and a
//   new one is the latest;
// - getBlocks and getBlock answer from this history; a slot before the kit started is "skipped".
import { createHash } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import type { LiteSVM } from "litesvm";

/** A blockhash lets a transaction land until the block height passes its block's height plus this. */
export const MAX_PROCESSING_AGE = 150;

export interface Block {
  slot: number;
  blockHeight: number;
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
}

export interface Blocks {
  slot(): number;
  height(): number;
  /** The blockhash transactions can use now, recorded as a block when new. */
  latest(): { blockhash: string; lastValidBlockHeight: number };
  /** The newest block's hash, as a node's getLatestBlockhash answers (after advance(): one no transaction can use). */
  newest(): { blockhash: string; lastValidBlockHeight: number };
  /** Whether a transaction using this blockhash could land now. */
  isValid(blockhash: string): boolean;
  advance(n: number): void;
  /** Slots with a block in [start, end], ascending. */
  slots(start: number, end: number): number[];
  block(slot: number): Block | undefined;
}

export function chainOf(svm: LiteSVM): Blocks {
  let extra = 0;
  const bySlot = new Map<number, Block>();
  const heightOf = new Map<string, number>();
  let last: Block | undefined;
  const slot = () => Number(svm.getClock().slot) + extra;

  function record(blockhash: string): void {
    if (last && last.slot >= slot()) extra += last.slot - slot() + 1; // a new block takes a new slot
    const block: Block = {
      slot: slot(),
      blockHeight: slot(),
      blockhash,
      previousBlockhash: last?.blockhash ?? blockhash,
      parentSlot: last?.slot ?? slot() - 1,
    };
    bySlot.set(block.slot, block);
    heightOf.set(blockhash, block.blockHeight);
    last = block;
  }
  /** LiteSVM's blockhash, recorded at the slot it was first seen. */
  function usable(): string {
    const hash = svm.latestBlockhash();
    if (!heightOf.has(hash)) record(hash);
    return hash;
  }
  usable();

  return {
    slot,
    height: slot,
    latest() {
      const blockhash = usable();
      return { blockhash, lastValidBlockHeight: heightOf.get(blockhash)! + MAX_PROCESSING_AGE };
    },
    newest() {
      usable();
      return {
        blockhash: last!.blockhash,
        lastValidBlockHeight: last!.blockHeight + MAX_PROCESSING_AGE,
      };
    },
    isValid(blockhash) {
      return blockhash === usable() && slot() <= heightOf.get(blockhash)! + MAX_PROCESSING_AGE;
    },
    advance(n) {
      for (let i = 0; i < n; i++) {
        extra += 1;
        const seed = createHash("sha256").update(`kit block ${slot()}`).digest();
        record(getBase58Decoder().decode(seed));
        const hash = svm.latestBlockhash();
        if (slot() > heightOf.get(hash)! + MAX_PROCESSING_AGE) {
          svm.expireBlockhash();
          usable();
        }
      }
    },
    slots(start, end) {
      return [...bySlot.keys()].filter((s) => s >= start && s <= end).sort((a, b) => a - b);
    },
    block: (s) => bySlot.get(s),
  };
}
