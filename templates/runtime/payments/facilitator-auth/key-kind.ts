/**
 * What kind of key a CDP API key secret is (the `facilitator-auth` feature): checked with the rest of
 * the configuration, through features.ts, so a bad key refuses the start. Imports nothing heavy.
 * Part of your project: edit freely.
 */
import type { CdpKeyKind } from "../facilitator-credentials.js";

/**
 * What kind of CDP key secret this is, or a message saying what is wrong (never repeating it).
 * cdp-sdk accepts a PKCS#8 PEM EC key or the base64 of 64 bytes (Ed25519 seed + public key), and
 * refuses SEC1 PEM ("BEGIN EC PRIVATE KEY"): so do we, saying how to convert it.
 */
export function cdpKeyKind(secret: string): CdpKeyKind {
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
