// The in-memory replay store: reservations with real (short) TTLs, and the bounded result cache.
import { describe, expect, it } from "vitest";
import {
  authorizationKey,
  authorizationTtl,
  createMemoryReplayStore,
  resultKey,
} from "../../templates/runtime/ledger/memory.js";
import type { VerifiedPayment } from "../../templates/runtime/types.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const result = (n: number) => ({ status: 200, headers: { "X-N": String(n) }, body: { n } });

describe("reservations", () => {
  it("reserve twice: the second finds it in flight", async () => {
    const store = createMemoryReplayStore();
    expect(await store.reserve("k", 60)).toBe("reserved");
    expect(await store.reserve("k", 60)).toBe("in-flight");
    expect(await store.reserve("other", 60)).toBe("reserved");
  });

  it("release makes it reservable again", async () => {
    const store = createMemoryReplayStore();
    await store.reserve("k", 60);
    await store.release("k");
    expect(await store.reserve("k", 60)).toBe("reserved");
  });

  it("settled: reserve answers settled, and release does not forget it", async () => {
    const store = createMemoryReplayStore();
    await store.reserve("k", 60);
    await store.markSettled("k", 60);
    expect(await store.reserve("k", 60)).toBe("settled");
    await store.release("k");
    expect(await store.reserve("k", 60)).toBe("settled");
  });

  it("expires after its TTL (pending and settled alike)", async () => {
    const store = createMemoryReplayStore();
    await store.reserve("pending", 0.15);
    await store.markSettled("settled", 0.15);
    expect(await store.reserve("pending", 60)).toBe("in-flight");
    await sleep(200);
    expect(await store.reserve("pending", 60)).toBe("reserved");
    expect(await store.reserve("settled", 60)).toBe("reserved");
  });

  it("concurrent reserves of one key: exactly one wins", async () => {
    const store = createMemoryReplayStore();
    const answers = await Promise.all(Array.from({ length: 20 }, () => store.reserve("k", 60)));
    expect(answers.filter((a) => a === "reserved")).toHaveLength(1);
    expect(answers.filter((a) => a === "in-flight")).toHaveLength(19);
  });
});

describe("result cache", () => {
  it("stores and returns a result until its TTL passes", async () => {
    const store = createMemoryReplayStore();
    expect(await store.getResult("r")).toBeUndefined();
    await store.putResult("r", result(1), 0.15);
    expect(await store.getResult("r")).toEqual(result(1));
    await sleep(200);
    expect(await store.getResult("r")).toBeUndefined();
  });

  it("keeps at most maxResults, evicting the least recently used", async () => {
    const store = createMemoryReplayStore({ maxResults: 2 });
    await store.putResult("a", result(1), 60);
    await store.putResult("b", result(2), 60);
    expect(await store.getResult("a")).toEqual(result(1)); // a is now the most recent
    await store.putResult("c", result(3), 60);
    expect(await store.getResult("b")).toBeUndefined();
    expect(await store.getResult("a")).toEqual(result(1));
    expect(await store.getResult("c")).toEqual(result(3));
  });
});

describe("keys", () => {
  const payment = {
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    authorization: {
      from: "0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      nonce: `0x${"AB".repeat(32)}`,
      validBefore: String(Math.floor(Date.now() / 1000) + 100),
    },
  } as unknown as VerifiedPayment;

  it("authorizationKey is chainId:asset:from:nonce, lowercased; resultKey adds the job_id", () => {
    const key = `84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266:0x${"ab".repeat(32)}`;
    expect(authorizationKey(payment)).toBe(key);
    expect(resultKey(payment, "Job-1")).toBe(`${key}:Job-1`);
  });

  it("authorizationTtl lasts until validBefore, at least 1 s", () => {
    expect(authorizationTtl(payment)).toBeGreaterThanOrEqual(99);
    expect(authorizationTtl(payment)).toBeLessThanOrEqual(100);
    const expired = { ...payment, authorization: { ...payment.authorization, validBefore: "1" } };
    expect(authorizationTtl(expired as VerifiedPayment)).toBe(1);
  });
});
