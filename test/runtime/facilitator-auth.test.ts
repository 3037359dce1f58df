// Facilitator credentials: CDP JWTs made as Coinbase's @coinbase/cdp-sdk makes them (its generateJwt
// is the oracle: header and claim names, lifetime, algorithm, for an EC and an Ed25519 key), the
// settings that configure them, static headers, and the routing of several facilitators (the first
// whose GET /supported lists a kind gets it). A front that verifies every JWT as Coinbase's API
// would (test/chain/facilitator-proxy.ts) stands before a stand-in facilitator here; the reference
// facilitator on a chain is in test/chain/facilitator-auth.test.ts.
import { generateKeyPairSync } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateJwt } from "@coinbase/cdp-sdk/auth";
import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import * as jose from "jose";
import {
  createAuthenticator,
  parseFacilitatorHeaders,
} from "../../templates/runtime/payments/facilitator-credentials.js";
import { type JoseSubset } from "../../templates/runtime/payments/facilitator-auth/cdp-jwt.js";
import { cdpKeyKind } from "../../templates/runtime/payments/facilitator-auth/key-kind.js";
import { checkFacilitator } from "../../templates/runtime/payments/facilitator.js";
import { createFacilitatorRouter } from "../../templates/runtime/payments/facilitator-router.js";
import {
  ecKey,
  ed25519Key,
  startFacilitatorProxy,
  type FacilitatorProxy,
} from "../chain/facilitator-proxy.js";
import {
  anvilAccount,
  captureLogger,
  job,
  makeAgent,
  offerV2,
  PAY_TO,
  post,
  signAuthorization,
  startApp,
  v1Header,
  v2Header,
} from "./helpers.js";

const KEYS = { "EC (ES256)": ecKey(), "Ed25519 (EdDSA)": ed25519Key() };
const KEY_ID = "organizations/org-1/apiKeys/key-1";

const cdpAuth = (secret: string, everywhere = true) => ({
  headers: [],
  cdp: { keyId: KEY_ID, keySecret: secret, everywhere },
});

/** The Bearer token our authenticator makes for one request. */
async function ourJwt(secret: string, method: string, url: string): Promise<string> {
  const { prepare, authenticate } = createAuthenticator(cdpAuth(secret));
  await prepare();
  const { headers } = await authenticate(method, new URL(url));
  return headers.authorization!.replace(/^Bearer /, "");
}

describe("CDP JWTs, against @coinbase/cdp-sdk's generateJwt", () => {
  it("the runtime's JoseSubset fits the real jose (checked by the compiler; it is loaded untyped)", () => {
    const real: JoseSubset = jose;
    expect(typeof real.SignJWT).toBe("function");
  });

  it.each(Object.entries(KEYS))(
    "%s: same header and claims as cdp-sdk's, bound to method, host and path, 120 s, verifiable with the public key",
    async (_name, key) => {
      const url = "https://api.cdp.coinbase.com/platform/v2/x402/verify";
      const theirs = await generateJwt({
        apiKeyId: KEY_ID,
        apiKeySecret: key.secret,
        requestMethod: "POST",
        requestHost: "api.cdp.coinbase.com",
        requestPath: "/platform/v2/x402/verify",
      });
      const ours = await ourJwt(key.secret, "POST", url);

      const [theirHeader, ourHeader] = [decodeProtectedHeader(theirs), decodeProtectedHeader(ours)];
      expect(Object.keys(ourHeader).sort()).toEqual(Object.keys(theirHeader).sort());
      expect({ ...ourHeader, nonce: "n" }).toEqual({ ...theirHeader, nonce: "n" });
      expect(ourHeader.nonce).toMatch(/^[0-9a-f]{32}$/);
      expect(theirHeader.nonce).toMatch(/^[0-9a-f]{32}$/);
      expect(ourHeader.nonce).not.toBe(theirHeader.nonce);

      const [theirClaims, ourClaims] = [decodeJwt(theirs), decodeJwt(ours)];
      expect(Object.keys(ourClaims).sort()).toEqual(Object.keys(theirClaims).sort());
      const times = (c: typeof ourClaims) => ({
        iat: 0,
        nbf: c.nbf! - c.iat!,
        exp: c.exp! - c.iat!,
      });
      expect(times(ourClaims)).toEqual(times(theirClaims));
      expect(times(ourClaims)).toEqual({ iat: 0, nbf: 0, exp: 120 });
      const { iat: _a, nbf: _b, exp: _c, ...ourRest } = ourClaims;
      const { iat: _d, nbf: _e, exp: _f, ...theirRest } = theirClaims;
      expect(ourRest).toEqual(theirRest);
      expect(ourRest).toEqual({
        sub: KEY_ID,
        iss: "cdp",
        uris: ["POST api.cdp.coinbase.com/platform/v2/x402/verify"],
      });
      expect(Math.abs(ourClaims.iat! - theirClaims.iat!)).toBeLessThan(30);

      for (const token of [ours, theirs])
        await expect(jwtVerify(token, key.publicKey, { issuer: "cdp" })).resolves.toBeTruthy();
      await expect(jwtVerify(ours, ecKey().publicKey)).rejects.toThrow();
    },
  );

  it("a new token for every request; the host carries a port that is not the default, the path no query", async () => {
    const { secret } = KEYS["EC (ES256)"];
    const a = await ourJwt(secret, "GET", "http://127.0.0.1:8402/f/supported?x=1");
    const b = await ourJwt(secret, "GET", "http://127.0.0.1:8402/f/supported?x=1");
    expect(a).not.toBe(b);
    expect(decodeJwt(a).uris).toEqual(["GET 127.0.0.1:8402/f/supported"]);
    expect(decodeJwt(await ourJwt(secret, "POST", "https://h.example:443/settle")).uris).toEqual([
      "POST h.example/settle",
    ]);
    // A PEM key written on one line, its line breaks as \n (as .env files often hold it), signs the same way.
    const oneLine = await ourJwt(secret.replaceAll("\n", "\\n"), "GET", "http://h.example/x");
    await expect(jwtVerify(oneLine, KEYS["EC (ES256)"].publicKey)).resolves.toBeTruthy();
  });

  it("refuses SEC1 EC keys as cdp-sdk does, saying how to convert them; and junk", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const sec1 = privateKey.export({ type: "sec1", format: "pem" }) as string;
    await expect(
      generateJwt({
        apiKeyId: KEY_ID,
        apiKeySecret: sec1,
        requestMethod: "GET",
        requestHost: "h",
        requestPath: "/",
      }),
    ).rejects.toThrow(/Invalid key format/);
    expect(cdpKeyKind(sec1)).toEqual({
      problem: expect.stringMatching(/SEC1.*openssl pkcs8 -topk8/),
    });
    expect(cdpKeyKind("not a key")).toEqual({
      problem: expect.stringMatching(/neither a PEM EC key/),
    });
    expect(cdpKeyKind(KEYS["EC (ES256)"].secret)).toBe("ec");
    expect(cdpKeyKind(KEYS["EC (ES256)"].secret.replaceAll("\n", "\\n"))).toBe("ec");
    expect(cdpKeyKind(KEYS["Ed25519 (EdDSA)"].secret)).toBe("ed25519");

    const problems = configProblems({ CDP_API_KEY_ID: KEY_ID, CDP_API_KEY_SECRET: sec1 });
    expect(problems).toEqual([
      expect.stringMatching(/^CDP_API_KEY_SECRET is an EC key in SEC1 form/),
    ]);
    expect(problems.join()).not.toContain(sec1.split("\n")[1]);
  });
});

const BASE_ENV = {
  PAY_TO,
  X402_NETWORK: "base-sepolia",
  X402_FACILITATOR_URL: "https://f.example.com/x402",
};
function configProblems(env: Record<string, string>): string[] {
  try {
    resolveConfig({ env: { ...BASE_ENV, ...env } });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe("facilitator settings", () => {
  it("X402_FACILITATOR_URL takes several URLs; CDP keys, headers and URL credentials become the route's auth", () => {
    const config = resolveConfig({
      env: {
        ...BASE_ENV,
        X402_FACILITATOR_URL:
          "https://api.cdp.coinbase.com/platform/v2/x402, https://b.example.com/f",
        CDP_API_KEY_ID: KEY_ID,
        CDP_API_KEY_SECRET: KEYS["Ed25519 (EdDSA)"].secret,
        X402_FACILITATOR_HEADERS: "[b.example.com] X-API-Key: k1; [b.example.com] X-Team: t",
      },
    });
    expect(config.devMode).toBe(false);
    if (config.devMode) return;
    expect(config.payment.settlement).toEqual({
      kind: "facilitator",
      url: "https://api.cdp.coinbase.com/platform/v2/x402",
      urls: ["https://api.cdp.coinbase.com/platform/v2/x402", "https://b.example.com/f"],
      auth: {
        cdp: { keyId: KEY_ID, keySecret: KEYS["Ed25519 (EdDSA)"].secret, everywhere: false },
        headers: [
          { host: "b.example.com", name: "X-API-Key", value: "k1" },
          { host: "b.example.com", name: "X-Team", value: "t" },
        ],
      },
    });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      "an empty entry",
      { X402_FACILITATOR_URL: "https://a.example.com,,https://b.example.com" },
      /X402_FACILITATOR_URL entry 2 is empty/,
    ],
    [
      "a URL twice",
      { X402_FACILITATOR_URL: "https://a.example.com/f,https://a.example.com/f/" },
      /lists https:\/\/a\.example\.com\/f twice/,
    ],
    [
      "the CDP facilitator without a key",
      { X402_FACILITATOR_URL: "https://api.cdp.coinbase.com/platform/v2/x402" },
      /wants a CDP API key: set CDP_API_KEY_ID and CDP_API_KEY_SECRET/,
    ],
    [
      "a key id without its secret",
      { CDP_API_KEY_ID: KEY_ID },
      /^CDP_API_KEY_SECRET is not set but CDP_API_KEY_ID is/,
    ],
    [
      "X402_FACILITATOR_AUTH=cdp without a key",
      { X402_FACILITATOR_AUTH: "cdp" },
      /"cdp" but CDP_API_KEY_ID and CDP_API_KEY_SECRET are not set/,
    ],
    [
      "an unknown X402_FACILITATOR_AUTH",
      { X402_FACILITATOR_AUTH: "jwt" },
      /X402_FACILITATOR_AUTH is "jwt": set it to "cdp"/,
    ],
    [
      "a header that is not Name: value",
      { X402_FACILITATOR_HEADERS: "X-API-Key=abc123" },
      /entry 1 is not "Name: value"/,
    ],
    [
      "an unscoped header with two facilitators",
      {
        X402_FACILITATOR_URL: "https://a.example.com,https://b.example.com",
        X402_FACILITATOR_HEADERS: "X-API-Key: abc123",
      },
      /sends X-API-Key without naming a facilitator.*\[a\.example\.com\] X-API-Key/,
    ],
    [
      "a header scoped to another host",
      { X402_FACILITATOR_HEADERS: "[c.example.com] X-API-Key: abc123" },
      /scopes X-API-Key to c\.example\.com, which is not a facilitator/,
    ],
    [
      "URL credentials and a CDP JWT on one facilitator",
      {
        X402_FACILITATOR_URL: "https://u:pass1234@f.example.com",
        X402_FACILITATOR_AUTH: "cdp",
        CDP_API_KEY_ID: KEY_ID,
        CDP_API_KEY_SECRET: KEYS["EC (ES256)"].secret,
      },
      /two Authorization headers \(credentials in X402_FACILITATOR_URL and a CDP JWT\): keep one/,
    ],
  ])("refuses %s, naming what to set and never a secret", (_name, env, message) => {
    const problems = configProblems(env);
    expect(problems).toEqual([expect.stringMatching(message)]);
    for (const secret of ["abc123", "pass1234", KEYS["EC (ES256)"].secret.split("\n")[1]!])
      expect(problems.join("\n")).not.toContain(secret);
  });

  it("parseFacilitatorHeaders: ';' or new lines, optional [host] scope", () => {
    expect(parseFacilitatorHeaders("X-A: 1\n[h.example:8443] X-B:  two words ", "H")).toEqual({
      headers: [
        { name: "X-A", value: "1" },
        { host: "h.example:8443", name: "X-B", value: "two words" },
      ],
      problems: [],
    });
    expect(parseFacilitatorHeaders("Content-Type: x", "H").problems).toEqual([
      "H entry 1 sets Content-Type, which the facilitator client sets itself",
    ]);
  });
});

// ---- against stand-in facilitators behind a CDP-verifying front ----

/** A stand-in facilitator: its /supported lists `kinds`; /verify says valid; it records requests. */
async function standIn(kinds: Array<[number, string]>) {
  const requests: Array<{ method: string; path: string; headers: Record<string, unknown> }> = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ method: req.method ?? "", path, headers: req.headers });
    req.resume();
    const body =
      path === "/supported"
        ? {
            kinds: kinds.map(([x402Version, network]) => ({
              x402Version,
              scheme: "exact",
              network,
            })),
          }
        : { isValid: true, payer: PAY_TO };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, requests, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const payment = (x402Version: number) =>
  ({ x402Version, payload: { x402Version }, requirement: {} }) as never;

describe("createFacilitatorRouter", () => {
  let first: Awaited<ReturnType<typeof standIn>>;
  let second: Awaited<ReturnType<typeof standIn>>;
  let front: FacilitatorProxy;
  const servers: Server[] = [];
  const key = KEYS["EC (ES256)"];

  beforeAll(async () => {
    first = await standIn([
      [2, "eip155:84532"],
      [1, "base-sepolia"],
    ]);
    second = await standIn([
      [2, "eip155:84532"],
      [2, "solana:*"],
      [2, "eip155:8453"],
      [1, "base"],
    ]);
    servers.push(first.server, second.server);
    front = await startFacilitatorProxy(second.url, {
      cdp: { keyId: KEY_ID, publicKey: key.publicKey },
    });
  });
  afterAll(async () => {
    await front.stop();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it("each kind goes to the first facilitator that lists it (exact names before patterns); none: undefined", async () => {
    const router = createFacilitatorRouter([first.url, front.url], cdpAuth(key.secret), 5000);
    expect(router.clientFor(2, "eip155:84532", "exact")).toBeUndefined(); // not initialized
    await router.initialize();
    expect(router.clientFor(2, "eip155:84532", "exact")?.url).toBe(first.url);
    expect(router.clientFor(2, "eip155:8453", "exact")?.url).toBe(front.url);
    expect(router.clientFor(1, { v1Name: "base", caip2: "eip155:8453" }, "exact")?.url).toBe(
      front.url,
    );
    expect(router.clientFor(2, "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "exact")?.url).toBe(
      front.url,
    );
    expect(router.clientFor(2, "eip155:1", "exact")).toBeUndefined();
    expect(router.clientFor(2, "eip155:84532", "upto")).toBeUndefined();
    expect(router.describe()).toMatch(
      new RegExp(
        `^${first.url}/: x402 v2 exact on eip155:84532; x402 v1 exact on base-sepolia; ${front.url}/: .*solana:\\*`,
      ),
    );

    // Every request to the front carried a fresh JWT it verified (X402_FACILITATOR_AUTH=cdp: the
    // first facilitator gets one too).
    first.requests.length = 0;
    const before = front.seen.length;
    await router.clientFor(2, "eip155:8453", "exact")!.verify(payment(2));
    await router.clientFor(2, "eip155:84532", "exact")!.verify(payment(2));
    expect(front.seen.map((s) => [s.method, s.path, s.refused])).toEqual([
      ["GET", "/supported", undefined],
      ["POST", "/verify", undefined],
    ]);
    expect(front.seen.length - before).toBe(1);
    expect(first.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
      ["/verify", expect.stringMatching(/^Bearer ey/)],
    ]);
  });

  it("a v2 facilitator listing a network only for v1 does not get that network's v1 payments", async () => {
    const router = createFacilitatorRouter([first.url, second.url], { headers: [] }, 5000);
    await router.initialize();
    // first lists v1 base-sepolia and v2 eip155:84532: trusted; second lists v1 "base" and v2 8453.
    expect(
      router.clientFor(1, { v1Name: "base-sepolia", caip2: "eip155:84532" }, "exact")?.url,
    ).toBe(first.url);
    const v1Only = await standIn([
      [2, "eip155:84532"],
      [1, "base"],
    ]);
    servers.push(v1Only.server);
    const r2 = createFacilitatorRouter([v1Only.url, second.url], { headers: [] }, 5000);
    await r2.initialize();
    expect(r2.clientFor(1, { v1Name: "base", caip2: "eip155:8453" }, "exact")?.url).toBe(
      second.url,
    );
  });

  it("a wrong key, a replayed and an expired JWT are refused by the front, and no secret or JWT is in the error", async () => {
    const wrong = ecKey();
    const router = createFacilitatorRouter([front.url], cdpAuth(wrong.secret), 5000);
    const err = await router.initialize().then(
      () => new Error("initialize passed"),
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(
      /answered HTTP 401: .*signature verification failed.*refused the credentials sent/,
    );
    const sent = front.seen.at(-1)!.authorization!;
    expect(sent).toMatch(/^Bearer ey/);
    expect(err.message).not.toContain(sent.slice(7, 40));
    expect(err.message).not.toContain(wrong.secret.split("\n")[1]);

    const ok = await fetch(`${front.url}/supported`, {
      headers: {
        authorization: `Bearer ${await ourJwt(key.secret, "GET", `${front.url}/supported`)}`,
      },
    });
    expect(ok.status).toBe(200);
    const token = await ourJwt(key.secret, "GET", `${front.url}/supported`);
    const once = await fetch(`${front.url}/supported`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const twice = await fetch(`${front.url}/supported`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect([once.status, twice.status]).toEqual([200, 401]);
    expect(front.seen.at(-1)!.refused).toBe("replayed");

    const { cdpJwt } = await import("../../templates/runtime/payments/facilitator-auth/cdp-jwt.js");
    const { importPKCS8 } = await import("jose");
    const old = await cdpJwt(
      { keyId: KEY_ID, key: { alg: "ES256", key: await importPKCS8(key.secret, "ES256") } },
      "GET",
      new URL(`${front.url}/supported`),
      Math.floor(Date.now() / 1000) - 300,
    );
    const expired = await fetch(`${front.url}/supported`, {
      headers: { authorization: `Bearer ${old}` },
    });
    expect(expired.status).toBe(401);
    expect(front.seen.at(-1)!.refused).toMatch(/exp/);
    const otherPath = await ourJwt(key.secret, "GET", `${front.url}/verify`);
    const misbound = await fetch(`${front.url}/supported`, {
      headers: { authorization: `Bearer ${otherPath}` },
    });
    expect(misbound.status).toBe(401);
    expect(front.seen.at(-1)!.refused).toMatch(
      /^uris .*is not \["GET 127\.0\.0\.1:\d+\/supported"\]/,
    );
  });

  it("static headers go to the facilitator they are scoped to; URL credentials as Basic auth", async () => {
    const router = createFacilitatorRouter(
      [first.url.replace("http://", "http://alice:s3cret@"), second.url],
      { headers: [{ host: new URL(second.url).host, name: "X-API-Key", value: "k-123" }] },
      5000,
    );
    first.requests.length = 0;
    second.requests.length = 0;
    await router.initialize();
    expect(first.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from("alice:s3cret").toString("base64")}`,
    );
    expect(first.requests[0]!.headers["x-api-key"]).toBeUndefined();
    expect(second.requests[0]!.headers["x-api-key"]).toBe("k-123");
    expect(second.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("startup fails closed when no facilitator lists the network, naming each and what to set", async () => {
    const config = resolveConfig({
      env: {
        PAY_TO,
        X402_NETWORK: "eip155:1",
        X402_ASSET: PAY_TO,
        X402_ASSET_NAME: "USD Coin",
        X402_ASSET_VERSION: "2",
        X402_FACILITATOR_URL: `${first.url},${second.url}`,
      },
    });
    const err = await checkFacilitator(config, captureLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^no x402 facilitator in X402_FACILITATOR_URL settles "exact" payments on ethereum \\(eip155:1\\): the one at ${first.url}/ does not settle .*; the one at ${second.url}/ does not settle .*To fix it, set X402_FACILITATOR_URL to a facilitator that settles "exact" payments on ethereum \\(eip155:1\\) \\(or add one to the list\\)`,
        ),
      ),
    ]);
  });

  it("startup routes each version of the network's payments and logs where", async () => {
    const config = resolveConfig({
      env: { PAY_TO, X402_NETWORK: "base", X402_FACILITATOR_URL: `${first.url},${second.url}` },
    });
    const logger = captureLogger();
    await checkFacilitator(config, logger);
    expect(logger.lines).toEqual([
      {
        level: "info",
        message: 'the x402 facilitator settles "exact" payments on base (eip155:8453)',
        fields: {
          facilitator: `${second.url}/`,
          kinds: [
            `x402 v2 exact on eip155:8453 via ${second.url}/`,
            `x402 v1 exact on base via ${second.url}/`,
          ],
        },
      },
    ]);
  });
});

describe("the payment gate over the router", () => {
  const paid = async (url: string, version: 1 | 2) => {
    const payload = await signAuthorization(anvilAccount());
    const header: Record<string, string> =
      version === 2
        ? { "payment-signature": v2Header(offerV2(), payload) }
        : { "x-payment": v1Header(payload) };
    return post(url, job("echo", { text: "x" }), header);
  };

  it("refuses before the handler runs when no facilitator can be asked, or none lists the payment's kind", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((r) => probe.close(r));
    const v2Only = await standIn([[2, "eip155:84532"]]);
    const agent = makeAgent();
    const payment = { payTo: PAY_TO, network: "base-sepolia" };
    const down = await startApp(agent, {
      devMode: false,
      payment: { ...payment, facilitatorUrl: closed },
    });
    const partial = await startApp(agent, {
      devMode: false,
      payment: { ...payment, facilitatorUrl: v2Only.url },
    });
    try {
      const a = await paid(down.url, 2);
      expect(a.body.error).toMatch(
        /^payment could not be verified, so the job was not run: .*ECONNREFUSED/,
      );
      const b = await paid(partial.url, 1);
      expect(b.body.error).toMatch(
        /no configured x402 facilitator settles x402 v1 "exact" payments on eip155:84532, so the job was not run/,
      );
      expect(agent.calls.echo).toBeUndefined();
      expect(v2Only.requests.map((r) => r.path)).toEqual(["/supported"]);
    } finally {
      await down.close();
      await partial.close();
      v2Only.server.closeAllConnections();
      await new Promise((r) => v2Only.server.close(r));
    }
  });
});
