/**
 * Line diff used by merge3.ts and unified-diff.ts: a shortest edit script between two lists of
 * lines (fewest lines deleted plus inserted), after Eugene W. Myers, "An O(ND) Difference
 * Algorithm and Its Variations" (Algorithmica, 1986).
 *
 * 1. Every distinct line gets a small integer id, so comparing two lines compares two numbers.
 * 2. The common head and tail are matched right away.
 * 3. What is left is solved with the linear-space variant of the paper (its section 4b): search
 *    forward from the top-left corner of the edit graph and backward from the bottom-right corner
 *    at the same time, one edit per round, until the two frontiers meet on a diagonal; the snake
 *    where they meet lies on a shortest path, so the parts before and after it are solved the same
 *    way, independently. Time O((N+M)·D) for D edits, memory O(N+M).
 * 4. Where several shortest scripts exist, deleting comes before inserting: when the two searches
 *    meet on several diagonals in the same round, the meeting with the most deletions before it
 *    is taken. So "} } A B" → "A B } }" keeps "A B" (deletes the first two lines, adds two at the
 *    end) rather than keeping "} }".
 * 5. Runs of deleted (or inserted) lines are then normalized: a run whose first line equals the
 *    unchanged line just below it can sit one line lower with the same result, and is moved down
 *    for as long as that holds. So deleting one "}" from a block of "}" lines deletes the last
 *    one, whatever path the search happened to take.
 */

/** `aCount` lines of a at `aStart` became `bCount` lines of b at `bStart` (0-based indexes). */
export interface LineChange {
  aStart: number;
  aCount: number;
  bStart: number;
  bCount: number;
}

/** Splits text into lines that keep their terminator ("\n" or "\r\n"); the last may have none. */
export function splitLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  if (lines.at(-1) === "") lines.pop(); // "".split(...) gives [""]
  return lines;
}

/** The changes that turn `a` into `b`, in order, none touching the next one. */
export function diffLines(a: readonly string[], b: readonly string[]): LineChange[] {
  const ids = new Map<string, number>();
  const idOf = (line: string): number => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const search = new EditSearch(Int32Array.from(a, idOf), Int32Array.from(b, idOf));
  search.solve(0, a.length, 0, b.length);
  moveRunsDown(search.a, search.deleted);
  moveRunsDown(search.b, search.inserted);
  return changesOf(search.deleted, search.inserted);
}

/** Marks a diagonal that no path of the current number of edits reaches. */
const UNREACHED_FORWARD = -1;
const UNREACHED_BACKWARD = 0x3fffffff;

/** The part of the edit graph `meet` searches: from (aLo, bLo), n lines of a by m of b; delta = n - m. */
interface Box {
  aLo: number;
  bLo: number;
  n: number;
  m: number;
  delta: number;
}

/**
 * Coordinates follow the paper's edit graph: x counts lines of a, y lines of b, a point (x, y)
 * means "first x lines of a matched against first y lines of b", diagonal k holds the points with
 * x - y = k. A right step deletes a line of a, a down step inserts a line of b, a diagonal step
 * ("snake") keeps a line that is the same in both.
 */
class EditSearch {
  readonly deleted: Uint8Array;
  readonly inserted: Uint8Array;
  /** For each diagonal, the largest x the forward search has reached (index: diagonal + zero). */
  private readonly forward: Int32Array;
  /** For each diagonal, the smallest x the backward search has reached. */
  private readonly backward: Int32Array;
  private readonly zero: number;
  /** The meeting snake found by `meet`: (snakeX0, snakeY0) to (snakeX1, snakeY1), absolute. */
  private snakeX0 = 0;
  private snakeY0 = 0;
  private snakeX1 = 0;
  private snakeY1 = 0;

  constructor(
    readonly a: Int32Array,
    readonly b: Int32Array,
  ) {
    this.deleted = new Uint8Array(a.length);
    this.inserted = new Uint8Array(b.length);
    // Diagonals go from -(len b) - rounds - 1 to len a + rounds + 1, rounds ≤ (len a + len b) / 2.
    this.zero = a.length + b.length + 4;
    this.forward = new Int32Array(2 * this.zero + 1);
    this.backward = new Int32Array(2 * this.zero + 1);
  }

  /** Marks the deleted and inserted lines of a[aLo, aHi) against b[bLo, bHi). */
  solve(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const { a, b } = this;
    // The left part recurses, the right part loops: the depth stays logarithmic in the edits.
    for (;;) {
      while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
        aLo++;
        bLo++;
      }
      while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
        aHi--;
        bHi--;
      }
      if (aLo === aHi || bLo === bHi) {
        this.inserted.fill(1, bLo, bHi);
        this.deleted.fill(1, aLo, aHi);
        return;
      }
      // Both ends differ, so this takes at least two edits and each side of the meeting snake
      // takes fewer than the whole: the recursion ends.
      this.meet(aLo, aHi, bLo, bHi);
      const { snakeX0, snakeY0, snakeX1, snakeY1 } = this;
      this.solve(aLo, snakeX0, bLo, snakeY0);
      aLo = snakeX1;
      bLo = snakeY1;
    }
  }

  /** Finds a snake on a shortest path from (aLo, bLo) to (aHi, bHi) with about half the edits on
   * each side of it. */
  private meet(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const n = aHi - aLo;
    const m = bHi - bLo;
    const box: Box = { aLo, bLo, n, m, delta: n - m };
    for (let d = 0; d <= n + m; d++) {
      if (this.forwardRound(box, d) || this.backwardRound(box, d)) return;
    }
    throw new Error("diffLines: the forward and backward searches did not meet");
  }

  /**
   * Round d of the forward search: diagonals d, d - 2, …, -d, one more edit each (from the most
   * deletions down, so a meeting found first has the most deletions before it). True when it met
   * the backward search (possible only with an odd delta, against backward round d - 1).
   */
  private forwardRound({ aLo, bLo, n, m, delta }: Box, d: number): boolean {
    const { a, b, forward, backward, zero } = this;
    const odd = (delta & 1) === 1;
    forward[zero - d - 1] = UNREACHED_FORWARD;
    forward[zero + d + 1] = UNREACHED_FORWARD;
    for (let k = d; k >= -d; k -= 2) {
      let x = 0;
      if (d > 0) {
        const down = forward[zero + k + 1]!; // from diagonal k + 1, inserting a line of b
        const right = forward[zero + k - 1]! + 1; // from diagonal k - 1, deleting a line of a
        const downOk = down >= 0 && down - k <= m;
        const rightOk = right >= 1 && right <= n;
        // The furthest of the two (the same point when equal).
        if (rightOk && (!downOk || right >= down)) x = right;
        else if (downOk) x = down;
        else {
          forward[zero + k] = UNREACHED_FORWARD;
          continue;
        }
      }
      const x0 = x;
      let y = x - k;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      forward[zero + k] = x;
      if (odd && k >= delta - d + 1 && k <= delta + d - 1 && backward[zero + k]! <= x) {
        this.found(aLo + x0, bLo + x0 - k, aLo + x, bLo + y);
        return true;
      }
    }
    return false;
  }

  /**
   * Round d of the backward search, from the end point: diagonals delta + d, …, delta - d. True
   * when it met the forward search (possible only with an even delta, against forward round d).
   */
  private backwardRound({ aLo, bLo, n, delta }: Box, d: number): boolean {
    const { a, b, forward, backward, zero } = this;
    const odd = (delta & 1) === 1;
    backward[zero + delta - d - 1] = UNREACHED_BACKWARD;
    backward[zero + delta + d + 1] = UNREACHED_BACKWARD;
    for (let c = delta + d; c >= delta - d; c -= 2) {
      let x = n;
      if (d > 0) {
        const up = backward[zero + c - 1]!; // from diagonal c - 1, undoing an insertion
        const left = backward[zero + c + 1]! - 1; // from diagonal c + 1, undoing a deletion
        const upOk = up <= n && up - c >= 0;
        const leftOk = left >= 0 && left < n;
        // The furthest back of the two (the same point when equal).
        if (upOk && (!leftOk || up <= left)) x = up;
        else if (leftOk) x = left;
        else {
          backward[zero + c] = UNREACHED_BACKWARD;
          continue;
        }
      }
      const x1 = x;
      let y = x - c;
      while (x > 0 && y > 0 && a[aLo + x - 1] === b[bLo + y - 1]) {
        x--;
        y--;
      }
      backward[zero + c] = x;
      if (!odd && c >= -d && c <= d && forward[zero + c]! >= x) {
        this.found(aLo + x, bLo + y, aLo + x1, bLo + x1 - c);
        return true;
      }
    }
    return false;
  }

  private found(x0: number, y0: number, x1: number, y1: number): void {
    this.snakeX0 = x0;
    this.snakeY0 = y0;
    this.snakeX1 = x1;
    this.snakeY1 = y1;
  }
}

/**
 * Moves each run of changed lines down while its first line equals the unchanged line right after
 * it (the same lines stay unchanged, only which copy changes). A run that reaches the next run
 * joins it and the whole block moves on.
 */
function moveRunsDown(ids: Int32Array, changed: Uint8Array): void {
  const n = ids.length;
  for (let start = 0; start < n;) {
    if (!changed[start]) {
      start++;
      continue;
    }
    let end = start;
    while (end < n && changed[end]) end++;
    while (end < n && ids[start] === ids[end]) {
      changed[start++] = 0;
      changed[end++] = 1;
      while (end < n && changed[end]) end++;
    }
    start = end;
  }
}

/** Pairs the unchanged lines of both sides in order; what lies between them is a change. */
function changesOf(deleted: Uint8Array, inserted: Uint8Array): LineChange[] {
  const changes: LineChange[] = [];
  let i = 0;
  let j = 0;
  while (i < deleted.length || j < inserted.length) {
    if (i < deleted.length && j < inserted.length && !deleted[i] && !inserted[j]) {
      i++;
      j++;
      continue;
    }
    const aStart = i;
    const bStart = j;
    while (i < deleted.length && deleted[i]) i++;
    while (j < inserted.length && inserted[j]) j++;
    if (i === aStart && j === bStart) throw new Error("diffLines: unpaired unchanged lines");
    changes.push({ aStart, aCount: i - aStart, bStart, bCount: j - bStart });
  }
  return changes;
}
