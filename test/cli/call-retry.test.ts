// The caller's retrying fetch against a real HTTP server: a 503 with Retry-After (nothing run or charged)
// is answered by sending the identical request again; a 503 without it, or with a long one, is returned.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { retryingFetch } from "../../src/caller/retry.js";

const servers: Array<{ close: () => void }> = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function serve(answers: Array<{ status: number; headers?: Record<string, string> }>) {
  const seen: Array<{ body: string; signature: string | undefined }> = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ body, signature: req.headers["payment-signature"] as string | undefined });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    res.end(JSON.stringify({ attempt: seen.length }));
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
