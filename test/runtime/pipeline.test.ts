// The paid pipeline's order, with a recording settler (no chain): verify -> reserve -> handler ->
// output -> settle -> respond. Nothing is settled for a failed job, the reservation is released
// whenever nothing was (or may have been) charged, and one authorization never runs twice.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Ledger } from "../../templates/runtime/ledger/ledger.js";
import { createMemoryLedger } from "../../templates/runtime/ledger/memory.js";
import { SettlementError } from "../../templates/runtime/payments/settlement.js";
import { loadMcpSdk } from "../../src/caller/mcp-sdk.js";
import { mcpSend } from "../../src/caller/mcp-send.js";
import { retryingFetch } from "../../src/caller/retry.js";
import {
  anvilAccount,
  job,
  logText,
  makeAgent,
  nowSeconds,
  post,
  production,
  recordingSettler,
  settledReceipt,
  signAuthorization,
  startApp,
  unb64,
  v1Header,
  type RecordingSettler,
  type TestAgent,
  paymentSignature,
  type AuthorizationParams,
} from "./helpers.js";

const payer = anvilAccount();
const TX = `0x${"cd".repeat(32)}` as const;

/** A memory ledger that also records what the pipeline did with it (`slot:`: the payer's, payer-slots.ts). */
function spyLedger(inner: Ledger = createMemoryLedger()) {
  const log: string[] = [];
  const slot = (key: string) => (key.startsWith("payer:") ? "slot:" : "");
  const ledger: Ledger = {
    ...inner,
    reserve: async (auth, leaseMs) => {
      const r = await inner.reserve(auth, leaseMs);
      log.push(`${slot(auth)}reserve:${r.status}`);
      return r;
    },
    release: async (auth, token) => {
      log.push(`${slot(auth)}release`);
      await inner.release(auth, token);
    },
    markSettled: async (auth, ttlMs, result) => {
      log.push(result ? "markSettled+result" : "markSettled");
      await inner.markSettled(auth, ttlMs, result);
    },
    hold: async (auth, ttlMs, result) => {
      log.push(result.unconfirmed ? "hold unconfirmed" : "hold");
      await inner.hold(auth, ttlMs, result);
    },
  };
  return { ledger, log };
}

/** The ledger's log of a job that ran: its authorization and its payer's slot taken, `end`, the slot freed. */
const ran = (end: string) => ["reserve:reserved", "slot:reserve:reserved", end, "slot:release"];

let agent: TestAgent;
let settler: RecordingSettler;
let spy: ReturnType<typeof spyLedger>;
let app: Awaited<ReturnType<typeof startApp>>;
/** Everything in order: settler calls and handler runs. */
let events: string[];

beforeEach(async () => {
  agent = makeAgent();
  events = [];
  settler = recordingSettler();
  const { verify, settle } = settler;
  settler.verify = async (p) => {
    events.push("verify");
    return verify(p);
  };
  settler.settle = async (p) => {
    events.push("settle");
    return settle(p);
  };
  for (const c of Object.values(agent.capabilities)) {
    const handler = c.handler;
    c.handler = (input, ctx) => {
      events.push(`handler:${c.name}`);
      return handler(input, ctx);
    };
  }
  spy = spyLedger();
  app = await startApp(agent, { ...production(settler), ledger: spy.ledger });
});
afterEach(() => app.close());

const runs = (name: string): number => agent.calls[name] ?? 0;
const pay = (p: AuthorizationParams = {}) => paymentSignature(payer, p);
/** A payment whose settlement is broadcast (TX) but not confirmed in time. */
function payUnconfirmed() {
  settler.behave.fail = new SettlementError(
    `settlement transaction ${TX} was sent but not confirmed within 30 s; it may still be mined`,
    { broadcastTx: TX },
  );
  return pay();
}
const send = (header: string, body: ReturnType<typeof job>) =>
  post(app.url, body, { "payment-signature": header });

describe("success", () => {
  it("verify, handler, settle, in that order; the response carries PAYMENT-RESPONSE", async () => {
    const res = await send(await pay(), job("echo", { text: "hi" }));
    expect(res.status).toBe(200);
    expect(res.body.output).toEqual({ text: "hi" });
    expect(events).toEqual(["verify", "handler:echo", "settle"]);
    expect(spy.log).toEqual(ran("markSettled+result"));
    const receipt = unb64(res.headers.get("payment-response")!);
    expect(receipt).toEqual(settledReceipt(payer.address));
    expect(logText(app.logger)).toContain("payment settled");
  });

  it("v1 payments get X-PAYMENT-RESPONSE", async () => {
    const header = v1Header(await signAuthorization(payer));
    const res = await post(app.url, job("echo", { text: "v1" }), { "x-payment": header });
    expect(res.status).toBe(200);
    expect(unb64(res.headers.get("x-payment-response")!)).toMatchObject({
      success: true,
      network: "base-sepolia",
    });
  });
});

describe("failures before settlement: nothing settled, reservation released", () => {
  it.each<[string, () => ReturnType<typeof job>, number, string]>([
    ["handler throws", () => job("throws", { text: "internal" }), 500, "throws"],
    ["handler throws an unhandled exception", () => job("throws", { text: "x" }), 500, "throws"],
    [
      "handler throws a ValidationError",
      () => job("throws", { text: "validation" }),
      400,
      "throws",
    ],
    ["invalid output", () => job("bad_output", { text: "x" }), 500, "bad_output"],
    [
      "handler timeout",
      () => job("slow", { ms: 3000 }, { deadline: Date.now() / 1000 + 1 }),
      408,
      "slow",
    ],
  ])("%s", async (_name, body, status, capability) => {
    const header = await pay();
    const res = await send(header, body());
    expect(res.status).toBe(status);
    expect(runs(capability)).toBe(1);
    expect(settler.settled()).toBe(0);
    expect(spy.log).toEqual(ran("release"));
    // Released: the payer may retry with the same authorization, and this time it pays.
    const retry = await send(header, job("echo", { text: "again" }));
    expect(retry.status).toBe(200);
    expect(settler.settled()).toBe(1);
  });

  it("deadline passed on arrival: handler not run, released", async () => {
    const header = await pay();
    const res = await send(header, job("echo", { text: "x" }, { deadline: nowSeconds() - 2 }));
    expect(res.status).toBe(408);
    expect(runs("echo")).toBe(0);
    expect(settler.settled()).toBe(0);
    expect(spy.log).toEqual(ran("release"));
    expect((await send(header, job("echo", { text: "x" }))).status).toBe(200);
  });

  it("the settler's pre-check refuses: 402 with its reason, handler not run, released", async () => {
    settler.behave.refuse = "the facilitator refused the payment: insufficient_funds";
    const header = await pay();
    const res = await send(header, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    expect(res.body).toEqual({
      status: "failed",
      error_type: "payment",
      error: "the facilitator refused the payment: insufficient_funds",
    });
    expect(res.headers.get("payment-required")).not.toBeNull();
    expect(runs("echo")).toBe(0);
    // Refused before the payer's slot is taken.
    expect(spy.log).toEqual(["reserve:reserved", "release"]);
  });

  it("a refused payment is never reserved", async () => {
    const res = await send(await pay({ value: "1" }), job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    expect(spy.log).toEqual([]);
    expect(events).toEqual([]);
  });
});

describe("settlement fails", () => {
  it("not charged: 402 payment, output withheld, reservation released", async () => {
    settler.behave.fail = new SettlementError(
      "the facilitator could not settle the payment: insufficient_funds",
    );
    const header = await pay();
    const request = job("echo", { text: "secret output" });
    const res = await send(header, request);
    expect(res.status).toBe(402);
    expect(res.body.error_type).toBe("payment");
    expect(res.body.error).toMatch(
      /not settled, so the result is withheld: .*insufficient_funds\. Nothing was charged\. The same authorization may be sent again\.$/,
    );
    expect(res.text).not.toContain("secret output");
    expect(res.headers.get("payment-response")).toBeNull();
    expect(res.headers.get("payment-required")).not.toBeNull();
    expect(events).toEqual(["verify", "handler:echo", "settle"]);
    expect(spy.log).toEqual(ran("release"));

    // The same authorization may be retried once settlement works again.
    settler.behave.fail = undefined;
    const retry = await send(header, request);
    expect(retry.status).toBe(200);
    expect(runs("echo")).toBe(2);
  });

  it("broadcast but unconfirmed: 402 naming the tx, answer held, never settled twice", async () => {
    const header = await payUnconfirmed();
    const request = job("echo", { text: "x" });
    const res = await send(header, request);
    expect(res.status).toBe(402);
    expect(res.body.error).toContain(TX);
    expect(res.body.error).toMatch(/unconfirmed.*will not be used again/);
    // No invitation to pay again until the client has checked the transaction.
    expect(res.headers.get("payment-required")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
    // The machine-readable "send the same again later, sign nothing new" that payers act on.
    expect(res.headers.get("retry-after")).toBe("5");
    expect(spy.log).toEqual(ran("hold unconfirmed"));

    // Without a way to ask the chain (no X402_RPC_URL) it stays unconfirmed: the identical retry
    // is told so, another job is refused; nothing is settled again.
    settler.behave.fail = undefined;
    const again = await send(header, request);
    expect(again.status).toBe(402);
    expect(again.body.error).toMatch(/still unconfirmed/);
    expect(again.headers.get("retry-after")).toBe("5");
    const other = await send(header, job("echo", { text: "another" }));
    expect(other.status).toBe(402);
    expect(other.body.error).toMatch(/answer waits for the identical request/);
    // Another job: waiting would not get its own answer, so nothing says "again later".
    expect(other.headers.get("retry-after")).toBeNull();
    expect(settler.settled()).toBe(1);
    expect(runs("echo")).toBe(1);
  });

  it("over MCP too: `call --mcp` waits out an unconfirmed settlement as over HTTP, the same payment, saying why", async () => {
    const header = await payUnconfirmed();
    const told: string[] = [];
    const waits: number[] = [];
    const send = retryingFetch({
      fetchImpl: mcpSend(await loadMcpSdk(), fetch),
      inUseUntilMs: Date.now() + 60_000,
      onRetry: (m) => told.push(m),
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length === 2) throw new Error("waited twice");
      },
    });
    const sent = send(`${app.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", "payment-signature": header },
      body: JSON.stringify(job("echo", { text: "x" })),
    });
    await expect(sent).rejects.toThrow("waited twice");
    // Not "the payer's jobs are running" (a 429's words): its settlement, after the Retry-After asked.
    expect(told).toHaveLength(2);
    for (const m of told)
      expect(m).toMatch(
        /holds this job's result until its payment's settlement is confirmed; asking again in 5 s/,
      );
    expect(waits).toEqual([5000, 5000]);
    expect(settler.settled()).toBe(1);
    expect(runs("echo")).toBe(1);
  });

  it("unconfirmed, and the ledger cannot keep its answer: 402 saying it may be charged, with nothing to wait for", async () => {
    spy.ledger.hold = async () => {
      throw new Error("ledger down");
    };
    const header = await payUnconfirmed();
    const request = job("echo", { text: "x" });
    const res = await send(header, request);
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/could not be kept .*may have been charged/);
    expect(res.body.error).toContain(TX);
    // Payers wait out "settlement is unconfirmed" and a Retry-After: here no answer is kept to wait for.
    expect(res.body.error).not.toMatch(/settlement is unconfirmed|\bin use\b/);
    expect(res.headers.get("retry-after")).toBeNull();
    const again = await send(header, request);
    expect(again.body.error).toMatch(/already used/);
    expect(settler.settled()).toBe(1);
    expect(runs("echo")).toBe(1);
  });

  it("a held answer settled for an identical retry: unconfirmed and the ledger cannot keep it, 402 saying it may be charged", async () => {
    const header = await pay();
    const request = job("slow", { ms: 400 });
    // The buyer gives up while the handler runs: nothing charged, its answer held for an identical retry.
    const gone = new AbortController();
    const first = fetch(`${app.url}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", "payment-signature": header },
      body: JSON.stringify(request),
      signal: gone.signal,
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 150));
    gone.abort();
    await first;
    await expect.poll(() => spy.log.includes("hold"), { timeout: 3000 }).toBe(true);
    expect(settler.settled()).toBe(0);
    // The retry settles the held answer; the chain does not confirm it in time, and the ledger fails.
    settler.behave.fail = new SettlementError(
      `settlement transaction ${TX} was sent but not confirmed`,
      {
        broadcastTx: TX,
      },
    );
    spy.ledger.hold = async () => {
      throw new Error("ledger down");
    };
    const res = await send(header, request);
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/could not be kept .*may have been charged/);
    expect(res.body.error).not.toMatch(/settlement is unconfirmed|\bin use\b/);
    expect(res.headers.get("retry-after")).toBeNull();
    expect(settler.settled()).toBe(1);
    // Maybe charged: never settled or run again.
    settler.behave.fail = undefined;
    const again = await send(header, request);
    expect(again.body.error).toMatch(/already used/);
    expect(settler.settled()).toBe(1);
    expect(runs("slow")).toBe(1);
  });

  it("an unexpected settler error counts as unconfirmed (kept)", async () => {
    settler.behave.fail = new Error("boom");
    const header = await pay();
    const res = await send(header, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    expect(res.body.error).toContain("settlement failed unexpectedly");
    expect(res.text).not.toContain("boom");
    expect(spy.log).toEqual(ran("hold unconfirmed"));
  });
});

describe("replay", () => {
  it("identical retry (same job_id, same authorization): cached answer, no run, no charge", async () => {
    const header = await pay();
    const request = job("echo", { text: "once" });
    const first = await send(header, request);
    await new Promise((r) => setTimeout(r, 1100)); // completed_at would differ if it ran again
    const second = await send(header, request);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("payment-response")).toBe(first.headers.get("payment-response"));
    expect(runs("echo")).toBe(1);
    expect(settler.settled()).toBe(1);
    expect(logText(app.logger)).toContain("identical retry");
  });

  it("the same authorization for another request after settlement, or for the same request under another job_id the caller chose: 402 already used", async () => {
    const header = await pay();
    const first = await send(header, job("echo", { text: "a" }));
    expect(first.status).toBe(200);
    // Another job_id is another job, which this spent payment cannot pay for (nothing run).
    for (const other of [job("echo", { text: "a" }), job("echo", { text: "b" })]) {
      const res = await send(header, other);
      expect(res.status, res.text).toBe(402);
      expect(res.body.error).toBe(
        "this payment authorization was already used for another job (or refused at settlement): sign a new one (with a fresh nonce)",
      );
      expect(res.headers.get("retry-after")).toBeNull();
    }
    expect(runs("echo")).toBe(1);
    expect(settler.settled()).toBe(1);
  });

  it("while a job holds the authorization, another request gets 402 in use", async () => {
    const header = await pay();
    const running = send(header, job("slow", { ms: 300 }));
    await new Promise((r) => setTimeout(r, 100));
    const res = await send(header, job("echo", { text: "x" }));
    expect(res.status).toBe(402);
    expect(res.body.error).toMatch(/in use by a job that is still running/);
    // No offer: its answer comes to the identical request; a new payment would pay that job twice.
    expect(res.headers.get("payment-required")).toBeNull();
    expect(res.headers.get("retry-after")).toBe("1");
    expect((await running).status).toBe(200);
    expect(runs("echo")).toBe(0);
  });

  it("20 concurrent requests with one authorization: one handler run, one settlement", async () => {
    settler.behave.delayMs = 50;
    const header = await pay();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => send(header, job("slow", { ms: 100 }))),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status === 402);
    expect(refused).toHaveLength(19);
    for (const a of refused) expect(a.body.error).toMatch(/in use|already used/);
    expect(runs("slow")).toBe(1);
    expect(settler.settled()).toBe(1);
  });

  it("20 concurrent identical requests (same job_id): one run, one settlement", async () => {
    const header = await pay();
    const request = job("slow", { ms: 100 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(header, request)));
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(runs("slow")).toBe(1);
    expect(settler.settled()).toBe(1);
  });

  it("a ledger that fails after settlement does not lose the paid result", async () => {
    const flaky: Ledger = {
      ...createMemoryLedger(),
      markSettled: async () => {
        throw new Error("store down");
      },
    };
    const other = await startApp(makeAgent(), { ...production(), ledger: flaky });
    try {
      const res = await post(other.url, job("echo", { text: "x" }), {
        "payment-signature": await pay(),
      });
      expect(res.status).toBe(200);
      expect(logText(other.logger)).toMatch(
        /payment ledger: could not mark the authorization spent/,
      );
    } finally {
      await other.close();
    }
  });
});

describe("dev mode", () => {
  it("never reserves, verifies or settles, even with a settler configured", async () => {
    const dev = await startApp(makeAgent(), {
      devMode: true,
      payment: production(settler).payment,
      ledger: spy.ledger,
    });
    try {
      const res = await post(dev.url, job("echo", { text: "x" }), {
        "payment-signature": await pay(),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("payment-response")).toBeNull();
      expect(events).toEqual([]);
      expect(spy.log).toEqual([]);
    } finally {
      await dev.close();
    }
  });
});
