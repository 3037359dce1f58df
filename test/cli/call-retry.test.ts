// The caller's retrying fetch against a real HTTP server: a 503 with Retry-After (nothing run or charged)
// is answered by sending the identical request again; a 503 without it, or with a long one, is returned.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { retryingFetch } from "../../src/caller/retry.js";
import { retryingFetch as clientRetryingFetch } from "../../templates/client/retry.js";

const servers: Array<{ close: () => void }> = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function serve(
  answers: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>,
) {
  const seen: Array<{ body: string; signature: string | undefined }> = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ body, signature: req.headers["payment-signature"] as string | undefined });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    res.end(JSON.stringify(answer.body ?? { attempt: seen.length }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/execute`, seen };
}

const paidPost = {
  method: "POST",
  headers: { "payment-signature": "abc" },
  body: '{"job_id":"j1"}',
};

describe("retryingFetch and 503", () => {
  it("re-sends the identical request after Retry-After and returns the answer that follows", async () => {
    const { url, seen } = await serve([
      { status: 503, headers: { "retry-after": "1" } },
      { status: 200 },
    ]);
    const told: string[] = [];
    const res = await retryingFetch({ onRetry: (m) => told.push(m) })(url, paidPost);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ attempt: 2 });
    expect(seen).toEqual([
      { body: '{"job_id":"j1"}', signature: "abc" },
      { body: '{"job_id":"j1"}', signature: "abc" },
    ]);
    expect(told.join("\n")).toMatch(/HTTP 503, nothing run or charged/);
  });

  it("returns a 503 without Retry-After, or with one too long to wait for, as it is", async () => {
    for (const headers of [undefined, { "retry-after": "3600" }]) {
      const { url, seen } = await serve([{ status: 503, ...(headers ? { headers } : {}) }]);
      const res = await retryingFetch()(url, paidPost);
      expect(res.status).toBe(503);
      expect(seen).toHaveLength(1);
    }
  });

  it("gives up after its retry budget and returns the last 503", async () => {
    const { url, seen } = await serve([{ status: 503, headers: { "retry-after": "0" } }]);
    const res = await retryingFetch({ delaysMs: [10, 10] })(url, paidPost);
    expect(res.status).toBe(503);
    expect(seen).toHaveLength(3);
  });
});

describe("retryingFetch and an answer that never comes", () => {
  /** A server that holds the first `stall` requests without answering, then answers 200. */
  async function stalling(stall: number) {
    const seen: Array<string | undefined> = [];
    const server = createServer(async (req, res) => {
      for await (const _chunk of req);
      seen.push(req.headers["payment-signature"] as string | undefined);
      if (seen.length <= stall) return; // never answered (the socket closes with the server)
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ attempt: seen.length }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push({ close: () => (server.closeAllConnections(), server.close()) });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/execute`, seen };
  }

  it("a paid request is sent once more, identical (its payment's answer is replayed by the service)", async () => {
    const { url, seen } = await stalling(1);
    const told: string[] = [];
    const res = await retryingFetch({ attemptTimeoutMs: 300, onRetry: (m) => told.push(m) })(
      url,
      paidPost,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ attempt: 2 });
    expect(seen).toEqual(["abc", "abc"]);
    expect(told.join("\n")).toMatch(
      /no complete answer within 0 s; sending the identical request once more/,
    );
  });

  it("only once; an unpaid request is not re-sent", async () => {
    const twice = await stalling(2);
    await expect(retryingFetch({ attemptTimeoutMs: 300 })(twice.url, paidPost)).rejects.toThrow(
      /no complete answer .*a payment authorization was signed/,
    );
    expect(twice.seen).toHaveLength(2);
    const unpaid = await stalling(1);
    await expect(
      retryingFetch({ attemptTimeoutMs: 300 })(unpaid.url, { method: "POST", body: "{}" }),
    ).rejects.toThrow(/no complete answer/);
    expect(unpaid.seen).toHaveLength(1);
  });
});

// The runtime holds a job's result while its payment's settlement is unconfirmed (402, no offer, its
// error saying so); the identical request gets it once the settlement is confirmed. Both payers wait
// that out by re-sending the same payment: they never sign again.
describe("a 402 saying the settlement is unconfirmed", () => {
  const held = {
    status: 402,
    body: {
      status: "failed",
      error_type: "payment",
      error:
        "payment settlement is unconfirmed, so the result is withheld for now: the facilitator did not answer within 30 s; the payment may or may not have been settled. This authorization will not be used again.",
    },
  };
  const still = {
    status: 402,
    body: {
      ...held.body,
      error:
        "payment settlement is still unconfirmed (being checked), so the result is withheld for now",
    },
  };

  it("create-agent call re-sends the identical request until the answer comes", async () => {
    const { url, seen } = await serve([held, still, { status: 200 }]);
    const told: string[] = [];
    const send = retryingFetch({
      inUseUntilMs: Date.now() + 30_000,
      onRetry: (m) => told.push(m),
      sleep: async () => {},
    });
    const res = await send(url, paidPost);
    expect([res.status, await res.json()]).toEqual([200, { attempt: 3 }]);
    expect(new Set(seen.map((r) => `${r.signature} ${r.body}`))).toEqual(
      new Set(['abc {"job_id":"j1"}']),
    );
    expect(told.join("\n")).toMatch(
      /holds this job's result until its payment's settlement is confirmed/,
    );
  });

  it("the generated client does the same", async () => {
    const { url, seen } = await serve([held, still, { status: 200 }]);
    const send = clientRetryingFetch(fetch, {
      retries: 3,
      waitUntilMs: Date.now() + 30_000,
      capability: "echo",
      jobId: "j1",
    });
    const res = await send(url, paidPost);
    expect([res.status, await res.json()]).toEqual([200, { attempt: 3 }]);
    expect(seen.map((r) => r.signature)).toEqual(["abc", "abc", "abc"]);
  });

  it("an unpaid request, or a 402 saying nothing was charged, is returned as it is", async () => {
    const failed = {
      status: 402,
      body: {
        ...held.body,
        error:
          "payment settlement failed (reverted), so the result is withheld: nothing was charged; sign a new payment to run the job again",
      },
    };
    for (const [answer, init] of [
      [held, { method: "POST", body: "{}" }],
      [failed, paidPost],
    ] as const) {
      const { url, seen } = await serve([answer, { status: 200 }]);
      const res = await retryingFetch({ inUseUntilMs: Date.now() + 30_000 })(url, init);
      expect(res.status).toBe(402);
      expect(seen).toHaveLength(1);
    }
  });
});

// Retry-After on a 402 payment error is how the runtime marks both waits ("in use", "unconfirmed"):
// the identical request gets this job's answer later. Both payers act on it whatever the words, so an
// owner who rewords those messages keeps them working; waiting re-sends the same payment, never more.
describe("a 402 payment error with Retry-After", () => {
  const asked = {
    status: 402,
    headers: { "retry-after": "0" },
    body: { status: "failed", error_type: "payment", error: "Zahlung noch offen" },
  };

  /** The generated client's paid request to a server giving `first`, then 200. */
  async function clientPaying(first: Parameters<typeof serve>[0][number]) {
    const { url, seen } = await serve([first, { status: 200 }]);
    const policy = {
      retries: 3,
      waitUntilMs: Date.now() + 30_000,
      capability: "echo",
      jobId: "j1",
    };
    const res = await clientRetryingFetch(fetch, policy)(url, paidPost);
    return { status: res.status, seen };
  }

  it("both payers re-send the identical request, whatever its words", async () => {
    const cli = await serve([asked, { status: 200 }]);
    const told: string[] = [];
    const send = retryingFetch({
      inUseUntilMs: Date.now() + 30_000,
      onRetry: (m) => told.push(m),
      sleep: async () => {},
    });
    expect((await send(cli.url, paidPost)).status).toBe(200);
    expect(cli.seen.map((r) => r.signature)).toEqual(["abc", "abc"]);
    expect(told.join("\n")).toMatch(/identical request again later \(HTTP 402 with Retry-After\)/);

    const client = await clientPaying(asked);
    expect(client.status).toBe(200);
    expect(client.seen.map((r) => r.signature)).toEqual(["abc", "abc"]);
  });

  it("without Retry-After, or on a 402 that is no payment error (an offer), it is the answer", async () => {
    const { headers: _, ...plain } = asked;
    const offer = { ...asked, body: { x402Version: 2, accepts: [] } };
    for (const answer of [plain, offer]) {
      const cli = await serve([answer, { status: 200 }]);
      const res = await retryingFetch({ inUseUntilMs: Date.now() + 30_000 })(cli.url, paidPost);
      expect(res.status).toBe(402);
      expect(cli.seen).toHaveLength(1);
      const client = await clientPaying(answer);
      expect(client.status).toBe(402);
      expect(client.seen).toHaveLength(1);
    }
  });
});
