// The payment ledger's contract, run against the in-memory ledger and against the Redis ledger on
// a real redis-server; then what only one of them does (byte-bounded cache; outages, key layout).
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keepLease } from "../../templates/runtime/ledger/lease.js";
import {
  LedgerUnavailableError,
  authorizationKey,
  authorizationTtlMs,
  type JobResult,
  type Ledger,
  type StoredResult,
} from "../../templates/runtime/ledger/ledger.js";
import { createMemoryLedger } from "../../templates/runtime/ledger/memory.js";
import { createRedisLedger } from "../../templates/runtime/ledger/redis/redis.js";
import type { Logger, VerifiedPayment } from "../../templates/runtime/types.js";
import { startRedis, type RedisServer } from "../redis/redis-server.js";

// Redis Cluster's key -> slot function (CRC16 of the hash tag), as ioredis computes it.
const keySlot = createRequire(import.meta.url)("cluster-key-slot") as (key: string) => number;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A fresh authorization key, so tests sharing a ledger never see each other's state. */
const newAuth = () => `84532:0xasset:0xpayer:0x${randomUUID().replaceAll("-", "")}`;
const result = (n: number, body = JSON.stringify({ n })): StoredResult => ({
  status: 200,
  headers: { "content-type": "application/json", "x-n": String(n) },
  body,
});

/** A job's result as the pipeline stores it (the request and payment hashes are opaque here). */
const jobResult = (jobId: string, value: StoredResult): JobResult => ({
  jobId,
  value,
  request: "request-hash",
  payment: "payment-hash",
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function recordingLogger() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, ...(fields ? { fields } : {}) });
    };
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => logger,
  };
  return { logger, lines };
}

/** How a suite gets its ledgers: `first` and `second` share one store (two Redis clients; one memory ledger twice). */
interface Subject {
  first: Ledger;
  second: Ledger;
  stop(): Promise<void>;
}

const subjects: { kind: string; start: () => Promise<Subject> }[] = [
  {
    kind: "memory",
    start: async () => {
      const ledger = createMemoryLedger();
      return { first: ledger, second: ledger, stop: () => ledger.close() };
    },
  },
  {
    kind: "redis",
    start: async () => {
      const server = await startRedis();
      const keyPrefix = `test:${randomUUID()}:`;
      const first = createRedisLedger({ url: server.url, keyPrefix });
      const second = createRedisLedger({ url: server.url, keyPrefix });
      return {
        first,
        second,
        stop: async () => {
          await Promise.all([first.close(), second.close()]);
          await server.stop();
        },
      };
    },
  },
];

describe.each(subjects)("$kind ledger", ({ start }) => {
  let subject: Subject | undefined;
  let ledger: Ledger;
  let other: Ledger;
  beforeAll(async () => {
    subject = await start();
    ({ first: ledger, second: other } = subject);
  });
  afterAll(() => subject?.stop());

  /** Reserves a fresh authorization; returns it with its token. */
  async function reserved(leaseMs = 60_000): Promise<{ auth: string; token: string }> {
    const auth = newAuth();
    const reservation = await ledger.reserve(auth, leaseMs);
    if (reservation.status !== "reserved")
      throw new Error(`expected reserved, got ${reservation.status}`);
    return { auth, token: reservation.token };
  }

  it("answers ping and describes itself", async () => {
    expect(await ledger.ping()).toBe(true);
    expect(ledger.describe()).toMatch(/^payment ledger: /);
  });

  it("reserve: the first gets a token, the next finds it in flight", async () => {
    const auth = newAuth();
    const first = await ledger.reserve(auth, 60_000);
    expect(first).toEqual({ status: "reserved", token: expect.any(String) });
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
    const another = await ledger.reserve(newAuth(), 60_000);
    expect(another.status).toBe("reserved");
    expect(another).not.toEqual(first); // every reservation has its own token
  });

  it("release frees only with the reservation's token", async () => {
    const { auth, token } = await reserved();
    await other.release(auth, "not-the-token");
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
    await other.release(auth, token);
    expect((await other.reserve(auth, 60_000)).status).toBe("reserved");
  });

  it("markSettled: reserve then says settled, and release never frees it", async () => {
    const { auth, token } = await reserved();
    await other.markSettled(auth, 60_000);
    expect(await ledger.reserve(auth, 60_000)).toEqual({ status: "settled" });
    await ledger.release(auth, token);
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "settled" });
    expect(await ledger.renew(auth, token, 60_000)).toBe(false);
  });

  it("markSettled overrides any state, free or held", async () => {
    const free = newAuth();
    await ledger.markSettled(free, 60_000);
    expect(await other.reserve(free, 60_000)).toEqual({ status: "settled" });
  });

  it("the result cached with markSettled is found by its authorization, whatever the job_id asked", async () => {
    const { auth } = await reserved();
    const jobId = "job-1 {with} odd:chars ✓";
    await ledger.markSettled(auth, 60_000, jobResult(jobId, result(1)));
    expect(await other.getResult(auth)).toEqual({
      ...jobResult(jobId, result(1)),
      settled: true,
    });
    expect(await other.getResult(newAuth())).toBeUndefined();
  });

  it("hold: the answer waits unsettled; no other job may reserve the authorization", async () => {
    const { auth, token } = await reserved();
    await other.hold(auth, 60_000, jobResult("job", result(7)));
    expect(await ledger.getResult(auth)).toEqual({
      ...jobResult("job", result(7)),
      settled: false,
    });
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "held" });
    await ledger.release(auth, token); // the reservation that held it can no longer free it
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "held" });
  });

  it("claimHeld: of 20 concurrent retries (from two instances) exactly one claims a held answer", async () => {
    const { auth } = await reserved();
    await ledger.hold(auth, 60_000, jobResult("job", result(1)));
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? ledger : other).claimHeld(auth, 60_000)),
    );
    expect(claims.filter((c) => c.status === "reserved")).toHaveLength(1);
    expect(claims.filter((c) => c.status === "in-flight")).toHaveLength(19);
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
  });

  it("a claim that ends unsettled (returnHeld, or its lease runs out) is held again", async () => {
    const { auth } = await reserved();
    await ledger.hold(auth, 60_000, jobResult("job", result(1)));
    const first = await other.claimHeld(auth, 60_000);
    if (first.status !== "reserved") throw new Error(first.status);
    await ledger.returnHeld(auth, "not-the-token");
    expect(await ledger.claimHeld(auth, 60_000)).toEqual({ status: "in-flight" });
    await ledger.returnHeld(auth, first.token);
    const second = await ledger.claimHeld(auth, 200);
    expect(second.status).toBe("reserved");
    await sleep(300);
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "held" });
    expect((await other.claimHeld(auth, 60_000)).status).toBe("reserved");
    expect((await ledger.getResult(auth))?.settled).toBe(false);
  });

  it("a claimed held answer, settled: replayed as settled; nothing left to claim", async () => {
    const { auth } = await reserved();
    await ledger.hold(auth, 60_000, jobResult("job", result(1)));
    const claim = await other.claimHeld(auth, 60_000);
    expect(claim.status).toBe("reserved");
    await other.markSettled(auth, 60_000, jobResult("job", result(2)));
    expect(await ledger.getResult(auth)).toEqual({
      ...jobResult("job", result(2)),
      settled: true,
    });
    expect(await ledger.claimHeld(auth, 60_000)).toEqual({ status: "settled" });
    expect(await ledger.reserve(auth, 60_000)).toEqual({ status: "settled" });
  });

  it("a held answer and its authorization are forgotten after their ttl (the payment has expired)", async () => {
    const { auth } = await reserved();
    await ledger.hold(auth, 200, jobResult("job", result(1)));
    await sleep(300);
    expect(await other.getResult(auth)).toBeUndefined();
    expect(await other.claimHeld(auth, 60_000)).toEqual({ status: "settled" });
  });

  it("an unconfirmed settlement's held answer is listed (on every instance) until forgotten", async () => {
    const { auth } = await reserved();
    const unconfirmed = { x402Version: 2, network: "eip155:84532", payer: "0xp", validBefore: 1 };
    await ledger.hold(auth, 60_000, { ...jobResult("job", result(1)), unconfirmed });
    expect(await other.listUnconfirmed(1000)).toContainEqual({ auth, jobId: "job" });
    expect((await other.getResult(auth))?.unconfirmed).toEqual(unconfirmed);
    await other.markSettled(auth, 60_000, jobResult("job", result(2)));
    await other.forgetUnconfirmed(auth, "job");
    expect(await ledger.listUnconfirmed(1000)).not.toContainEqual({ auth, jobId: "job" });
  });

  it("a lease expires by itself: the authorization is free again", async () => {
    const { auth } = await reserved(200);
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
    await sleep(300);
    expect((await other.reserve(auth, 60_000)).status).toBe("reserved");
  });

  it("a settled mark and its result expire after their ttl", async () => {
    const auth = newAuth();
    await ledger.markSettled(auth, 200, jobResult("j", result(1)));
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "settled" });
    await sleep(300);
    expect(await other.getResult(auth)).toBeUndefined();
    expect((await other.reserve(auth, 60_000)).status).toBe("reserved");
  });

  it("renew keeps our lease past its original end; another token cannot renew it", async () => {
    const { auth, token } = await reserved(200);
    expect(await other.renew(auth, "not-the-token", 60_000)).toBe(false);
    expect(await other.renew(auth, token, 1000)).toBe(true);
    await sleep(350);
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
    expect(await ledger.renew(newAuth(), token, 1000)).toBe(false); // nothing reserved there
  });

  it("20 concurrent reserves of one authorization (from two instances): exactly one wins", async () => {
    const auth = newAuth();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? other : ledger).reserve(auth, 60_000)),
    );
    expect(answers.filter((a) => a.status === "reserved")).toHaveLength(1);
    expect(answers.filter((a) => a.status === "in-flight")).toHaveLength(19);
  });

  it("exclusive: never two holders at once (from two instances)", async () => {
    const name = `lock-${randomUUID()}`;
    let holders = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? other : ledger).exclusive(name, 10_000, async () => {
          most = Math.max(most, ++holders);
          await sleep(5);
          holders--;
          return i;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(results.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it("exclusive: a waiter gives up with LedgerUnavailableError when the holder holds too long", async () => {
    const name = `lock-${randomUUID()}`;
    const holding = deferred();
    const taken = deferred();
    const holder = other.exclusive(name, 10_000, async () => {
      taken.resolve();
      await holding.promise;
      return "held";
    });
    await taken.promise;
    let ran = false;
    const waiter = ledger.exclusive(name, 150, async () => {
      ran = true;
    });
    await expect(waiter).rejects.toBeInstanceOf(LedgerUnavailableError);
    await expect(waiter).rejects.toThrow(name);
    expect(ran).toBe(false);
    holding.resolve();
    expect(await holder).toBe("held");
  });

  it("exclusive: a failing holder's error reaches its caller and the lock is free again", async () => {
    const name = `lock-${randomUUID()}`;
    await expect(
      ledger.exclusive(name, 10_000, async () => {
        throw new Error("work failed");
      }),
    ).rejects.toThrow("work failed");
    expect(await other.exclusive(name, 200, async () => "next")).toBe("next");
  });

  it("claimRecord: of claims sent at once by two instances one is kept; the others get it back, until its ttl ends; records do not see it", async () => {
    const key = `claim-${randomUUID()}`;
    const answers = await Promise.all(
      ["p1", "p2", "p3", "p4"].map((v, i) => (i % 2 ? other : ledger).claimRecord!(key, v, 300)),
    );
    const kept = answers.filter((x) => x === undefined);
    expect(kept).toHaveLength(1);
    const winner = ["p1", "p2", "p3", "p4"][answers.indexOf(undefined)];
    expect(answers.filter((x) => x !== undefined)).toEqual([winner, winner, winner]);
    expect(await ledger.claimRecord!(key, "later", 300)).toBe(winner);
    expect(await ledger.getRecord!(key)).toBeUndefined();
    await ledger.putRecord!(key, "a record", 60_000); // a record under the same key leaves it be
    expect(await other.claimRecord!(key, "later", 300)).toBe(winner);
    await sleep(450);
    expect(await other.claimRecord!(key, "after", 60_000)).toBeUndefined();
    expect(await ledger.claimRecord!(key, "again", 60_000)).toBe("after");
  });

  it("keepLease holds a reservation past its initial lease while running, and lets it expire once stopped", async () => {
    // Each renewal extends the lease by windowMs: a renewal late by up to ~900 ms (a loaded CI machine)
    // still keeps it; the 150 ms of an earlier version did not.
    const { auth, token } = await reserved(300);
    const errors: unknown[] = [];
    const lease = keepLease(ledger, auth, token, {
      leaseEndsAt: Date.now() + 300,
      renewEveryMs: 100,
      windowMs: 1000,
      onError: (err) => errors.push(err),
    });
    await sleep(1200); // four times the initial lease
    expect(await other.reserve(auth, 60_000)).toEqual({ status: "in-flight" });
    lease.stop();
    lease.stop(); // idempotent
    await sleep(1300); // past the last renewal's window
    expect((await other.reserve(auth, 60_000)).status).toBe("reserved");
    expect(errors).toEqual([]);
  });
});

describe("keepLease", () => {
  it("reports renewal failures and keeps renewing", async () => {
    const memory = createMemoryLedger();
    const reservation = await memory.reserve("a", 60_000);
    if (reservation.status !== "reserved") throw new Error("not reserved");
    let calls = 0;
    const flaky: Ledger = {
      ...memory,
      renew: async () => {
        calls++;
        throw new LedgerUnavailableError("down");
      },
    };
    const errors: unknown[] = [];
    const lease = keepLease(flaky, "a", reservation.token, {
      leaseEndsAt: Date.now() + 60_000,
      renewEveryMs: 20,
      onError: (err) => errors.push(err),
    });
    await sleep(150);
    lease.stop();
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(errors).toHaveLength(calls);
    expect(errors[0]).toBeInstanceOf(LedgerUnavailableError);
    const after = calls;
    await sleep(60);
    expect(calls).toBe(after); // stopped means stopped
  });

  it("asks for the rest of the initial lease, or the window if that is longer", async () => {
    const asked: number[] = [];
    const memory = createMemoryLedger();
    const spy: Ledger = {
      ...memory,
      renew: async (_auth, _token, leaseMs) => {
        asked.push(leaseMs);
        return true;
      },
    };
    const lease = keepLease(spy, "a", "t", {
      leaseEndsAt: Date.now() + 10_000,
      renewEveryMs: 20,
      windowMs: 500,
    });
    await sleep(70);
    lease.stop();
    expect(asked.length).toBeGreaterThan(0);
    for (const leaseMs of asked) {
      expect(leaseMs).toBeGreaterThan(9_000);
      expect(leaseMs).toBeLessThanOrEqual(10_000);
    }
    const late = keepLease(spy, "a", "t", {
      leaseEndsAt: Date.now(),
      renewEveryMs: 20,
      windowMs: 500,
    });
    asked.length = 0;
    await sleep(70);
    late.stop();
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((leaseMs) => leaseMs === 500)).toBe(true);
  });
});

describe("memory ledger", () => {
  const settleWith = (ledger: Ledger, auth: string, value: StoredResult) =>
    ledger.markSettled(auth, 60_000, jobResult("job", value));
  /** A result whose body alone is 1000 characters (at least 1000 bytes however it is counted). */
  const kilo = (n: number) => result(n, String(n).padEnd(1000, "x"));

  it("a live claim is never evicted: a flood of records leaves it, and past 100 000 live claims a new one is refused", async () => {
    const ledger = createMemoryLedger();
    expect(await ledger.claimRecord!("task-1", "first payment", 60_000)).toBeUndefined();
    for (let i = 0; i < 20_000; i++) await ledger.putRecord!(`task-${i}`, "x", 60_000);
    for (let i = 0; i < 99_999; i++) await ledger.claimRecord!(`other-${i}`, "p", 60_000);
    await expect(ledger.claimRecord!("one more", "p", 60_000)).rejects.toBeInstanceOf(
      LedgerUnavailableError,
    );
    expect(await ledger.claimRecord!("task-1", "second payment", 60_000)).toBe("first payment");
  });

  it("a flood of A2A task records never evicts a settlement note or a cancel mark; tasks keep within their bytes, the soonest to expire going first", async () => {
    const ledger = createMemoryLedger({ maxTaskRecordBytes: 1_000_000 });
    await ledger.putRecord!("settling:auth-1", "note", 60_000);
    await ledger.putRecord!("job-cancel:job-1", "cancelled", 60_000);
    await ledger.putRecord!("a2a-task:paid", "running", 24 * 3600_000); // kept past its deadline
    for (let i = 0; i < 10_001; i++) await ledger.putRecord!(`a2a-task:t-${i}`, "x", 300_000);
    const big = "y".repeat(100_000); // 200 000 bytes as counted (UTF-16)
    for (let i = 0; i < 10; i++) await ledger.putRecord!(`a2a-task:big-${i}`, big, 300_000);
    expect(await ledger.getRecord!("settling:auth-1")).toBe("note");
    expect(await ledger.getRecord!("job-cancel:job-1")).toBe("cancelled");
    expect(await ledger.getRecord!("a2a-task:paid")).toBe("running");
    expect(await ledger.getRecord!("a2a-task:big-9")).toBe(big);
    expect(await ledger.getRecord!("a2a-task:big-0")).toBeUndefined();
  });

  it("keeps at most maxResultBytes of results, evicting the least recently used", async () => {
    const ledger = createMemoryLedger({ maxResultBytes: 20_000 });
    const auths = Array.from({ length: 50 }, newAuth);
    for (const [n, auth] of auths.entries()) await settleWith(ledger, auth, kilo(n));
    const kept: number[] = [];
    for (const [n, auth] of auths.entries()) if (await ledger.getResult(auth)) kept.push(n);
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length * 1000).toBeLessThanOrEqual(20_000);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 50 - kept.length + i)); // the newest
    for (const auth of auths)
      expect(await ledger.reserve(auth, 1000)).toEqual({ status: "settled" });
  });

  it("evicts by recent use, not by age", async () => {
    // How many equal results fit, then: fill exactly, touch the oldest, add one more.
    const probe = createMemoryLedger({ maxResultBytes: 20_000 });
    const probeAuths = Array.from({ length: 50 }, newAuth);
    for (const [n, auth] of probeAuths.entries()) await settleWith(probe, auth, kilo(n));
    let fits = 0;
    for (const auth of probeAuths) if (await probe.getResult(auth)) fits++;

    const ledger = createMemoryLedger({ maxResultBytes: 20_000 });
    const auths = Array.from({ length: fits + 1 }, newAuth);
    for (let n = 0; n < fits; n++) await settleWith(ledger, auths[n]!, kilo(n));
    expect((await ledger.getResult(auths[0]!))?.value).toEqual(kilo(0)); // now the most recently used
    await settleWith(ledger, auths[fits]!, kilo(fits));
    expect((await ledger.getResult(auths[0]!))?.value).toEqual(kilo(0));
    expect(await ledger.getResult(auths[1]!)).toBeUndefined(); // the least recently used
    expect((await ledger.getResult(auths[fits]!))?.value).toEqual(kilo(fits));
  });

  it("does not cache a result over a quarter of maxResultBytes, but the authorization is spent", async () => {
    const ledger = createMemoryLedger({ maxResultBytes: 20_000 });
    const small = newAuth();
    await settleWith(ledger, small, kilo(1));
    const big = newAuth();
    await settleWith(ledger, big, result(2, "x".repeat(5001)));
    expect(await ledger.getResult(big)).toBeUndefined();
    expect(await ledger.reserve(big, 1000)).toEqual({ status: "settled" });
    expect((await ledger.getResult(small))?.value).toEqual(kilo(1)); // evicted nothing
  });

  it("keeps at most maxResults results, evicting the least recently used", async () => {
    const ledger = createMemoryLedger({ maxResults: 2 });
    const [a, b, c] = [newAuth(), newAuth(), newAuth()];
    await settleWith(ledger, a, result(1));
    await settleWith(ledger, b, result(2));
    expect((await ledger.getResult(a))?.value).toEqual(result(1));
    await settleWith(ledger, c, result(3));
    expect(await ledger.getResult(b)).toBeUndefined();
    expect((await ledger.getResult(a))?.value).toEqual(result(1));
    expect((await ledger.getResult(c))?.value).toEqual(result(3));
  });

  it("exclusive hands the lock to waiters in arrival order", async () => {
    const ledger = createMemoryLedger();
    const holding = deferred();
    const order: number[] = [];
    const holder = ledger.exclusive("L", 10_000, () => holding.promise);
    const waiters = [1, 2, 3].map((n) =>
      ledger.exclusive("L", 10_000, async () => {
        order.push(n);
      }),
    );
    holding.resolve();
    await Promise.all([holder, ...waiters]);
    expect(order).toEqual([1, 2, 3]);
  });

  it("says it protects this process only", () => {
    expect(createMemoryLedger().describe()).toMatch(/in memory.*this process only.*REDIS_URL/);
  });
});

describe("redis ledger", () => {
  let server: RedisServer | undefined;
  const ledgers: Ledger[] = [];
  const open = (options: Partial<Parameters<typeof createRedisLedger>[0]> = {}): Ledger => {
    const ledger = createRedisLedger({ url: server!.url, keyPrefix: "unused:", ...options });
    ledgers.push(ledger);
    return ledger;
  };
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(ledgers.map((ledger) => ledger.close()));
    await server?.stop();
  });

  it("keeps every key under its prefix, and one authorization's keys in one cluster hash slot", async () => {
    const keyPrefix = `slots:${randomUUID()}:`;
    const ledger = open({ keyPrefix });
    const auths = Array.from({ length: 5 }, newAuth);
    for (const auth of auths) {
      const reservation = await ledger.reserve(auth, 60_000);
      expect(reservation.status).toBe("reserved");
      await ledger.markSettled(auth, 60_000, jobResult("job-a", result(1)));
      await ledger.markSettled(auth, 60_000, jobResult("job-b", result(2)));
    }
    const raw = new Redis(server!.url);
    try {
      const lockKeys = await ledger.exclusive("settler:1:0xabc", 10_000, () =>
        raw.keys(`${keyPrefix}*lock*`),
      );
      expect(lockKeys).toHaveLength(1);
      const keys = await raw.keys("*");
      const ours = keys.filter((key) => auths.some((auth) => key.includes(auth)));
      expect(ours).toHaveLength(auths.length * 2); // a state and its one result each
      for (const key of ours) expect(key.startsWith(keyPrefix)).toBe(true);
      for (const auth of auths) {
        const slots = new Set(ours.filter((key) => key.includes(auth)).map(keySlot));
        expect(slots.size).toBe(1);
      }
      const allSlots = new Set(ours.map(keySlot));
      expect(allSlots.size).toBeGreaterThan(1); // the tag is the authorization, not the prefix
    } finally {
      raw.disconnect();
    }
  });

  it("ledgers with different prefixes do not see each other", async () => {
    const auth = newAuth();
    const one = open({ keyPrefix: `one:${randomUUID()}:` });
    const two = open({ keyPrefix: `two:${randomUUID()}:` });
    expect((await one.reserve(auth, 60_000)).status).toBe("reserved");
    expect((await two.reserve(auth, 60_000)).status).toBe("reserved");
  });

  it("a lock whose holder never lets go frees itself after holdMs", async () => {
    const name = `lock-${randomUUID()}`;
    const keyPrefix = `locks:${randomUUID()}:`;
    const [dead, alive] = [open({ keyPrefix }), open({ keyPrefix })];
    const forever = deferred();
    const taken = deferred();
    void dead.exclusive(name, 300, () => {
      taken.resolve();
      return forever.promise; // a holder that hangs (or died) never releases it
    });
    await taken.promise;
    const started = Date.now();
    expect(await alive.exclusive(name, 5000, async () => "mine")).toBe("mine");
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    forever.resolve();
  });

  it("describe names the server and prefix, never the credentials", () => {
    const ledger = createRedisLedger({
      url: "redis://agent:hunter2-secret@127.0.0.1:1/0?password=other-secret",
      keyPrefix: "my-agent:",
    });
    ledgers.push(ledger);
    const line = ledger.describe();
    expect(line).toContain("127.0.0.1:1");
    expect(line).toContain('"my-agent:"');
    expect(line).not.toMatch(/agent@|hunter2|other-secret/);
  });

  it("refuses a URL that is not redis:// or rediss:// without repeating it", () => {
    expect(() => createRedisLedger({ url: "http://user:pw-secret@host", keyPrefix: "x:" })).toThrow(
      /redis:\/\//,
    );
    expect(() =>
      createRedisLedger({ url: "http://user:pw-secret@host", keyPrefix: "x:" }),
    ).not.toThrow(/pw-secret/);
  });

  it("wrong credentials: calls fail with LedgerUnavailableError, and nothing shows the password", async () => {
    const { logger, lines } = recordingLogger();
    const ledger = open({
      url: `redis://agent:hunter2-secret@127.0.0.1:${server!.port}`,
      keyPrefix: "auth:",
      logger,
    });
    const failure = await ledger.reserve(newAuth(), 1000).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(LedgerUnavailableError);
    expect(String((failure as Error).message)).not.toContain("hunter2");
    expect(await ledger.ping()).toBe(false);
    expect(JSON.stringify(lines)).not.toContain("hunter2");
  });

  it("Redis down: calls fail fast with LedgerUnavailableError; back up: the same ledger recovers by itself", async () => {
    const own = await startRedis(); // stopping the shared server would disturb the other tests
    try {
      const { logger, lines } = recordingLogger();
      const ledger = createRedisLedger({ url: own.url, keyPrefix: "outage:", logger });
      ledgers.push(ledger);
      const auth = newAuth();
      expect((await ledger.reserve(auth, 60_000)).status).toBe("reserved");

      await own.stop();
      const calls: [string, () => Promise<unknown>][] = [
        ["reserve", () => ledger.reserve(newAuth(), 60_000)],
        ["getResult", () => ledger.getResult(auth)],
        ["markSettled", () => ledger.markSettled(auth, 60_000, jobResult("job", result(1)))],
        ["renew", () => ledger.renew(auth, "t", 60_000)],
        ["release", () => ledger.release(auth, "t")],
        ["exclusive", () => ledger.exclusive("L", 60_000, async () => "ran")],
      ];
      for (const [what, call] of calls) {
        const started = Date.now();
        const outcome = await call().then(
          () => "resolved",
          (err: unknown) => err,
        );
        expect(outcome, what).toBeInstanceOf(LedgerUnavailableError);
        expect(Date.now() - started, what).toBeLessThan(4000);
      }
      expect(await ledger.ping()).toBe(false);

      await own.restart();
      const deadline = Date.now() + 10_000;
      while (!(await ledger.ping())) {
        if (Date.now() > deadline) throw new Error("the ledger did not reconnect within 10 s");
        await sleep(50);
      }
      expect((await ledger.reserve(newAuth(), 60_000)).status).toBe("reserved");
      // One warning for the outage (not one per failed reconnection), one line on recovery.
      expect(lines.filter((line) => line.level === "warn")).toHaveLength(1);
      expect(lines.filter((line) => line.level === "info")).toHaveLength(1);
    } finally {
      await own.stop();
    }
  }, 30_000);

  it("Redis stops answering: calls fail within the command timeout, then it recovers by itself", async () => {
    const own = await startRedis();
    let paused = false;
    try {
      const ledger = createRedisLedger({
        url: own.url,
        keyPrefix: "paused:",
        commandTimeoutMs: 300,
      });
      ledgers.push(ledger);
      expect(await ledger.ping()).toBe(true);

      process.kill(own.pid, "SIGSTOP"); // the connection stays open, nothing answers
      paused = true;
      for (const call of [
        () => ledger.reserve(newAuth(), 60_000),
        () => ledger.getResult(newAuth()),
      ]) {
        const started = Date.now();
        await expect(call()).rejects.toBeInstanceOf(LedgerUnavailableError);
        expect(Date.now() - started).toBeLessThan(2000);
      }
      expect(await ledger.ping()).toBe(false);

      process.kill(own.pid, "SIGCONT");
      paused = false;
      const deadline = Date.now() + 10_000;
      while (!(await ledger.ping())) {
        if (Date.now() > deadline) throw new Error("the ledger did not recover within 10 s");
        await sleep(50);
      }
      expect((await ledger.reserve(newAuth(), 60_000)).status).toBe("reserved");
    } finally {
      if (paused) process.kill(own.pid, "SIGCONT");
      await own.stop();
    }
  }, 30_000);
});

describe("authorization keys", () => {
  const now = 1_700_000_000_500;
  const payment = {
    family: "evm",
    validBefore: 1_700_000_100, // the head's, the authorization's below
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    authorization: {
      from: "0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
      nonce: `0x${"AB".repeat(32)}`,
      validBefore: String(1_700_000_100),
    },
  } as unknown as VerifiedPayment;

  it("authorizationKey is chainId:asset:from:nonce, lowercased", () => {
    expect(authorizationKey(payment)).toBe(
      `84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266:0x${"ab".repeat(32)}`,
    );
  });

  it("authorizationTtlMs lasts until validBefore, at least 1 s", () => {
    expect(authorizationTtlMs(payment, now)).toBe(99_500);
    expect(authorizationTtlMs(payment, 1_700_000_099_900)).toBe(1000);
    expect(authorizationTtlMs(payment, 1_800_000_000_000)).toBe(1000);
  });
});
