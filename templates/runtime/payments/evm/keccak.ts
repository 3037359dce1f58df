/**
 * Keccak-256 (Ethereum's hash: the original Keccak padding, not SHA3-256's), for EIP-55 address
 * checksums, EIP-712 digests and address derivation. Node's crypto has SHA3-256 but not Keccak-256,
 * and loading viem for it would cost the server ~100 ms of start-up. Checked against viem's keccak256
 * in the runtime tests. Part of your project: edit freely.
 */

/** Bytes absorbed per permutation: (1600 - 2 * 256) / 8. */
const RATE = 136;

/** Rotation of lane x + 5y, in bits. */
const ROTATION = [
  0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
];

/** Round constants, as [low 32 bits, high 32 bits] per round. */
const ROUND_CONSTANTS = new Uint32Array([
  0x00000001, 0x00000000, 0x00008082, 0x00000000, 0x0000808a, 0x80000000, 0x80008000, 0x80000000,
  0x0000808b, 0x00000000, 0x80000001, 0x00000000, 0x80008081, 0x80000000, 0x00008009, 0x80000000,
  0x0000008a, 0x00000000, 0x00000088, 0x00000000, 0x80008009, 0x00000000, 0x8000000a, 0x00000000,
  0x8000808b, 0x00000000, 0x0000008b, 0x80000000, 0x00008089, 0x80000000, 0x00008003, 0x80000000,
  0x00008002, 0x80000000, 0x00000080, 0x80000000, 0x0000800a, 0x00000000, 0x8000000a, 0x80000000,
  0x80008081, 0x80000000, 0x00008080, 0x80000000, 0x80000001, 0x00000000, 0x80008008, 0x80000000,
]);

/** Where π moves lane x + 5y: to (y, 2x + 3y), as an index into the state array. */
const PI_TARGET = Array.from({ length: 25 }, (_, lane) => {
  const x = lane % 5;
  const y = Math.floor(lane / 5);
  return 2 * (y + 5 * ((2 * x + 3 * y) % 5));
});

/** The next lane in a row: (x + 1) % 5, as an offset into the row. */
const NEXT = [2, 0, 4, 0, 6, 0, 8, 0, 0];

// Scratch space: lane i of the state is s[2i] (low 32 bits) and s[2i + 1] (high 32 bits).
const state = new Uint32Array(50);
const b = new Uint32Array(50);
const c = new Uint32Array(10);

/** Keccak-f[1600] on `state`, in place. */
function permute(s: Uint32Array): void {
  for (let round = 0; round < 24; round++) {
    // θ: each lane is XORed with the parities of two neighbouring columns.
    for (let x = 0; x < 5; x++) {
      c[2 * x] = s[2 * x]! ^ s[2 * x + 10]! ^ s[2 * x + 20]! ^ s[2 * x + 30]! ^ s[2 * x + 40]!;
      c[2 * x + 1] =
        s[2 * x + 1]! ^ s[2 * x + 11]! ^ s[2 * x + 21]! ^ s[2 * x + 31]! ^ s[2 * x + 41]!;
    }
    for (let x = 0; x < 5; x++) {
      const left = 2 * ((x + 4) % 5);
      const right = 2 * ((x + 1) % 5);
      // rotate the right column's parity by 1
      const lo = c[left]! ^ ((c[right]! << 1) | (c[right + 1]! >>> 31));
      const hi = c[left + 1]! ^ ((c[right + 1]! << 1) | (c[right]! >>> 31));
      for (let y = 0; y < 50; y += 10) {
        s[y + 2 * x] = s[y + 2 * x]! ^ lo;
        s[y + 2 * x + 1] = s[y + 2 * x + 1]! ^ hi;
      }
    }
    // ρ and π: lane (x, y) rotated into position (y, 2x + 3y).
    for (let lane = 0; lane < 25; lane++) {
      const from = 2 * lane;
      const to = PI_TARGET[lane]!;
      const lo = s[from]!;
      const hi = s[from + 1]!;
      const n = ROTATION[lane]!;
      if (n === 0) {
        b[to] = lo;
        b[to + 1] = hi;
      } else if (n < 32) {
        b[to] = (lo << n) | (hi >>> (32 - n));
        b[to + 1] = (hi << n) | (lo >>> (32 - n));
      } else if (n === 32) {
        b[to] = hi;
        b[to + 1] = lo;
      } else {
        const m = n - 32;
        b[to] = (hi << m) | (lo >>> (32 - m));
        b[to + 1] = (lo << m) | (hi >>> (32 - m));
      }
    }
    // χ: each lane combined with the next two in its row.
    for (let y = 0; y < 50; y += 10) {
      for (let x = 0; x < 10; x += 2) {
        const i = y + x;
        const j = y + NEXT[x]!;
        const k = y + NEXT[NEXT[x]!]!;
        s[i] = b[i]! ^ (~b[j]! & b[k]!);
        s[i + 1] = b[i + 1]! ^ (~b[j + 1]! & b[k + 1]!);
      }
    }
    // ι
    s[0] = s[0]! ^ ROUND_CONSTANTS[2 * round]!;
    s[1] = s[1]! ^ ROUND_CONSTANTS[2 * round + 1]!;
  }
}

/** XORs `length` bytes of `data` from `offset` into the state (little-endian lanes). */
function absorb(data: Uint8Array, offset: number, length: number): void {
  for (let i = 0; i < length; i++) {
    const word = i >> 2;
    state[word] = state[word]! ^ (data[offset + i]! << ((i & 3) * 8));
  }
}

/** Keccak-256 of `data`: 32 bytes. */
export function keccak256(data: Uint8Array): Uint8Array {
  state.fill(0);
  let offset = 0;
  for (; data.length - offset >= RATE; offset += RATE) {
    absorb(data, offset, RATE);
    permute(state);
  }
  const last = new Uint8Array(RATE);
  last.set(data.subarray(offset));
  last[data.length - offset] = 0x01; // Keccak's padding (SHA-3 would put 0x06 here)
  last[RATE - 1] = last[RATE - 1]! | 0x80;
  absorb(last, 0, RATE);
  permute(state);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = (state[i >> 2]! >>> ((i & 3) * 8)) & 0xff;
  return out;
}

/** keccak256 of a string's UTF-8 bytes. */
export const keccak256Text = (text: string): Uint8Array => keccak256(Buffer.from(text, "utf8"));
