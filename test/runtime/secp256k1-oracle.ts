// The oracle for the runtime's secp256k1 recovery: @noble/curves (what viem recovers and signs with,
// installed with it), wrapped in ecrecover's rules; and the signatures to compare on: random ones,
// signed ones, and the adversarial cases an audit of the payment path ran.
import { randomBytes } from "node:crypto";
import { secp256k1 } from "@noble/curves/secp256k1";
import { keccak_256 } from "@noble/hashes/sha3";
import { generatePrivateKey, sign } from "viem/accounts";

const CURVE = secp256k1.CURVE;
/** The group order, the field prime and G, from the oracle itself. */
export const N = CURVE.n;
export const P = CURVE.Fp.ORDER;
export const G = { x: CURVE.Gx, y: CURVE.Gy };

export const word = (n: bigint): string => n.toString(16).padStart(64, "0");
export const hex = (bytes: Uint8Array): `0x${string}` => `0x${Buffer.from(bytes).toString("hex")}`;
const toBigInt = (bytes: Uint8Array): bigint => BigInt(hex(bytes));

/**
 * ecrecover by @noble/curves: the signer's address (lowercase), or undefined where ecrecover finds
 * none. v must be 27 or 28 (the precompile's rule, not noble's); r and s in [1, N), R on the curve
 * and Q not at infinity are noble's checks.
 */
export function nobleRecover(digest: Uint8Array, signature: string): string | undefined {
  if (digest.length !== 32 || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const v = parseInt(signature.slice(130), 16);
  if (v !== 27 && v !== 28) return undefined;
  try {
    const point = new secp256k1.Signature(
      BigInt(`0x${signature.slice(2, 66)}`),
      BigInt(`0x${signature.slice(66, 130)}`),
    )
      .addRecoveryBit(v - 27)
      .recoverPublicKey(digest);
    return `0x${Buffer.from(keccak_256(point.toRawBytes(false).subarray(1))).toString("hex", 12)}`;
  } catch {
    return undefined;
  }
}

export interface Case {
  name: string;
  digest: Uint8Array;
  signature: string;
}

const sig = (r: bigint, s: bigint, v: 27 | 28): string => `0x${word(r)}${word(s)}${v.toString(16)}`;
const digestOf = (h: bigint): Uint8Array => Buffer.from(word(h), "hex");

/**
 * The audit's adversarial signatures: R = G and R = -G (r = G's x), Q at infinity (s·R = h·G),
 * s = N - 1, r at and above P (and in [N, P), which ecrecover refuses as r >= N), digests of 0, N
 * and 2^256 - 1; each for both parities where it matters.
 */
export async function adversarialCases(): Promise<Case[]> {
  const cases: Case[] = [];
  const add = (name: string, digest: Uint8Array, signature: string) =>
    cases.push({ name, digest, signature });
  const d = randomBytes(32);
  const h = toBigInt(d) % N;
  const s = toBigInt(randomBytes(32)) % (N - 1n) + 1n;
  // A real signature's r (a curve point's x), for cases that vary s alone.
  const signed = await sign({ hash: hex(d), privateKey: generatePrivateKey(), to: "hex" });
  const realR = BigInt(`0x${signed.slice(2, 66)}`);

  add("R = G", d, sig(G.x, s, 27));
  add("R = -G", d, sig(G.x, s, 28));
  add("R = G, s = 1", d, sig(G.x, 1n, 27));
  add("R = G, Q at infinity (s = h)", d, sig(G.x, h === 0n ? 1n : h, 27));
  add("R = -G, Q at infinity (s = N - h)", d, sig(G.x, h === 0n ? N - 1n : N - h, 28));
  add("R = G, digest 0, Q = s·G/r", digestOf(0n), sig(G.x, s, 27));
  add("R = G, digest 0, s = N - 1", digestOf(0n), sig(G.x, N - 1n, 28));
  for (const v of [27, 28] as const) {
    add(`s = N - 1, v = ${v}`, d, sig(realR, N - 1n, v));
    add(`R = ${v === 27 ? "" : "-"}G, s = N - 1`, d, sig(G.x, N - 1n, v));
    add(`s = (N - 1) / 2, v = ${v}`, d, sig(realR, (N - 1n) / 2n, v));
    add(`s = (N + 1) / 2, v = ${v}`, d, sig(realR, (N + 1n) / 2n, v));
    for (const [label, r] of [
      ["r = P", P],
      ["r = P + 1", P + 1n],
      ["r = 2^256 - 1", 2n ** 256n - 1n],
      ["r = N", N],
      ["r = N + 1", N + 1n],
      ["r = P - 1", P - 1n],
    ] as const)
      add(`${label}, v = ${v}`, d, sig(r, s, v));
    add(`r = 1, v = ${v}`, d, sig(1n, s, v));
    add(`r = N - 1, v = ${v}`, d, sig(N - 1n, s, v));
    add(`s = N, v = ${v}`, d, sig(realR, N, v));
    add(`digest N, v = ${v}`, digestOf(N), sig(realR, s, v));
    add(`digest 2^256 - 1, v = ${v}`, digestOf(2n ** 256n - 1n), sig(realR, s, v));
  }
  return cases;
}

/** Random (r, s, v) nobody signed, a fifth of them with extreme r or s. */
export function forgedCases(count: number): Case[] {
  const extreme = [1n, 2n, 3n, N - 1n, N - 2n, (N - 1n) / 2n, (N + 1n) / 2n, G.x];
  return Array.from({ length: count }, (_, i) => {
    const pick = (): bigint =>
      i % 5 === 0
        ? extreme[Math.floor(Math.random() * extreme.length)]!
        : toBigInt(randomBytes(32)) % N;
    return {
      name: `forged ${i}`,
      digest: randomBytes(32),
      signature: sig(pick(), pick(), i % 2 ? 27 : 28),
    };
  });
}

/** Signatures by random keys over random digests. */
export async function signedCases(count: number): Promise<Case[]> {
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const digest = randomBytes(32);
    const signature = await sign({ hash: hex(digest), privateKey: generatePrivateKey(), to: "hex" });
    cases.push({ name: `signed ${i}`, digest, signature });
  }
  return cases;
}
