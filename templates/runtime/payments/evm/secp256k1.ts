/**
 * Who signed a 32-byte digest: secp256k1 public-key recovery with Ethereum's rules, i.e. what the EVM's
 * ecrecover computes (USDC checks EIP-3009 signatures with it). Paid jobs check one signature each,
 * and this is most of their CPU: it runs about three times faster than a general-purpose library
 * (viem/noble recover with complete formulas and no table for the signature's point R), because it
 * does only this: Jacobian coordinates, secp256k1's endomorphism (GLV) to halve the scalars, and one
 * interleaved wNAF pass over u1·G + u2·R with precomputed tables for G.
 *
 * The point R is found from r by a square root mod P: node:crypto (OpenSSL) makes a recovery about
 * 5-10% faster than the runtime's own square root, but some Node builds' OpenSSL have no secp256k1. So
 * OpenSSL's answer is used only when it checks out (on the curve, with the asked parity: then it is
 * the only answer), and the runtime's square root decides every other case. A self-test on fixed
 * signatures runs when this module loads and picks the path (`recoveryPath`, which the server logs
 * once at start-up).
 *
 * It only ever handles public data (signatures, digests, public keys), never a private key, so it
 * need not run in constant time. The runtime tests compare it with @noble/curves on random,
 * malformed and adversarial signatures. Part of your project: edit freely.
 */
import { ECDH, getCurves } from "node:crypto";
import { keccak256, keccak256Text } from "./keccak.js";

/** The field prime, 2^256 - 2^32 - 977. */
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
/** The group order. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const N = SECP256K1_N;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;
/** The endomorphism: λ·(x, y) = (β·x, y), with β a cube root of 1 mod P and λ one mod N. */
const BETA = 0x7ae96a2b657c07106e64479eac3434e99cf0497512f58995c1396c28719501een;
/** The lattice basis splitting a scalar k into k1 + k2·λ with |k1|, |k2| < 2^128 (as libsecp256k1 and noble). */
const A1 = 0x3086d221a7d46bcde86c90e49284eb15n;
const B1 = -0xe4437ed6010e88286f547fa90abfe4c3n;
const A2 = 0x114ca50f7a8e2f3f657c1108d9d44cfd8n;
const B2 = A1;
const MASK_256 = (1n << 256n) - 1n;
const P_FOLD = 0x1000003d1n; // 2^256 mod P
/** wNAF window widths: G's tables are built once (64 points each), R's per signature (8 points each). */
const G_WINDOW = 8;
const R_WINDOW = 5;

// ---- field arithmetic mod P (inputs in [0, P)) ----

function mul(a: bigint, b: bigint): bigint {
  let t = a * b;
  t = (t & MASK_256) + (t >> 256n) * P_FOLD;
  t = (t & MASK_256) + (t >> 256n) * P_FOLD;
  return t >= P ? t - P : t;
}
const add = (a: bigint, b: bigint): bigint => {
  const t = a + b;
  return t >= P ? t - P : t;
};
const sub = (a: bigint, b: bigint): bigint => {
  const t = a - b;
  return t < 0n ? t + P : t;
};

/** a^-1 mod m (m prime, a not a multiple of m), by the extended Euclidean algorithm. */
function invert(a: bigint, m: bigint): bigint {
  let r0 = m;
  let r1 = a % m;
  let s0 = 0n;
  let s1 = 1n;
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return s0 < 0n ? s0 + m : s0;
}

/** x^(2^n) mod P. */
function squareTimes(x: bigint, n: number): bigint {
  for (let i = 0; i < n; i++) x = mul(x, x);
  return x;
}

/**
 * The y of the curve point with this x and y's parity, or undefined when there is none: y² = x³ + 7
 * has a root iff c = x³ + 7 is a square, and then it is c^((P + 1) / 4), as P ≡ 3 (mod 4). The power
 * is libsecp256k1's addition chain: (P + 1) / 4 is three runs of ones (2, 22 and 223 bits long).
 * No point has y = 0 (the group order is odd), so the other root, P - y, has the other parity.
 */
function liftX(x: bigint, odd: boolean): bigint | undefined {
  const c = add(mul(mul(x, x), x), 7n);
  const x2 = mul(mul(c, c), c);
  const x3 = mul(mul(x2, x2), c);
  const x6 = mul(squareTimes(x3, 3), x3);
  const x9 = mul(squareTimes(x6, 3), x3);
  const x11 = mul(squareTimes(x9, 2), x2);
  const x22 = mul(squareTimes(x11, 11), x11);
  const x44 = mul(squareTimes(x22, 22), x22);
  const x88 = mul(squareTimes(x44, 44), x44);
  const x176 = mul(squareTimes(x88, 88), x88);
  const x220 = mul(squareTimes(x176, 44), x44);
  const x223 = mul(squareTimes(x220, 3), x3);
  const y = squareTimes(mul(squareTimes(mul(squareTimes(x223, 23), x22), 6), x2), 2);
  if (mul(y, y) !== c) return undefined; // c is not a square: no point has this x
  return (y & 1n) === (odd ? 1n : 0n) ? y : P - y;
}

/**
 * liftX by node:crypto (OpenSSL), where it has the curve. Its y is used only when it is on the curve
 * with the asked parity (then it is the one answer); a refusal ("no such point", or no secp256k1 in
 * this OpenSSL) or anything else is decided by liftX, so this returns exactly what liftX does.
 */
function liftXOpenSsl(x: bigint, odd: boolean): bigint | undefined {
  const y = openSslY(x, odd);
  if (y !== undefined && (y & 1n) === (odd ? 1n : 0n) && mul(y, y) === add(mul(mul(x, x), x), 7n))
    return y;
  return liftX(x, odd);
}

/** OpenSSL's y for (x, parity), or undefined when it refuses. */
function openSslY(x: bigint, odd: boolean): bigint | undefined {
  try {
    const compressed = Buffer.from(`0${odd ? 3 : 2}${x.toString(16).padStart(64, "0")}`, "hex");
    const point = ECDH.convertKey(compressed, "secp256k1", undefined, undefined, "uncompressed");
    const y = BigInt(`0x${(point as Buffer).toString("hex", 33, 65)}`);
    return y < P ? y : undefined;
  } catch {
    return undefined;
  }
}

// ---- points: the accumulator (X, Y, Z) in Jacobian coordinates, x = X/Z², y = Y/Z³; Z = 0 is infinity ----

let X = 0n;
let Y = 1n;
let Z = 0n;

type Affine = [x: bigint, y: bigint];
type Jacobian = [x: bigint, y: bigint, z: bigint];

/** acc = 2·acc (dbl-2009-l, a = 0). */
function double(): void {
  if (Z === 0n || Y === 0n) {
    Z = 0n;
    return;
  }
  const a = mul(X, X);
  const b = mul(Y, Y);
  const c = mul(b, b);
  const xb = add(X, b);
  const d2 = sub(sub(mul(xb, xb), a), c);
  const d = add(d2, d2);
  const e = add(add(a, a), a);
  const f = mul(e, e);
  const x3 = sub(f, add(d, d));
  const c2 = add(c, c);
  const c4 = add(c2, c2);
  const y3 = sub(mul(e, sub(d, x3)), add(c4, c4));
  const yz = mul(Y, Z);
  X = x3;
  Y = y3;
  Z = add(yz, yz);
}

/** acc = acc + (x2, y2) (madd-2007-bl); the affine point is never infinity. Tables and sums both use it. */
function addAffine(x2: bigint, y2: bigint): void {
  if (Z === 0n) {
    X = x2;
    Y = y2;
    Z = 1n;
    return;
  }
  const z1z1 = mul(Z, Z);
  const u2 = mul(x2, z1z1);
  const s2 = mul(mul(y2, Z), z1z1);
  const h = sub(u2, X);
  const r2 = sub(s2, Y);
  if (h === 0n) {
    if (r2 === 0n) double();
    else Z = 0n; // acc = -(x2, y2)
    return;
  }
  const hh = mul(h, h);
  const i2 = add(hh, hh);
  const i = add(i2, i2);
  const j = mul(h, i);
  const r = add(r2, r2);
  const v = mul(X, i);
  const x3 = sub(sub(mul(r, r), j), add(v, v));
  const yj = mul(Y, j);
  const y3 = sub(mul(r, sub(v, x3)), add(yj, yj));
  const zh = add(Z, h);
  Z = sub(sub(mul(zh, zh), z1z1), hh);
  X = x3;
  Y = y3;
}

/** Jacobian points to affine with one inversion (Montgomery's trick); none may be infinity. */
function toAffine(points: Jacobian[]): Affine[] {
  const prefix: bigint[] = [];
  let product = 1n;
  for (const [, , z] of points) {
    prefix.push(product);
    product = mul(product, z);
  }
  let inverse = invert(product, P);
  const out: Affine[] = new Array(points.length);
  for (let k = points.length - 1; k >= 0; k--) {
    const [x, y, z] = points[k]!;
    const zi = mul(inverse, prefix[k]!);
    inverse = mul(inverse, z);
    const zi2 = mul(zi, zi);
    out[k] = [mul(x, zi2), mul(mul(y, zi2), zi)];
  }
  return out;
}

/** [1·Q, 3·Q, 5·Q, ..., (2·count - 1)·Q] in affine coordinates. */
function oddMultiples(qx: bigint, qy: bigint, count: number): Affine[] {
  [X, Y, Z] = [qx, qy, 1n];
  double();
  // 2·Q in affine coordinates (one inversion), so each step is a mixed addition.
  const [[tx, ty]] = toAffine([[X, Y, Z]]) as [Affine];
  const points: Jacobian[] = [[qx, qy, 1n]];
  for (let k = 1; k < count; k++) {
    [X, Y, Z] = points[k - 1]!;
    addAffine(tx, ty);
    if (Z === 0n) throw new Error("secp256k1: degenerate table"); // impossible: the group order is prime
    points.push([X, Y, Z]);
  }
  return toAffine(points);
}

/** λ·Q for every Q of a table. */
const endomorphism = (table: Affine[]): Affine[] => table.map(([x, y]) => [mul(x, BETA), y]);

let gTables: { g: Affine[]; lambdaG: Affine[] } | undefined;

// ---- scalars ----

const modN = (a: bigint): bigint => {
  const r = a % N;
  return r < 0n ? r + N : r;
};
/** Round(a / b) for b > 0. */
const divNearest = (a: bigint, b: bigint): bigint => (a + b / 2n) / b;

/** k = ±k1 + ±k2·λ (mod N) with k1, k2 < 2^128: [k1, k1 negated, k2, k2 negated]. */
function split(k: bigint): [bigint, boolean, bigint, boolean] {
  const c1 = divNearest(B2 * k, N);
  const c2 = divNearest(-B1 * k, N);
  let k1 = modN(k - c1 * A1 - c2 * A2);
  let k2 = modN(-c1 * B1 - c2 * B2);
  const half = 1n << 128n;
  const negate1 = k1 > half;
  const negate2 = k2 > half;
  if (negate1) k1 = N - k1;
  if (negate2) k2 = N - k2;
  if (k1 > half || k2 > half) throw new Error("secp256k1: scalar split failed"); // cannot happen
  return [k1, negate1, k2, negate2];
}

/** Width-w NAF digits of k, least significant first: odd digits in (-2^(w-1), 2^(w-1)), zeros elsewhere. */
function wnaf(k: bigint, w: number): Int16Array {
  const digits = new Int16Array(132); // k < 2^129
  const full = 1 << w;
  const mask = BigInt(full - 1);
  let i = 0;
  while (k > 0n) {
    if ((k & 1n) === 1n) {
      let digit = Number(k & mask);
      if (digit >= full / 2) digit -= full;
      digits[i] = digit;
      k -= BigInt(digit);
    }
    // Skip to the next set bit (at least w - 1 zeros follow a digit).
    const low = Number(k & 0xffffffffn);
    const zeros = low === 0 ? 32 : 31 - Math.clz32(low & -low);
    const step = Math.max(1, zeros);
    k >>= BigInt(step);
    i += step;
  }
  return digits;
}

/** acc = u1·G + u2·R, with R = (rx, ry) affine. */
function multiplyAndAdd(u1: bigint, u2: bigint, rx: bigint, ry: bigint): void {
  if (!gTables) {
    const g = oddMultiples(GX, GY, 1 << (G_WINDOW - 2));
    gTables = { g, lambdaG: endomorphism(g) };
  }
  const r = oddMultiples(rx, ry, 1 << (R_WINDOW - 2));
  const [g1, gNeg1, g2, gNeg2] = split(u1);
  const [r1, rNeg1, r2, rNeg2] = split(u2);
  const parts: Array<[Int16Array, Affine[], boolean]> = [
    [wnaf(g1, G_WINDOW), gTables.g, gNeg1],
    [wnaf(g2, G_WINDOW), gTables.lambdaG, gNeg2],
    [wnaf(r1, R_WINDOW), r, rNeg1],
    [wnaf(r2, R_WINDOW), endomorphism(r), rNeg2],
  ];
  [X, Y, Z] = [0n, 1n, 0n];
  for (let i = 131; i >= 0; i--) {
    double();
    for (const [digits, table, negated] of parts) {
      const digit = digits[i]!;
      if (digit === 0) continue;
      const [x, y] = table[(Math.abs(digit) - 1) >> 1]!;
      addAffine(x, digit < 0 !== negated ? P - y : y);
    }
  }
}

const hexToBigInt = (hex: string): bigint => BigInt(`0x${hex}`);

/**
 * The address (0x + 40 lowercase hex digits) whose key signed `digest` (32 bytes) with `signature`
 * (0x + r, s and v, 65 bytes), as ecrecover computes it; undefined where ecrecover finds no signer:
 * v other than 27 or 28, r or s outside [1, N), r not the x of a curve point, or the recovered key at
 * infinity. Like ecrecover it accepts a high s; callers that follow USDC refuse those first.
 * Throws if the self-test failed when this module loaded (this Node cannot check signatures).
 */
export function recoverAddress(digest: Uint8Array, signature: string): `0x${string}` | undefined {
  if (!path.ok)
    throw new Error(
      `secp256k1 self-test failed on this Node (${process.version}), so no payment signature can be checked: ${path.problem}`,
    );
  return recoverWith(path.lift, digest, signature);
}

function recoverWith(
  lift: (x: bigint, odd: boolean) => bigint | undefined,
  digest: Uint8Array,
  signature: string,
): `0x${string}` | undefined {
  if (digest.length !== 32 || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const r = hexToBigInt(signature.slice(2, 66));
  const s = hexToBigInt(signature.slice(66, 130));
  const v = parseInt(signature.slice(130, 132), 16);
  if ((v !== 27 && v !== 28) || r === 0n || r >= N || s === 0n || s >= N) return undefined;

  // R: the point with x = r and y's parity from v (r < N < P, so x = r itself).
  const ry = lift(r, v === 28);
  if (ry === undefined) return undefined; // r³ + 7 has no square root: no such point

  // Q = r⁻¹·(s·R - h·G) = u1·G + u2·R
  const h = modN(hexToBigInt(Buffer.from(digest).toString("hex")));
  const rInverse = invert(r, N);
  const u1 = modN(-h * rInverse);
  const u2 = (s * rInverse) % N;
  multiplyAndAdd(u1, u2, r, ry);
  if (Z === 0n) return undefined;
  const [[qx, qy]] = toAffine([[X, Y, Z]]) as [Affine];

  const key = Buffer.from(
    qx.toString(16).padStart(64, "0") + qy.toString(16).padStart(64, "0"),
    "hex",
  );
  return `0x${Buffer.from(keccak256(key)).toString("hex", 12)}`;
}

// ---- the self-test, run once when this module loads ----

/**
 * Fixed signatures by the well-known test key 0xac09…ff80 (address 0xf39f…2266) over
 * keccak256("create-agent secp256k1 self-test <i>"), one of each parity of R, made with viem; and
 * signatures with no signer: an r that is no curve point's x (5³ + 7 is not a square mod P), and R = G
 * with s = h, where Q = r⁻¹·(h·G - h·G) is the point at infinity.
 */
const SELF_TEST_SIGNER = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
const SELF_TEST: Array<[message: string, signature: string, signer: string | undefined]> = [
  [
    "create-agent secp256k1 self-test 0",
    "0xdd308b54e0b667af33ff8b12f8a75007a103f3f00d2c157a5cf7bf1b515a23a97d3061e4ebfaafbc57fdca36fc1c1276d8ce749039d08522531b3e4be96102681b",
    SELF_TEST_SIGNER,
  ],
  [
    "create-agent secp256k1 self-test 1",
    "0x6273d639fdb37e22081a149468a80a6e4fd50ff04b669742adac48a9c0771b046e5ba9208dae45bb15731592057dd9c06c3d97744ebfde061e2e2eb0678b6daf1c",
    SELF_TEST_SIGNER,
  ],
  [
    "create-agent secp256k1 self-test 0",
    `0x${"5".padStart(64, "0")}7d3061e4ebfaafbc57fdca36fc1c1276d8ce749039d08522531b3e4be96102681b`,
    undefined,
  ],
  [
    "create-agent secp256k1 self-test 0",
    // r = Gx, s = the digest itself (below N), v = 27 (G's y is even)
    `0x${GX.toString(16)}f83d6e76045959b4693ac41d75e66d932bd1d3d7fe73bfd473cdba7b5f748f1b1b`,
    undefined,
  ],
];

/** What a lift gets wrong on the fixed signatures, or undefined when it gets them all right. */
function selfTestFailure(
  lift: (x: bigint, odd: boolean) => bigint | undefined,
): string | undefined {
  for (const [message, signature, signer] of SELF_TEST) {
    let got: string | undefined;
    try {
      got = recoverWith(lift, keccak256Text(message), signature);
    } catch (err) {
      return `recovering ${signature.slice(0, 12)}… threw ${err instanceof Error ? err.message : String(err)}`;
    }
    if (got !== signer)
      return `${signature.slice(0, 12)}… recovered ${got ?? "no signer"}, not ${signer ?? "no signer"}`;
  }
  return undefined;
}

/** OpenSSL decompresses both parities of G itself (x = Gx) to G's y and -G's. */
function openSslServesTheCurve(): boolean {
  try {
    if (!getCurves().includes("secp256k1")) return false;
  } catch {
    return false;
  }
  return openSslY(GX, false) === GY && openSslY(GX, true) === P - GY;
}

type RecoveryPath =
  | { ok: true; name: "openssl" | "pure-js"; lift: (x: bigint, odd: boolean) => bigint | undefined }
  | { ok: false; problem: string };

function choosePath(): RecoveryPath {
  const withOpenSsl = openSslServesTheCurve();
  if (withOpenSsl && selfTestFailure(liftXOpenSsl) === undefined)
    return { ok: true, name: "openssl", lift: liftXOpenSsl };
  const problem = selfTestFailure(liftX);
  return problem === undefined
    ? { ok: true, name: "pure-js", lift: liftX }
    : { ok: false, problem };
}

const path = choosePath();

/**
 * Which point decompression recovers signatures here, for the start-up log: "openssl" (node:crypto's
 * secp256k1, checked), "pure-js" (this Node's OpenSSL has no usable secp256k1: the runtime's own square
 * root, a few percent slower), or "failed" with the self-test's finding (every paid job then gets a 500).
 */
export const recoveryPath: { path: "openssl" | "pure-js" } | { path: "failed"; problem: string } =
  path.ok ? { path: path.name } : { path: "failed", problem: path.problem };
