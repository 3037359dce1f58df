// An HTTP proxy that loses the answer to the first paid request (a payment header, or an MCP tools/call
// carrying _meta["x402/payment"]): the network failure `create-agent call` must survive without paying twice.
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from "node:http";
import { expect } from "vitest";
import { closeServer, listenLocal } from "../runtime/servers.js";

export interface DropProxy {
  url: string;
  /**
   * The PAYMENT-SIGNATURE (or X-PAYMENT) header of every paid request that reached the proxy; for an MCP
   * tools/call, its _meta["x402/payment"] written the same way (base64 of its JSON).
   */
  paid: string[];
  /** Answers the proxy forwarded from the server but never delivered to the caller. */
  dropped: number;
  close(): Promise<void>;
}

/**
 * Forwards everything to `target`. The first request that carries a payment is forwarded too, but the
 * caller's connection is destroyed without any answer:
 *   - "after-answer": once the server has answered it completely (the job ran and was settled);
 *   - "at-once": as soon as the request has been forwarded (the server is still running the job).
 * The server's own request is never cut short: it runs and settles as usual.
 */
export async function dropProxy(
  target: string,
  mode: "after-answer" | "at-once",
): Promise<DropProxy> {
  const upstream = new URL(target);
  const paid: string[] = [];
  let dropped = 0;
  let armed = true;

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        const out = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: upstream.host, connection: "close" },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 502,
                headers: res.headers,
                body: Buffer.concat(chunks),
              }),
            );
            res.on("error", reject);
          },
        );
        out.on("error", reject);
        out.end(body);
      },
    );

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const payment =
      req.headers["payment-signature"] ?? req.headers["x-payment"] ?? mcpPayment(body);
    if (typeof payment === "string") paid.push(payment);
    const drop = typeof payment === "string" && armed;
    if (drop) armed = false;
    const answer = forward(req, body);
    if (drop && mode === "at-once") {
      req.socket.destroy();
      await answer.catch(() => {});
      dropped++;
      return;
    }
    try {
      const { status, headers, body: answerBody } = await answer;
      if (drop) {
        req.socket.destroy();
        dropped++;
        return;
      }
      const { connection, "keep-alive": _k, "transfer-encoding": _t, ...rest } = headers;
      void connection;
      res.writeHead(status, { ...rest, "content-length": String(answerBody.length) });
      res.end(answerBody);
    } catch {
      req.socket.destroy();
    }
  });
  return {
    url: await listenLocal(server),
    paid,
    get dropped() {
      return dropped;
    },
    close: () => closeServer(server),
  };
}

/** The payment of an MCP tools/call body (x402 MCP transport), as a payment header would carry it. */
function mcpPayment(body: Buffer): string | undefined {
  try {
    const message = JSON.parse(body.toString("utf8"));
    const payment =
      message?.method === "tools/call" ? message.params?._meta?.["x402/payment"] : undefined;
    return payment === undefined
      ? undefined
      : Buffer.from(JSON.stringify(payment)).toString("base64");
  } catch {
    return undefined;
  }
}

/**
 * What `create-agent call` must have done when `proxy` lost the answer to its paid request (`mode`): said
 * it sent the identical request again (and, at once, that the server was still running the job), and
 * re-sent that one payment verbatim.
 */
export function expectResentVerbatim(
  proxy: DropProxy,
  stderr: string,
  mode: "after-answer" | "at-once",
): void {
  expect(stderr).toMatch(/sending the identical request again/);
  if (mode === "at-once") expect(stderr).toMatch(/still running this job/);
  expect(proxy.dropped).toBe(1);
  expect(proxy.paid.length).toBeGreaterThanOrEqual(2);
  expect(new Set(proxy.paid).size).toBe(1);
}
