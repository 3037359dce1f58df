// The one JSON-RPC helper both route checks use (EVM quantities, Solana objects): what it returns, and
// what its errors say, against a real loopback HTTP server (and a closed port).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcCall } from "../../templates/runtime/payments/json-rpc.js";

type Answer = (res: ServerResponse) => void;
const answers: Record<string, Answer> = {
  getBalance: (res) =>
    res.end(
      JSON.stringify({ jsonrpc: "2.0", id: 1, result: { context: { slot: 1 }, value: 5000 } }),
    ),
  eth_chainId: (res) => res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x14a34" })),
  failing: (res) =>
    res.end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32000, message: "node is\nsyncing" },
      }),
    ),
  broken: (res) => {
    res.statusCode = 502;
    res.end("<html>bad gateway</html>");
  },
  empty: (res) => res.end(JSON.stringify({ jsonrpc: "2.0", id: 1 })),
  slow: () => {},
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const { method } = JSON.parse(body) as { method: string };
      answers[method]!(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // A path that holds a secret, as provider URLs do.
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/secret-api-key`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("rpcCall", () => {
  it("returns the result whatever its shape: a Solana object as well as an EVM quantity", async () => {
    expect(await rpcCall(url, "getBalance", ["payer"], 5000)).toEqual({
      context: { slot: 1 },
      value: 5000,
    });
    expect(await rpcCall(url, "eth_chainId", [], 5000)).toBe("0x14a34");
  });

  it("names the method and what went wrong, on one line, never the URL's path", async () => {
    const failures = await Promise.all(
      ["failing", "broken", "empty", "slow"].map((method) =>
        rpcCall(url, method, [], 300).then(
          () => "resolved",
          (err: Error) => err.message,
        ),
      ),
    );
    expect(failures).toEqual([
      "failing answered an error: node is syncing",
      "broken got HTTP 502, not a JSON-RPC result: <html>bad gateway</html>",
      'empty got HTTP 200, not a JSON-RPC result: {"jsonrpc":"2.0","id":1}',
      "no answer to slow within 0.3 s",
    ]);
    for (const message of failures) expect(message).not.toContain("secret-api-key");
  });

  it("says unreachable, with the system's code, when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(
      rpcCall(`http://127.0.0.1:${port}/key`, "getGenesisHash", [], 2000),
    ).rejects.toThrow("unreachable (ECONNREFUSED)");
  });
});
