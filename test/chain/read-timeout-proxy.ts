// A loopback reverse proxy with a read timeout, as nginx's proxy_read_timeout (60 s by default) or a CDN's
// origin timeout: each request goes to the next upstream in turn (round robin), Host kept as the caller
// sent it (proxy_set_header Host $host); an upstream that has not begun its answer within
// `readTimeoutMs` has its request dropped (the upstream connection destroyed, so the server sees its
// caller gone) and the caller gets 504 Gateway Timeout.
import { createServer, request as httpRequest, type Server } from "node:http";
import { closeServer, listenLocal } from "../runtime/servers.js";

export interface ReadTimeoutProxy {
  url: string;
  /** Requests cut by the read timeout (answered 504). */
  timedOut: number;
  close(): Promise<void>;
}

/** Hop-by-hop headers, never forwarded (RFC 9110 7.6.1). */
const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer"]);

const endToEnd = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP.has(name))) as Record<
    string,
    string | string[]
  >;

export async function readTimeoutProxy(
  upstreams: string[],
  readTimeoutMs: number,
): Promise<ReadTimeoutProxy> {
  let next = 0;
  const proxy = { url: "", timedOut: 0, close: () => closeServer(server) };
  const server: Server = createServer((req, res) => {
    const upstream = new URL(upstreams[next++ % upstreams.length]!);
    const out = httpRequest({
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...endToEnd(req.headers), connection: "close" },
    });
    const timer = setTimeout(() => {
      proxy.timedOut++;
      out.destroy(); // the upstream's request is dropped: its connection closes
      res.writeHead(504, { "content-type": "text/plain", connection: "close" });
      res.end("504 Gateway Time-out: the upstream did not answer in time\n");
    }, readTimeoutMs);
    out.on("response", (answer) => {
      clearTimeout(timer);
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
    });
    out.on("error", () => {
      clearTimeout(timer);
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end("502\n");
    });
    req.pipe(out);
  });
  proxy.url = await listenLocal(server);
  return proxy;
}
