/**
 * Solana addresses and secret keys as a seller writes them (PAY_TO_SOLANA, SOLANA_FEE_PAYER_KEY),
 * checked at configuration time without loading @solana/kit (which loads only when a Solana network
 * settles): base58 (Bitcoin alphabet), 32-byte addresses, 64-byte secret keys (the 32-byte ed25519
 * seed, then the public key) in base58 or as solana-keygen's JSON byte array. The repo tests this
 * file against @solana/kit's codecs. Part of your project: edit freely.
 */
import { createPrivateKey, createPublicKey } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const INDEX = new Map([...ALPHABET].map((c, i) => [c, BigInt(i)]));

/** base58 text to bytes; undefined when a character is not base58. Leading "1"s are zero bytes. */
export function base58Decode(text: string): Uint8Array | undefined {
  let n = 0n;
  for (const c of text) {
    const digit = INDEX.get(c);
    if (digit === undefined) return undefined;
    n = n * 58n + digit;
  }
  const bytes: number[] = [];
  for (; n > 0n; n >>= 8n) bytes.unshift(Number(n & 0xffn));
  const zeros = /^1*/.exec(text)![0].length;
  return new Uint8Array([...new Array<number>(zeros).fill(0), ...bytes]);
}

export function base58Encode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  for (; n > 0n; n /= 58n) out = ALPHABET[Number(n % 58n)] + out;
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return "1".repeat(zeros) + out;
}

/** True for a base58 text of 32 bytes: a Solana address (a public key or a program-derived one). */
export function isSolanaAddress(text: string): boolean {
  return text.length >= 32 && text.length <= 44 && base58Decode(text)?.length === 32;
}

/** PKCS#8 DER prefix of an ed25519 private key: the 32-byte seed follows. */
const ED25519_PKCS8 = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * A 64-byte Solana secret key from base58 or a JSON byte array; `problem` says what is wrong
 * without repeating any of the value.
 */
export function parseSolanaSecretKey(
  text: string,
): { bytes: Uint8Array; address: string } | { problem: string } {
  let bytes: Uint8Array | undefined;
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return { problem: "is not a JSON byte array (as solana-keygen writes) nor base58" };
    }
    const ok =
      Array.isArray(parsed) &&
      parsed.every((b) => typeof b === "number" && Number.isInteger(b) && b >= 0 && b <= 255);
    if (!ok) return { problem: "is a JSON array but not of bytes (whole numbers 0 to 255)" };
    bytes = Uint8Array.from(parsed as number[]);
  } else {
    bytes = base58Decode(trimmed);
    if (bytes === undefined)
      return { problem: "is not base58 nor a JSON byte array (as solana-keygen writes)" };
  }
  if (bytes.length !== 64)
    return {
      problem: `holds ${bytes.length} bytes, not the 64 of a Solana secret key (32-byte seed, then the public key)`,
    };
  const seed = Buffer.from(bytes.subarray(0, 32));
  const derived = createPublicKey(
    createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, seed]), format: "der", type: "pkcs8" }),
  )
    .export({ format: "der", type: "spki" })
    .subarray(-32);
  if (!derived.equals(Buffer.from(bytes.subarray(32))))
    return {
      problem: "is not a Solana key pair: its last 32 bytes are not the public key of its first 32",
    };
  return { bytes, address: base58Encode(bytes.subarray(32)) };
}
