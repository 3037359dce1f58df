/**
 * Credentials sent to x402 facilitators, built per request:
 *   - CDP JWTs (CDP_API_KEY_ID + CDP_API_KEY_SECRET): Coinbase's facilitator (api.cdp.coinbase.com)
 *     wants `Authorization: Bearer <JWT>` on every request, made as Coinbase's @coinbase/cdp-sdk
 *     generateJwt makes it: claims sub (key id), iss "cdp", nbf, iat, exp (120 s later) and
 *     uris ["<METHOD> <host><path>"]; header alg, kid (key id), typ "JWT", nonce (16 random bytes, hex).
 *     ES256 for a PKCS#8 EC key ("BEGIN PRIVATE KEY"), EdDSA for a base64 Ed25519 key (64 bytes).
 *     Signed by `jose`, the library cdp-sdk signs with, loaded only when credentials are set.
 *     X402_FACILITATOR_AUTH=cdp sends them to every configured facilitator (a proxy, a test).
 *   - Static headers (X402_FACILITATOR_HEADERS): "Name: value" pairs, e.g. an API key.
 *   - Basic credentials written in the facilitator URL (https://user:pass@host/...).
 * Every value here is a secret: none is ever logged or put in an error (see `secrets`, which
 * facilitator-http.ts takes out of every answer, in whatever encoding, with ops/redact.ts).
 * Part of your project: edit freely.
 */
import { randomBytes } from "node:crypto";

/** The host of Coinbase's facilitator: requests to it carry a CDP JWT when CDP credentials are set. */
export const CDP_HOST = "api.cdp.coinbase.com";
/** cdp-sdk's default JWT lifetime, in seconds. */
export const CDP_JWT_SECONDS = 120;

/** A header for the facilitators on `host` (every configured facilitator when undefined). */
export interface StaticHeader {
  host?: string;
  name: string;
  value: string;
}

export interface FacilitatorAuth {
  /** CDP API key: a JWT per request to api.cdp.coinbase.com, or to every facilitator when `everywhere`. */
  cdp?: { keyId: string; keySecret: string; everywhere: boolean };
  /** X402_FACILITATOR_HEADERS. */
  headers: readonly StaticHeader[];
}

export const NO_AUTH: FacilitatorAuth = { headers: [] };

/** The kind of key a CDP API key secret is, as cdp-sdk tells them apart (or why it is none). */
export type CdpKeyKind = "ec" | "ed25519";

/**
 * What kind of CDP key secret this is, or a message saying what is wrong (never repeating it).
 * cdp-sdk accepts a PKCS#8 PEM EC key or the base64 of 64 bytes (Ed25519 seed + public key), and
 * refuses SEC1 PEM ("BEGIN EC PRIVATE KEY"): so do we, saying how to convert it.
 */
export function cdpKeyKind(secret: string): CdpKeyKind | { problem: string } {
  const s = secret.trim();
  if (s.includes("-----BEGIN EC PRIVATE KEY-----"))
    return {
      problem:
        'is an EC key in SEC1 form ("BEGIN EC PRIVATE KEY"), which Coinbase\'s libraries do not accept: ' +
        "convert it to PKCS#8 (`openssl pkcs8 -topk8 -nocrypt -in key.pem`) and set the result, " +
        'which starts "-----BEGIN PRIVATE KEY-----", or create an Ed25519 key in the CDP portal',
    };
  if (s.includes("-----BEGIN PRIVATE KEY-----")) return "ec";
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(s) && Buffer.from(s, "base64").length === 64) return "ed25519";
  return {
    problem:
      'is neither a PEM EC key ("-----BEGIN PRIVATE KEY-----...") nor a base64 Ed25519 key (64 bytes): ' +
      "set it to the private key of the CDP API key, as the CDP portal gives it",
  };
}

/** A PEM key as .env files often hold it (one line, "\n" written out): real newlines. */
export function pemFromEnv(secret: string): string {
  return secret.includes("-----BEGIN") ? secret.replaceAll("\\n", "\n").trim() : secret.trim();
}

/** RFC 9110 header name (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the client sets itself, or that only the CDP JWT / URL credentials may set. */
const RESERVED = new Set([
  "content-type",
  "content-length",
  "host",
  "connection",
  "transfer-encoding",
]);

/**
 * X402_FACILITATOR_HEADERS: "Name: value" entries separated by ";" or new lines, each optionally
 * scoped to one facilitator by its host in brackets: "[x402.example.com] X-API-Key: abc". Returns
 * the headers, or problems naming the entry by position (never its value).
 */
export function parseFacilitatorHeaders(
  text: string,
  envName: string,
): { headers: StaticHeader[]; problems: string[] } {
  const headers: StaticHeader[] = [];
  const problems: string[] = [];
  const entries = text
    .split(/[;\n]/)
    .map((e) => e.trim())
    .filter((e) => e !== "");
  entries.forEach((entry, i) => {
    const where = `${envName} entry ${i + 1}`;
    const scoped = /^\[([^\]\s]+)\]\s*(.*)$/.exec(entry);
    const host = scoped ? scoped[1]!.toLowerCase() : undefined;
    const pair = scoped ? scoped[2]! : entry;
    const colon = pair.indexOf(":");
    const name = colon > 0 ? pair.slice(0, colon).trim() : "";
    const value = colon > 0 ? pair.slice(colon + 1).trim() : "";
    if (!HEADER_NAME.test(name) || value === "" || /[\r\n\0]/.test(value)) {
      problems.push(
        `${where} is not "Name: value" (optionally "[host] Name: value"): write each header as Name: value, separated by ";" or new lines`,
      );
      return;
    }
    if (RESERVED.has(name.toLowerCase()))
      problems.push(`${where} sets ${name}, which the facilitator client sets itself`);
    else headers.push(host === undefined ? { name, value } : { host, name, value });
  });
  if (entries.length === 0) problems.push(`${envName} is set but holds no "Name: value" entry`);
  return { headers, problems };
}

/** What one request to a facilitator carries, and the secrets in it (to keep out of messages). */
export interface RequestAuth {
  headers: Record<string, string>;
  secrets: string[];
}

export type Authenticate = (method: string, url: URL) => Promise<RequestAuth>;

/**
 * The parts of `jose` used here. jose is imported only when a CDP key is configured, through a
 * specifier the compiler does not follow (its declarations would add about 30 files to every
 * `npm run typecheck`); create-agent's tests check this interface against the real jose.
 */
export type SigningKey = object;
export interface JwtBuilder {
  setProtectedHeader(header: { alg: string; [name: string]: unknown }): JwtBuilder;
  setIssuedAt(seconds: number): JwtBuilder;
  setNotBefore(seconds: number): JwtBuilder;
  setExpirationTime(seconds: number): JwtBuilder;
  sign(key: SigningKey): Promise<string>;
}
export interface JoseSubset {
  importPKCS8(pem: string, alg: string): Promise<SigningKey>;
  importJWK(
    jwk: { kty: string; crv: string; d: string; x: string },
    alg: string,
  ): Promise<SigningKey>;
  SignJWT: new (payload: Record<string, unknown>) => JwtBuilder;
}
const JOSE = "jose";
let josePromise: Promise<JoseSubset> | undefined;
const loadJose = (): Promise<JoseSubset> => (josePromise ??= import(JOSE) as Promise<JoseSubset>);

/** A signing key for the CDP secret: ES256 from PKCS#8, EdDSA from the 64 base64 bytes, as cdp-sdk does. */
async function cdpSigningKey(secret: string): Promise<{ alg: "ES256" | "EdDSA"; key: SigningKey }> {
  const jose = await loadJose();
  const kind = cdpKeyKind(secret);
  if (kind === "ec") {
    try {
      return { alg: "ES256", key: await jose.importPKCS8(pemFromEnv(secret), "ES256") };
    } catch {
      throw new Error(
        "CDP_API_KEY_SECRET is a PEM private key but not an EC P-256 key in PKCS#8 form: set it to the CDP API key's private key",
      );
    }
  }
  if (kind === "ed25519") {
    const bytes = Buffer.from(secret.trim(), "base64");
    const jwk = {
      kty: "OKP",
      crv: "Ed25519",
      d: bytes.subarray(0, 32).toString("base64url"),
      x: bytes.subarray(32).toString("base64url"),
    };
    try {
      return { alg: "EdDSA", key: await jose.importJWK(jwk, "EdDSA") };
    } catch {
      throw new Error("CDP_API_KEY_SECRET is 64 base64 bytes but not an Ed25519 key pair");
    }
  }
  throw new Error(`CDP_API_KEY_SECRET ${kind.problem}`);
}

/** The CDP JWT for one request, as cdp-sdk's generateJwt makes it. */
export async function cdpJwt(
  cdp: { keyId: string; key: { alg: "ES256" | "EdDSA"; key: SigningKey } },
  method: string,
  url: URL,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<string> {
  const jose = await loadJose();
  // randomBytes rather than crypto.getRandomValues, whose type (an Exclude over every typed array) costs
  // tsc hundreds of types in every typecheck of the project.
  const nonce = randomBytes(16).toString("hex");
  // url.host carries the port when it is not the scheme's default, as cdp-sdk's callers pass it.
  return new jose.SignJWT({
    sub: cdp.keyId,
    iss: "cdp",
    uris: [`${method} ${url.host}${url.pathname}`],
  })
    .setProtectedHeader({ alg: cdp.key.alg, kid: cdp.keyId, typ: "JWT", nonce })
    .setIssuedAt(nowSeconds)
    .setNotBefore(nowSeconds)
    .setExpirationTime(nowSeconds + CDP_JWT_SECONDS)
    .sign(cdp.key.key);
}

/** Whether requests to `url` carry the CDP JWT. */
export function cdpApplies(auth: FacilitatorAuth, url: URL): boolean {
  return auth.cdp !== undefined && (auth.cdp.everywhere || url.hostname === CDP_HOST);
}

/**
 * The authenticator for the configured facilitators: per request, the headers to send and the
 * secrets they hold. `prepare()` loads the signing key (at startup: a bad key refuses the start).
 */
export function createAuthenticator(auth: FacilitatorAuth): {
  prepare(): Promise<void>;
  authenticate: Authenticate;
} {
  const cdp = auth.cdp;
  let key: ReturnType<typeof cdpSigningKey> | undefined;
  const signingKey = () => {
    key ??= cdp ? cdpSigningKey(cdp.keySecret) : undefined;
    key?.catch(() => (key = undefined)); // a later request tries again
    return key;
  };
  return {
    async prepare() {
      await signingKey();
    },
    async authenticate(method, url) {
      const headers: Record<string, string> = {};
      const secrets: string[] = [];
      for (const h of auth.headers) {
        if (h.host !== undefined && h.host !== url.host.toLowerCase() && h.host !== url.hostname)
          continue;
        headers[h.name] = h.value;
        secrets.push(...valueSecrets(h.value));
      }
      if (url.username !== "" || url.password !== "") {
        const user = decodeURIComponent(url.username);
        const pass = decodeURIComponent(url.password);
        const basic = Buffer.from(`${user}:${pass}`).toString("base64");
        headers.authorization = `Basic ${basic}`;
        secrets.push(basic, url.username, url.password, user, pass);
      }
      if (cdp && cdpApplies(auth, url)) {
        const jwt = await cdpJwt({ keyId: cdp.keyId, key: await signingKey()! }, method, url);
        headers.authorization = `Bearer ${jwt}`;
        secrets.push(jwt, jwt.split(".")[2] ?? jwt);
      }
      if (cdp) secrets.push(...keySecrets(cdp.keySecret));
      return { headers, secrets: secrets.filter((s) => s.length >= 4) };
    },
  };
}

/**
 * The secrets in a header value: the value, its bare parts ("Bearer <token>": the token) and, for Basic
 * credentials, the decoded "user:pass", user and password.
 */
function valueSecrets(value: string): string[] {
  const parts = value.split(/\s+/).filter((p) => p.length >= 8);
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)$/i.exec(value.trim());
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    parts.push(decoded, decoded.slice(0, colon), decoded.slice(colon + 1));
  }
  return [value, ...parts];
}

/** A CDP key secret and, for a PEM key, its base64 body whole and line by line. */
function keySecrets(secret: string): string[] {
  const pem = pemFromEnv(secret);
  if (!pem.includes("-----BEGIN")) return [secret, secret.trim()];
  const lines = pem.split("\n").filter((l) => !l.startsWith("-----") && l.trim().length >= 16);
  return [secret, pem, lines.join(""), ...lines.map((l) => l.trim())];
}
