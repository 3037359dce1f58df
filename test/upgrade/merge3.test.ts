// merge3 checked against git merge-file (2.39) as an oracle: every case also runs
// `git merge-file -p --diff3` in a temp dir, without the user's git config.
//
// What must equal git depends on the case. When the base→ours and base→theirs diffs are unique
// (all lines distinct, or only lines that are unique in the base are edited and only new lines are
// added), any correct diff3 gives git's result: text and conflict count must be equal byte for byte.
// When lines repeat, several shortest diffs exist and line-diff.ts may pick another one than git
// (it deletes first on ties and moves runs of changed lines down; git has heuristics of its own),
// so those cases check invariants instead (a side that changed nothing yields the other side,
// swapping the sides keeps the conflicts, edits separated by a line that occurs once in each file
// merge cleanly), and the agreement with git is measured. Agreement on ambiguous scenarios:
// - the 120 below: 120 equal to git byte for byte (text and conflict count);
// - the same generator over 100 batches (2,000 ambiguous scenarios): 1,988 equal (99.4%), and
//   1,999 with git's conflict count (99.95%). The differences put a conflict's edge on another
//   copy of a repeated line ("  });", "    body = undefined;"), both valid.
// The 4,000 unambiguous scenarios of those 100 batches all equal git.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { splitLines } from "../../src/upgrade/line-diff.js";
import { merge3, type MergeResult, unresolvedConflicts } from "../../src/upgrade/merge3.js";
import { seededRandom, type Random } from "./seeded-random.js";

const LABELS = { ours: "yours", base: "base", theirs: "theirs" };
const dir = mkdtempSync(join(tmpdir(), "merge3-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function gitMergeFile(base: string, ours: string, theirs: string): MergeResult {
  writeFileSync(join(dir, "base"), base);
  writeFileSync(join(dir, "ours"), ours);
  writeFileSync(join(dir, "theirs"), theirs);
  const args = ["merge-file", "-p", "--diff3", "-L", "yours", "-L", "base", "-L", "theirs"];
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" };
  try {
    const text = execFileSync("git", [...args, "ours", "base", "theirs"], { cwd: dir, env });
    return { text: text.toString("utf8"), conflicts: 0 };
  } catch (error) {
    // The exit status is the number of conflicts (at most 127); 255 is an error.
    const e = error as { status: number | null; stdout: Buffer };
    if (!e.status || e.status > 127) throw error;
    return { text: e.stdout.toString("utf8"), conflicts: e.status };
  }
}

/** Merges with merge3 and git; they must agree (git's count stops at 127). Returns git's result. */
function expectSameAsGit(base: string, ours: string, theirs: string): MergeResult {
  const git = gitMergeFile(base, ours, theirs);
  const { text, conflicts } = merge3(base, ours, theirs, LABELS);
  expect({ text, conflicts: Math.min(conflicts, 127) }).toEqual(git);
  return git;
}

const lines = (...items: string[]) => items.map((l) => `${l}\n`).join("");
const BASE = lines("a", "b", "c", "d", "e", "f", "g");

describe("merge3: hand-written cases, checked against git merge-file", () => {
  const cases: [name: string, base: string, ours: string, theirs: string, conflicts: number][] = [
    ["edits far apart", BASE, lines("A", "b", "c", "d", "e", "f", "g"), lines("a", "b", "c", "d", "e", "f", "G"), 0], // prettier-ignore
    ["edits one unchanged line apart", BASE, lines("a", "B", "c", "d", "e", "f", "g"), lines("a", "b", "c", "D", "e", "f", "g"), 0], // prettier-ignore
    ["edits on adjacent lines conflict (as in git)", BASE, lines("a", "B", "c", "d", "e", "f", "g"), lines("a", "b", "C", "d", "e", "f", "g"), 1], // prettier-ignore
    ["the same edit on both sides", BASE, lines("a", "b", "X", "d", "e", "f", "g"), lines("a", "b", "X", "d", "e", "F", "g"), 0], // prettier-ignore
    ["different edits of the same line", BASE, lines("a", "b", "X", "d", "e", "f", "g"), lines("a", "b", "Y", "d", "e", "f", "g"), 1], // prettier-ignore
    ["overlapping edits of different sizes", BASE, lines("a", "X", "Y", "e", "f", "g"), lines("a", "b", "c", "Z", "f", "g"), 1], // prettier-ignore
    ["two conflicts", BASE, lines("A1", "b", "c", "d", "e", "f", "G1"), lines("A2", "b", "c", "d", "e", "f", "G2"), 2], // prettier-ignore
    ["insertions at the same place", BASE, lines("a", "b", "new1", "c", "d", "e", "f", "g"), lines("a", "b", "new2", "c", "d", "e", "f", "g"), 1], // prettier-ignore
    ["the same insertion on both sides", BASE, lines("a", "b", "new", "c", "d", "e", "f", "g"), lines("a", "b", "new", "c", "d", "e", "f", "g", "h"), 0], // prettier-ignore
    ["insertion next to an edit", BASE, lines("a", "b", "new", "c", "d", "e", "f", "g"), lines("a", "b", "C", "d", "e", "f", "g"), 1], // prettier-ignore
    ["insertions at the start and the end", BASE, lines("start", "a", "b", "c", "d", "e", "f", "g"), lines("a", "b", "c", "d", "e", "f", "g", "end"), 0], // prettier-ignore
    ["both append different lines", BASE, lines("a", "b", "c", "d", "e", "f", "g", "x"), lines("a", "b", "c", "d", "e", "f", "g", "y"), 1], // prettier-ignore
    ["deletion vs edit", BASE, lines("a", "b", "d", "e", "f", "g"), lines("a", "b", "C", "d", "e", "f", "g"), 1], // prettier-ignore
    ["the same deletion on both sides", BASE, lines("a", "b", "d", "e", "f", "g"), lines("a", "b", "d", "e", "f", "G"), 0], // prettier-ignore
    ["deletions far apart", BASE, lines("b", "c", "d", "e", "f", "g"), lines("a", "b", "c", "d", "e", "f"), 0], // prettier-ignore
    ["ours deletes everything, theirs edits", BASE, "", lines("a", "b", "c", "D", "e", "f", "g"), 1], // prettier-ignore
    ["empty base, different new files", "", lines("x", "y"), lines("x", "z"), 1],
    ["empty base, the same new file", "", lines("x", "y"), lines("x", "y"), 0],
    ["empty base and ours", "", "", lines("x"), 0],
    ["all empty", "", "", "", 0],
    ["no trailing newline: edits far apart", "a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "a\nb\nc\nd\nE", 0], // prettier-ignore
    ["no trailing newline: conflict on the last line", "a\nb\nc", "a\nb\nX", "a\nb\nY", 1], // prettier-ignore
    ["no trailing newline on one side only, conflict", "a\nb\nc\n", "a\nb\nX", "a\nb\nY\n", 1], // prettier-ignore
    ["adding the final newline vs an edit far away", "a\nb\nc\nd\ne", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne", 0], // prettier-ignore
    ["removing the final newline vs editing the last line", "a\nb\nc\n", "a\nb\nc", "a\nb\nC\n", 1], // prettier-ignore
    ["one line without newline, both edit", "a", "b", "c", 1],
    ["CRLF: edits far apart", "a\r\nb\r\nc\r\nd\r\ne\r\n", "A\r\nb\r\nc\r\nd\r\ne\r\n", "a\r\nb\r\nc\r\nd\r\nE\r\n", 0], // prettier-ignore
    ["CRLF: conflict uses CRLF markers", "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n", "a\r\nY\r\nc\r\n", 1], // prettier-ignore
    ["CRLF without trailing newline: conflict", "a\r\nb\r\nc", "a\r\nb\r\nX", "a\r\nb\r\nY", 1], // prettier-ignore
    ["CRLF in ours only: the whole file conflicts, LF markers", "a\nb\nc\n", "a\r\nb\r\nc\r\n", "a\nB\nc\n", 1], // prettier-ignore
    ["CRLF: conflict at the start", "a\r\nb\r\nc\r\n", "X\r\nb\r\nc\r\n", "Y\r\nb\r\nc\r\n", 1], // prettier-ignore
    ["CRLF: ours empties the file, theirs edits a line", "a\r\nb\r\nc\r\n", "", "a\r\nb\r\nC\r\n", 1], // prettier-ignore
    ["CRLF: empty base, LF markers", "", "x\r\ny\r\n", "x\r\nz\r\n", 1],
    ["line ending change on one side, edit elsewhere", "a\nb\nc\nd\ne\n", "a\r\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", 0], // prettier-ignore
    ["mixed line endings: markers end like the base line before", "a\r\nb\nc\r\n", "a\r\nX\nc\r\n", "a\r\nY\nc\r\n", 1], // prettier-ignore
  ];

  it.each(cases)("%s", (_name, base, ours, theirs, conflicts) => {
    expect(expectSameAsGit(base, ours, theirs).conflicts).toBe(conflicts);
  });

  it("writes diff3-style markers with the given labels", () => {
    const labels = { ours: "yours", base: "create-agent 0.1.0", theirs: "create-agent 0.2.0" };
    const result = merge3(BASE, lines("a", "b", "X", "d", "e", "f", "g"), lines("a", "b", "Y", "d", "e", "f", "g"), labels); // prettier-ignore
    expect(result).toEqual({
      conflicts: 1,
      text: lines("a", "b", "<<<<<<< yours", "X", "||||||| create-agent 0.1.0", "c", "=======", "Y", ">>>>>>> create-agent 0.2.0", "d", "e", "f", "g"), // prettier-ignore
    });
  });

  it("puts every marker on its own line when a side has no final newline", () => {
    const { text } = merge3("a\nb", "a\nX", "a\nY", LABELS);
    expect(text).toBe("a\n<<<<<<< yours\nX\n||||||| base\nb\n=======\nY\n>>>>>>> theirs\n");
  });
});

describe("merge3: repeated lines (several shortest diffs; not compared with git)", () => {
  it("moves a deletion or insertion in a run of equal lines to its end", () => {
    // Ours deletes one of the first three "}", theirs adds one to the last two: clean either way.
    const base = lines("}", "}", "}", "x", "}", "}");
    const ours = lines("}", "}", "x", "}", "}");
    const theirs = lines("}", "}", "}", "x", "}", "}", "}");
    expect(merge3(base, ours, theirs, LABELS)).toEqual({ text: lines("}", "}", "x", "}", "}", "}"), conflicts: 0 }); // prettier-ignore
  });

  it("keeps deletions in two runs of equal lines apart when a unique line separates them", () => {
    const base = lines("}", "}", "m", "}", "}");
    const ours = lines("}", "m", "}", "}");
    const theirs = lines("}", "}", "m", "}");
    expect(merge3(base, ours, theirs, LABELS)).toEqual({ text: lines("}", "m", "}"), conflicts: 0 }); // prettier-ignore
  });

  it("resolves the same insertion of a repeated line on both sides to one copy", () => {
    const base = lines("f() {", "}", "", "g() {", "}");
    const both = lines("f() {", "}", "", "", "g() {", "}");
    expect(merge3(base, both, both, LABELS)).toEqual({ text: both, conflicts: 0 });
    const theirs = lines("f() {", "}", "", "", "g() {", "  x();", "}");
    expect(merge3(base, both, theirs, LABELS)).toEqual({ text: theirs, conflicts: 0 });
  });
});

// ---- random scenarios -------------------------------------------------------------------------

/**
 * One side's edits of the base lines: `pre[i]` is inserted before base line i (`pre[n]` at the
 * end), `repl[i]` replaces base line i (empty: deleted).
 */
interface Edits {
  pre: string[][];
  repl: (string[] | undefined)[];
}

/**
 * - distinct: every base line is distinct (numbered), all new lines are new;
 * - unique: base lines repeat (the template's "}" and blank lines), but only lines unique in the
 *   base are deleted or replaced and all new lines are new. Each side's shortest diff is still
 *   unique: the lines it shares with the base are exactly the kept ones, in order;
 * - ambiguous: any line may be edited, and new lines are often copies of base lines or "}".
 */
type Kind = "distinct" | "unique" | "ambiguous";

interface Scenario {
  kind: Kind;
  base: string[];
  eol: string;
  finalEol: boolean;
  ours: Edits;
  theirs: Edits;
}

const TEMPLATE = readFileSync(
  join(import.meta.dirname, "../../templates/runtime/jobs/pipeline.ts"),
  "utf8",
).split("\n");
TEMPLATE.pop(); // the empty string after the final newline

const NO_EDITS: Edits = { pre: [], repl: [] };

function render(s: Scenario, edits: Edits): string {
  const out: string[] = [];
  s.base.forEach((line, i) => out.push(...(edits.pre[i] ?? []), ...(edits.repl[i] ?? [line])));
  out.push(...(edits.pre[s.base.length] ?? []));
  return out.join(s.eol) + (s.finalEol && out.length > 0 ? s.eol : "");
}

function randomEdits(rnd: Random, s: Scenario, side: string, from?: Edits): Edits {
  const n = s.base.length;
  const unambiguous = s.kind !== "ambiguous";
  const edits: Edits = { pre: Array.from({ length: n + 1 }, () => []), repl: [] };
  const count = new Map<string, number>();
  for (const line of s.base) count.set(line, (count.get(line) ?? 0) + 1);
  let serial = 0;
  const newLine = () => {
    if (!unambiguous && rnd.chance(0.5)) return rnd.pick(["", "}", "  }", ...s.base]);
    return `${" ".repeat(2 * rnd.int(3))}const ${side}${serial++} = ${rnd.int(1000)};`;
  };
  const newLines = () => Array.from({ length: 1 + rnd.int(rnd.chance(0.8) ? 2 : 5) }, newLine);
  // A side without a final newline: keep the last line and the end alone when unambiguous (adding
  // a line after it, or deleting it, changes the line before).
  const last = unambiguous && !s.finalEol ? n - 1 : n;
  const editable = (i: number) => i < last && (unambiguous ? count.get(s.base[i]!) === 1 : true);

  for (let k = 1 + rnd.int(4); k > 0; k--) {
    const kind = rnd.int(3);
    if (kind === 0 && last >= 0) {
      edits.pre[rnd.int(last + 1)]!.push(...newLines());
    } else if (n > 0) {
      const i = rnd.int(n);
      const span = rnd.chance(0.7) ? 1 : 1 + rnd.int(4);
      for (let j = i; j < Math.min(i + span, n) && editable(j); j++) {
        edits.repl[j] = kind === 1 ? [] : j === i ? newLines() : [];
      }
    }
  }
  // Sometimes make one of the other side's edits too (identical changes).
  if (from && rnd.chance(0.3)) {
    const i = rnd.int(n + 1);
    if (from.pre[i]!.length > 0) edits.pre[i] = [...from.pre[i]!];
    if (from.repl[i]) edits.repl[i] = [...from.repl[i]];
  }
  return edits;
}

function randomScenario(rnd: Random, kind: Kind): Scenario {
  const size = rnd.chance(0.3) ? TEMPLATE.length : rnd.int(TEMPLATE.length + 1);
  const start = rnd.int(TEMPLATE.length - size + 1);
  const base = TEMPLATE.slice(start, start + size);
  const s: Scenario = {
    kind,
    base: kind === "distinct" ? base.map((line, i) => `${line} // ${start + i}`) : base,
    eol: rnd.chance(0.2) ? "\r\n" : "\n",
    finalEol: !rnd.chance(0.2),
    ours: NO_EDITS,
    theirs: NO_EDITS,
  };
  s.ours = randomEdits(rnd, s, "ours");
  s.theirs = randomEdits(rnd, s, "theirs", s.ours);
  return s;
}

/** Base ranges touched by edits: [i, i] for an insertion before line i, [i, i + 1] for line i. */
function touched(edits: Edits): [number, number][] {
  const ranges: [number, number][] = [];
  edits.pre.forEach((lines, i) => lines.length > 0 && ranges.push([i, i]));
  edits.repl.forEach((lines, i) => lines && ranges.push([i, i + 1]));
  return ranges;
}

/**
 * Whether every change of one side is separated from every change of the other by a base line
 * that neither side changes and that is an `anchor` (any line will do when not given).
 */
function separated(s: Scenario, anchor: (i: number) => boolean = () => true): boolean {
  const kept = (i: number) => !s.ours.repl[i] && !s.theirs.repl[i] && anchor(i);
  const between = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (kept(i)) return true;
    return false;
  };
  const theirs = touched(s.theirs);
  return touched(s.ours).every(([s1, e1]) =>
    theirs.every(([s2, e2]) => between(e1, s2) || between(e2, s1)),
  );
}

/** Both sides' edits applied to the base (they must not touch the same lines). */
function bothEdits(s: Scenario): string {
  return render(s, {
    pre: s.ours.pre.map((lines, i) => (lines.length > 0 ? lines : s.theirs.pre[i]!)),
    repl: s.base.map((_, i) => s.ours.repl[i] ?? s.theirs.repl[i]),
  });
}

const count = (lines: string[], line: string) => lines.filter((l) => l === line).length;

describe("merge3: seeded random edits of templates/runtime/jobs/pipeline.ts", () => {
  const KINDS: Kind[] = ["distinct", "unique", "ambiguous"];
  const stats = { cases: 0, clean: 0, conflicted: 0, separated: 0, anchored: 0 };
  const ambiguous = { cases: 0, sameText: 0, sameCount: 0 };

  it.each([1, 2, 3, 4, 5, 6])("batch %i (60 scenarios)", (batch) => {
    const rnd = seededRandom(batch * 7919);
    for (let n = 0; n < 60; n++) {
      const s = randomScenario(rnd, KINDS[n % 3]!);
      const base = render(s, NO_EDITS);
      const ours = render(s, s.ours);
      const theirs = render(s, s.theirs);
      const where = `batch ${batch}, scenario ${n} (${s.kind})`;
      const result = merge3(base, ours, theirs, LABELS);
      const git = gitMergeFile(base, ours, theirs);
      stats.cases++;
      stats[result.conflicts === 0 ? "clean" : "conflicted"]++;

      if (s.kind !== "ambiguous") {
        // Unique diffs: exactly git's merge, conflicts included.
        expect(result, where).toEqual(git);
        // Edits apart from each other merge cleanly and keep both sides' edits.
        if (separated(s)) {
          stats.separated++;
          expect(result, where).toEqual({ text: bothEdits(s), conflicts: 0 });
        }
      } else {
        ambiguous.cases++;
        if (result.text === git.text && result.conflicts === git.conflicts) ambiguous.sameText++;
        if (result.conflicts === git.conflicts) ambiguous.sameCount++;
        // Edits separated by an unchanged line that occurs once in each file merge cleanly. Not
        // true of every shortest diff (one may trade that line for an equal number of repeated
        // ones, e.g. "} } A B" → "A B } }" keeping "} }"), but of line-diff.ts's, which deletes
        // first on such ties: held on all 2,000 ambiguous scenarios of 100 batches.
        const files = [base, ours, theirs].map(splitLines);
        const line = (i: number) => files[0]![i]!;
        const once = (i: number) => files.every((lines) => count(lines, line(i)) === 1);
        if (separated(s, once)) {
          stats.anchored++;
          expect(result, where).toEqual({ text: bothEdits(s), conflicts: 0 });
        }
      }
      // Swapping the sides gives the same chunks, so the same conflicts.
      expect(merge3(base, theirs, ours, LABELS).conflicts, where).toBe(result.conflicts);
      // A side that changed nothing, or both sides alike, give that result.
      expect(merge3(base, ours, base, LABELS), where).toEqual({ text: ours, conflicts: 0 });
      expect(merge3(base, base, theirs, LABELS), where).toEqual({ text: theirs, conflicts: 0 });
      expect(merge3(base, theirs, theirs, LABELS), where).toEqual({ text: theirs, conflicts: 0 });
    }
  });

  it("covered clean merges, conflicts and separated edits; agreement with git measured", () => {
    expect(stats.cases).toBe(360);
    expect(stats.clean).toBeGreaterThan(100);
    expect(stats.conflicted).toBeGreaterThan(50);
    expect(stats.separated).toBeGreaterThan(50);
    expect(stats.anchored).toBeGreaterThan(20);
    // Ambiguous scenarios may legitimately differ from git; see the numbers at the top. This only
    // guards against gross regressions.
    expect(ambiguous.cases).toBe(120);
    expect(ambiguous.sameText).toBeGreaterThanOrEqual(108);
  });
});

describe("merge3: big files", () => {
  // 5,000+ lines with many repeated lines (the template 37 times), edits spread over both sides.
  const big = Array.from({ length: 37 }, (_, k) => [...TEMPLATE, `// part ${k}`]).flat();
  const edit = (seed: number, side: string) => {
    const rnd = seededRandom(seed);
    const out = [...big];
    for (let k = 0; k < 60; k++) {
      const i = rnd.int(out.length);
      if (rnd.chance(0.5)) out.splice(i, 1 + rnd.int(3));
      else out.splice(i, rnd.int(2), `// ${side} ${k}`, ...(rnd.chance(0.5) ? ["}"] : []));
    }
    return `${out.join("\n")}\n`;
  };

  // Large inputs are here for correctness; how fast they merge is not timed in a unit test (the
  // machines are noisy): a quadratic search would hit the test's time limit, nothing finer.
  it("merges 5,000-line files with many repeated lines", () => {
    const base = `${big.join("\n")}\n`;
    const ours = edit(1, "ours");
    const theirs = edit(2, "theirs");
    const result = merge3(base, ours, theirs, LABELS);
    // Every line either side added is there, in or out of a conflict.
    for (const line of splitLines(ours + theirs)) {
      if (line.startsWith("// ours") || line.startsWith("// theirs")) expect(result.text).toContain(line); // prettier-ignore
    }
    expect(merge3(base, theirs, ours, LABELS).conflicts).toBe(result.conflicts);
  });

  it("merges unrelated 5,000-line files made of few distinct lines (the costliest diffs)", () => {
    const rnd = seededRandom(42);
    const noise = (n: number) => Array.from({ length: n }, () => `${rnd.pick(["}", "", "a", "b", "c", "  return;"])}\n`).join(""); // prettier-ignore
    const [base, ours, theirs] = [noise(5000), noise(5000), noise(5000)];
    const result = merge3(base, ours, theirs, LABELS);
    expect(result.conflicts).toBeGreaterThan(0);
  });
});

describe("unresolvedConflicts: files an earlier upgrade left in conflict", () => {
  it("names a file holding a whole conflict or half of one (a resolution stopped halfway), not one merely quoting it", async () => {
    const files: Record<string, string> = {
      whole: "a\n<<<<<<< yours\nx\n=======\ny\n>>>>>>> create-agent 0.2.0\nb\n",
      crlf: "a\r\n<<<<<<< yours\r\nx\r\n=======\r\ny\r\n>>>>>>> create-agent 0.2.0\r\n",
      start: "a\n<<<<<<< yours\nx\n",
      end: "y\n>>>>>>> create-agent 0.2.0\nb\n",
      quoted: "the markers look like `<<<<<<< yours` in a file\n",
      git: "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> main\n",
      clean: "nothing here\n",
    };
    const read = async (path: string) =>
      files[path] === undefined ? undefined : Buffer.from(files[path]!);
    expect(await unresolvedConflicts([...Object.keys(files), "missing"], read)).toEqual([
      "whole",
      "crlf",
      "start",
      "end",
    ]);
  });
});
