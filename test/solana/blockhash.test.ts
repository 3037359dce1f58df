// The blockhash clock (templates/runtime/payments/svm/blockhash.ts) against the kit's JSON-RPC answering
// getLatestBlockhash as a node does (the newest block, so the payment's blockhash is an older one): its block is
// found among the recent blocks (getBlocks, getBlock), and the life left decides.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blockhashClock } from "../../templates/runtime/payments/svm/blockhash.js";
import { type SolanaKit, startSolanaKit } from "./kit.js";

let kit: SolanaKit;
beforeAll(async () => {
  kit = await startSolanaKit({ latest: "newest" });
});
afterAll(() => kit?.close());

const now = () => Date.now() / 1000;

describe("how long a payment's blockhash can still land", () => {
  it("finds an older blockhash's block: 20 blocks old it outlives a job due in 20 s (plus 15 s to settle); 100 blocks old it does not", async () => {
    const hash = kit.svm.latestBlockhash();
    kit.advanceBlocks(20);
    const clock = blockhashClock(kit.rpcUrl);
    expect(await clock.problem(hash, now() + 35)).toBeUndefined();
    expect(kit.rpcCalls).toEqual(
      expect.arrayContaining(["getLatestBlockhash", "isBlockhashValid", "getBlocks", "getBlock"]),
    );
    // Asked again, it knows the blockhash: no block is fetched again.
    const fetched = kit.rpcCalls.filter((m) => m === "getBlock").length;
    expect(await clock.problem(hash, now() + 35)).toBeUndefined();
    expect(kit.rpcCalls.filter((m) => m === "getBlock").length).toBe(fetched);
    // A second server learns it the same way; 80 blocks later (100 old) it has 50 blocks, 20 s, left.
    kit.advanceBlocks(80);
    expect(await blockhashClock(kit.rpcUrl).problem(hash, now() + 35)).toMatch(
      /the transaction's blockhash expires before the job's deadline plus 15 s to settle \(35 s from now, 88 blocks\): it is more than 62 blocks old/,
    );
    // Past 150 blocks it is expired.
    kit.advanceBlocks(51);
    expect(await blockhashClock(kit.rpcUrl).problem(hash, now() + 5)).toMatch(
      /the transaction's blockhash \S+ has expired \(or the network does not know it\): it can no longer land/,
    );
  });
});
