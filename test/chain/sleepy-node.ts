// anvil behind a pass-through JSON-RPC proxy that can play a node that has not seen the latest
// block: receipts answered null ("receipts"), or transactions swallowed too ("sends").
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { rpcUrl } from "./context.js";

export interface Node {
  url: string;
  /** "receipts": receipts are answered null; "sends": transactions are swallowed (never reach anvil). */
  mode: "normal" | "receipts" | "sends";
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** anvil behind a proxy that can hide receipts, or swallow transactions. */
export async function sleepyNode(): Promise<Node> {
  const node = { mode: "normal" } as Node;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const calls = [JSON.parse(body)].flat() as Array<{ id: unknown; method: string }>;
      const fake = (c: { id: unknown; method: string }) =>
        (node.mode === "receipts" && c.method === "eth_getTransactionReceipt") ||
        (node.mode === "sends" &&
          (c.method === "eth_sendRawTransaction" || c.method === "eth_getTransactionReceipt"));
      if (calls.every(fake)) {
        const answers = calls.map((c) => ({ jsonrpc: "2.0", id: c.id, result: null }));
        const text = JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]);
        res.writeHead(200, { "content-type": "application/json" }).end(text);
        return;
      }
      const answer = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
    })().catch((err: unknown) => res.writeHead(502).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  node.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return node;
}
