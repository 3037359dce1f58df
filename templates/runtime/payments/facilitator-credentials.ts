/**
 * Credentials sent to x402 facilitators, built per request:
 *   - CDP JWTs (CDP_API_KEY_ID + CDP_API_KEY_SECRET) for Coinbase's facilitator (api.cdp.coinbase.com),
 *     or every facilitator with X402_FACILITATOR_AUTH=cdp: made by the `facilitator-auth` feature
 *     (payments/facilitator-auth/, with jose), reached through features.ts and loaded only when a
 *     key is set; a project without it refuses CDP settings (see missingCdpAuth).
 *   - Static headers (X402_FACILITATOR_HEADERS): "Name: value" pairs, e.g. an API key.
 *   - Basic credentials written in the facilitator URL (https://user:pass@host/...).
 * Every value here is a secret: none is ever logged or put in an error (see `secrets`, which
 * facilitator-http.ts takes out of every answer, in whatever encoding, with ops/redact.ts).
 * Part of your project: edit freely.
 */
import { hasFeature, missingFeature, SERVICES } from "../features.js";

/** The host of Coinbase's facilitator: requests to it carry a CDP JWT when CDP credentials are set. */
export const CDP_HOST = "api.cdp.coinbase.com";

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

/** The kind of key a CDP API key secret is, as cdp-sdk tells them apart, or what is wrong with it. */
export type CdpKeyKind = "ec" | "ed25519" | { problem: string };

/** Signs the CDP JWTs of one API key (payments/facilitator-auth/cdp-jwt.ts). */
export interface CdpSigner {
  /** Loads the signing key: rejects when the secret cannot sign. */
  prepare(): Promise<void>;
  /** The JWT for one request. */
  jwt(method: string, url: URL): Promise<string>;
  /** The key secret in every form it could be echoed in (kept out of messages). */
  readonly secrets: readonly string[];
}

/** What the `facilitator-auth` feature gives the core. */
export interface CdpAuthModule {
  createCdpSigner(keys: { keyId: string; keySecret: string }): CdpSigner;
}

const CDP_ASKED = "CDP API-key auth for Coinbase's facilitator";

/**
 * In a project without the `facilitator-auth` feature, the CDP setting that asks for it (or the
 * Coinbase facilitator URL, which needs it), refused with the fix; undefined otherwise.
 */
export function missingCdpAuth(
  cdp: Record<"keyId" | "keySecret" | "mode", string | undefined>,
  urls: readonly string[],
): string | undefined {
  if (hasFeature("facilitator-auth")) return undefined;
  const asked =
    cdp.keyId !== undefined
      ? "CDP_API_KEY_ID is set"
      : cdp.keySecret !== undefined
        ? "CDP_API_KEY_SECRET is set"
        : cdp.mode === "cdp"
          ? 'X402_FACILITATOR_AUTH is "cdp"'
          : undefined;
  if (asked) return missingFeature("facilitator-auth", `${asked} (${CDP_ASKED})`);
  if (urls.some((u) => new URL(u).hostname === CDP_HOST))
    return missingFeature(
      "facilitator-auth",
      `X402_FACILITATOR_URL names ${CDP_HOST} (Coinbase's facilitator wants CDP API-key auth)`,
    );
  return undefined;
}

/** What is wrong with a CDP_API_KEY_SECRET (.env's "\n" read as new lines), by the feature's check. */
export function cdpKeyProblem(secret: string): string | undefined {
  const kind = SERVICES.cdpKeyKind?.(secret.replaceAll("\\n", "\n"));
  return typeof kind === "object" ? kind.problem : undefined;
}

/** The `facilitator-auth` feature; refuses (the start, in prepare()) when this project lacks it. */
async function loadCdpAuth(): Promise<CdpAuthModule> {
  const load = SERVICES.facilitatorAuth;
  // resolveConfig refuses CDP settings without the feature; this is for configurations made by hand.
  if (!load)
    throw new Error(missingFeature("facilitator-auth", `CDP_API_KEY_ID is set (${CDP_ASKED})`));
  return load();
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

/** Whether requests to `url` carry the CDP JWT. */
export function cdpApplies(auth: FacilitatorAuth, url: URL): boolean {
  return auth.cdp !== undefined && (auth.cdp.everywhere || url.hostname === CDP_HOST);
}

/**
 * The authenticator for the configured facilitators: per request, the headers to send and the
 * secrets they hold. `prepare()` loads the CDP signing key (at startup: a bad key, or a project
 * without the `facilitator-auth` feature, refuses the start).
 */
export function createAuthenticator(auth: FacilitatorAuth): {
  prepare(): Promise<void>;
  authenticate: Authenticate;
} {
  const cdp = auth.cdp;
  let signer: Promise<CdpSigner> | undefined;
  const cdpSigner = (keys: { keyId: string; keySecret: string }) =>
    (signer ??= loadCdpAuth().then((m) => m.createCdpSigner(keys)));
  return {
    async prepare() {
      if (cdp) await (await cdpSigner(cdp)).prepare();
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
      if (cdp) {
        const s = await cdpSigner(cdp);
        if (cdpApplies(auth, url)) {
          const jwt = await s.jwt(method, url);
          headers.authorization = `Bearer ${jwt}`;
          secrets.push(jwt, jwt.split(".")[2] ?? jwt);
        }
        secrets.push(...s.secrets);
      }
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
