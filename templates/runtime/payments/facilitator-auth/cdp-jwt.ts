/**
 * CDP JWTs (the `facilitator-auth` feature, loaded through features.ts only when CDP_API_KEY_ID and
 * CDP_API_KEY_SECRET are set): Coinbase's facilitator (api.cdp.coinbase.com) wants
 * `Authorization: Bearer <JWT>` on every request, made as Coinbase's @coinbase/cdp-sdk generateJwt
 * makes it: claims sub (key id), iss "cdp", nbf, iat, exp (120 s later) and uris
 * ["<METHOD> <host><path>"]; header alg, kid (key id), typ "JWT", nonce (16 random bytes, hex).
 * ES256 for a PKCS#8 EC key ("BEGIN PRIVATE KEY"), EdDSA for a base64 Ed25519 key (64 bytes).
 * Signed by `jose`, the library cdp-sdk signs with. payments/facilitator-credentials.ts decides
 * which requests carry one. Every value here is a secret: none is ever logged or put in an error.
 * Part of your project: edit freely.
 */
import { randomBytes } from "node:crypto";
import type { CdpSigner } from "../facilitator-credentials.js";
import { cdpKeyKind, pemFromEnv } from "./key-kind.js";

/** cdp-sdk's default JWT lifetime, in seconds. */
export const CDP_JWT_SECONDS = 120;

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

/**
 * The signer of one CDP API key: `prepare()` loads the signing key (at startup: a bad key refuses
 * the start); a key that failed to load is tried again by the next request.
 */
export function createCdpSigner(cdp: { keyId: string; keySecret: string }): CdpSigner {
  let key: ReturnType<typeof cdpSigningKey> | undefined;
  const signingKey = () => {
    key ??= cdpSigningKey(cdp.keySecret);
    key.catch(() => (key = undefined)); // a later request tries again
    return key;
  };
  return {
    async prepare() {
      await signingKey();
    },
    async jwt(method, url) {
      return cdpJwt({ keyId: cdp.keyId, key: await signingKey() }, method, url);
    },
    secrets: keySecrets(cdp.keySecret),
  };
}

/** A CDP key secret and, for a PEM key, its base64 body whole and line by line. */
function keySecrets(secret: string): string[] {
  const pem = pemFromEnv(secret);
  if (!pem.includes("-----BEGIN")) return [secret, secret.trim()];
  const lines = pem.split("\n").filter((l) => !l.startsWith("-----") && l.trim().length >= 16);
  return [secret, pem, lines.join(""), ...lines.map((l) => l.trim())];
}
