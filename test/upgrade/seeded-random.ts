/** A small seeded PRNG (mulberry32), so the random scenarios of the upgrade tests are reproducible. */
export function seededRandom(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { int, chance: (p: number) => next() < p, pick: <T>(xs: readonly T[]) => xs[int(xs.length)]! }; // prettier-ignore
}
export type Random = ReturnType<typeof seededRandom>;
