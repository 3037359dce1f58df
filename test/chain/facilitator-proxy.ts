// An HTTP front for a facilitator in tests: forwards every request to `upstream` and records it, and
// optionally (1) demands a CDP JWT on every request, verified as Coinbase's API would: signature by
// the key's public half (jose), issuer "cdp", subject and kid = the key id, not expired, not used
// before, and its uris claim = this request's method, host and path; (2) filters the kinds its
// GET /supported lists (a facilitator that settles fewer networks); (3) refuses /settle with 401,
// echoing the Authorization header it got (a hostile or broken facilitator); (4) forwards /settle, then
// holds its answer until `settled` resolves (a settlement done on chain whose sender dies meanwhile).
import { createServer, type IncomingMessage } from "node:http";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type { AddressInfo } from "node:net";
import { decodeProtectedHeader, jwtVerify } from "jose";

/** A CDP API key as the CDP portal gives it: an EC key as PKCS#8 PEM, an Ed25519 key as base64(seed + public). */
export function ecKey(): { secret: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { secret: privateKey.export({ type: "pkcs8", format: "pem" }) as string, publicKey };
}
export function ed25519Key(): { secret: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const bytes = Buffer.concat([Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url")]);
  return { secret: bytes.toString("base64"), publicKey };
}

export interface SeenRequest {
  method: string;
  path: string;
  authorization?: string;
  /** Why the JWT was refused; undefined when it was accepted (or not demanded). */
  refused?: string;
}

export interface FacilitatorProxy {
  url: string;
  seen: SeenRequest[];
  stop(): Promise<void>;
}

export interface ProxyOptions {
  cdp?: { keyId: string; publicKey: KeyObject };
  kinds?: (kind: { x402Version: number; scheme: string; network: string }) => boolean;
  refuseSettle?: boolean;
  /** Called with the facilitator's answer to a /settle, which is sent on once it resolves. */
  settled?: (answer: string) => Promise<void>;
}

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export async function startFacilitatorProxy(
  upstream: string,
  options: ProxyOptions = {},
): Promise<FacilitatorProxy> {
  const seen: SeenRequest[] = [];
  const used = new Set<string>();

  async function checkJwt(req: IncomingMessage, path: string): Promise<string | undefined> {
    const { cdp } = options;
    if (!cdp) return undefined;
    const header = req.headers.authorization ?? "";
    if (!header.startsWith("Bearer ")) return "no Bearer token";
    const token = header.slice("Bearer ".length);
    if (used.has(token)) return "replayed";
    used.add(token);
    try {
      const protectedHeader = decodeProtectedHeader(token);
      if (protectedHeader.kid !== cdp.keyId) return "wrong kid";
      if (protectedHeader.typ !== "JWT") return "wrong typ";
      if (
        typeof protectedHeader.nonce !== "string" ||
        !/^[0-9a-f]{32}$/.test(protectedHeader.nonce)
      )
        return "no nonce";
      const { payload } = await jwtVerify(token, cdp.publicKey, {
        issuer: "cdp",
        subject: cdp.keyId,
        algorithms: ["ES256", "EdDSA"],
        maxTokenAge: 120,
      });
      const expected = `${req.method} ${req.headers.host}${path}`;
      if (!Array.isArray(payload.uris) || payload.uris.length !== 1 || payload.uris[0] !== expected)
        return `uris ${JSON.stringify(payload.uris)} is not ["${expected}"]`;
      return undefined;
    } catch (err) {
      return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    }
  }

  const server = createServer((req, res) => {
    (async () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const body = await readBody(req);
      const refused = await checkJwt(req, path);
      const record: SeenRequest = { method: req.method ?? "", path };
      if (req.headers.authorization !== undefined) record.authorization = req.headers.authorization;
      if (refused !== undefined) record.refused = refused;
      seen.push(record);
      if (refused !== undefined) {
        res.writeHead(401, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: "unauthorized", reason: refused }));
      }
      if (options.refuseSettle && path.endsWith("/settle")) {
        res.writeHead(401, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ error: `token expired: ${req.headers.authorization ?? "none"}` }),
        );
      }
      const answer = await fetch(`${upstream.replace(/\/+$/, "")}${path}`, {
        method: req.method ?? "GET",
        headers: { "content-type": req.headers["content-type"] ?? "application/json" },
        ...(body.length > 0 ? { body } : {}),
      });
      let text = await answer.text();
      if (options.kinds && path.endsWith("/supported") && answer.ok) {
        const supported = JSON.parse(text) as {
          kinds: Parameters<NonNullable<ProxyOptions["kinds"]>>[0][];
        };
        text = JSON.stringify({ ...supported, kinds: supported.kinds.filter(options.kinds) });
      }
      if (options.settled && path.endsWith("/settle")) await options.settled(text);
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(text);
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
