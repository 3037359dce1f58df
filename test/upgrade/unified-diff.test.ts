// unifiedDiff (and the diffLines under it) checked against git. Every diff must apply with
// `git apply` to give `after` back. Where the shortest diff is unique (distinct lines), it must
// also equal `git diff --no-index` (from its `---` line, indent heuristic off); where lines
// repeat, several shortest diffs exist and ours may pick another one than git's, so only the
// agreement is measured: the 100 ambiguous random cases below all equal git's diff; over 100
// batches of the same generator, 2,473 of 2,500 (98.9%) do (and all 2,500 distinct ones).
// diffLines itself is checked against a brute-force longest common subsequence.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { diffLines, splitLines } from "../../src/upgrade/line-diff.js";
import { unifiedDiff } from "../../src/upgrade/unified-diff.js";
import { seededRandom } from "./seeded-random.js";

const root = mkdtempSync(join(tmpdir(), "unified-diff-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CEILING_DIRECTORIES: tmpdir(), // never find a repository around the temp dir
};
function git(args: string[], cwd: string): { status: number; stdout: string } {
  try {
    return { status: 0, stdout: execFileSync("git", args, { cwd, env, encoding: "utf8" }) };
  } catch (error) {
    const e = error as { status: number | null; stdout: string; stderr: string };
    if (e.status !== 1) throw new Error(`git ${args.join(" ")}: ${e.stderr}`);
    return { status: 1, stdout: e.stdout };
  }
}
function write(path: string, text: string | undefined): void {
  if (text === undefined) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * Applies `patch` with `git apply` to a dir holding `before` at `path`; the file afterwards.
 * Hunks without context need --unidiff-zero (else git takes them to be at the end of the file).
 */
function gitApply(path: string, before: string | undefined, patch: string, context: number) {
  const work = join(root, "apply");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  write(join(work, path), before);
  write(join(root, "change.patch"), patch);
  const zero = context === 0 ? ["--unidiff-zero"] : [];
  git(["apply", "--whitespace=nowarn", ...zero, join(root, "change.patch")], work);
  return existsSync(join(work, path)) ? readFileSync(join(work, path), "utf8") : undefined;
}

/** `git diff --no-index` from its `---` line on, without the function names of hunk headers. */
function gitDiff(path: string, before: string | undefined, after: string | undefined, context = 3) {
  const work = join(root, "diff");
  rmSync(work, { recursive: true, force: true });
  write(join(work, "a", path), before);
  write(join(work, "b", path), after);
  mkdirSync(work, { recursive: true });
  const { stdout } = git(
    [
      ...["-c", "diff.indentHeuristic=false", "diff", "--no-index", "--no-prefix", `-U${context}`],
      before === undefined ? "/dev/null" : `a/${path}`,
      after === undefined ? "/dev/null" : `b/${path}`,
    ],
    work,
  );
  const at = stdout.indexOf("\n--- ");
  return at === -1 ? "" : stdout.slice(at + 1).replace(/^(@@ [^@]* @@).*$/gm, "$1");
}

/** unifiedDiff must apply back to `after`; returns whether it equals git's diff. */
function appliesLikeGit(
  path: string,
  before: string | undefined,
  after: string | undefined,
  context = 3,
): boolean {
  const patch = unifiedDiff(path, before, after, context);
  if (patch !== "") expect(gitApply(path, before, patch, context), path).toBe(after);
  return patch === gitDiff(path, before, after, context);
}

/** unifiedDiff must equal git's diff and apply back to `after` (for unique shortest diffs). */
function expectLikeGit(
  path: string,
  before: string | undefined,
  after: string | undefined,
  context = 3,
) {
  const patch = unifiedDiff(path, before, after, context);
  expect(patch, path).toBe(gitDiff(path, before, after, context));
  if (patch !== "") expect(gitApply(path, before, patch, context), path).toBe(after);
}

const lines = (...items: string[]) => items.map((l) => `${l}\n`).join("");
const TEN = lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");

describe("unifiedDiff: hand-written cases, checked against git diff and git apply", () => {
  const cases: [name: string, before: string | undefined, after: string | undefined][] = [
    ["one line changed", TEN, TEN.replace("5\n", "five\n")],
    ["a change at the start and one at the end (two hunks)", TEN, `0\n${TEN}11\n`],
    ["changes 6 lines apart share a hunk", TEN, TEN.replace("2\n", "two\n").replace("9\n", "nine\n")], // prettier-ignore
    ["changes 7 lines apart do not", `${TEN}11\n`, `${TEN}11\n`.replace("2\n", "two\n").replace("10\n", "ten\n")], // prettier-ignore
    ["lines deleted", TEN, lines("1", "2", "6", "7", "8", "9", "10")],
    ["lines added in the middle", TEN, TEN.replace("5\n", "5\nx\ny\n")],
    ["no newline at the end, before", "a\nb\nc", "a\nb\nc\n"],
    ["no newline at the end, after", "a\nb\nc\n", "a\nb\nc"],
    ["no newline at the end, both", "a\nb\nc", "a\nB\nc"],
    ["no newline at the end, last line changed", "a\nb\nc", "a\nb\nC"],
    ["CRLF lines", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"],
    ["CRLF to LF", "a\r\nb\r\n", "a\nb\n"],
    ["a file created", undefined, lines("x", "y")],
    ["a file created without final newline", undefined, "x\ny"],
    ["a file deleted", lines("x", "y"), undefined],
    ["an empty file filled", "", lines("x")],
    ["a file emptied", lines("x"), ""],
    ["equal", TEN, TEN],
  ];

  it.each(cases)("%s", (_name, before, after) => {
    expectLikeGit("src/app.ts", before, after);
  });

  it("writes a standard unified diff", () => {
    expect(unifiedDiff("src/app.ts", "a\nb\nc", "a\nB\nc")).toBe(
      "--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n", // prettier-ignore
    );
    expect(unifiedDiff("new.ts", undefined, "x\n")).toBe("--- /dev/null\n+++ b/new.ts\n@@ -0,0 +1 @@\n+x\n"); // prettier-ignore
    expect(unifiedDiff("old.ts", "x\n", undefined)).toBe("--- a/old.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"); // prettier-ignore
  });

  it("returns an empty string when nothing changes, and only headers for empty files", () => {
    expect(unifiedDiff("a.ts", "x\n", "x\n")).toBe("");
    expect(unifiedDiff("a.ts", undefined, undefined)).toBe("");
    expect(unifiedDiff("a.ts", undefined, "")).toBe("--- /dev/null\n+++ b/a.ts\n");
    expect(unifiedDiff("a.ts", "", undefined)).toBe("--- a/a.ts\n+++ /dev/null\n");
  });

  it.each([0, 1, 5])("takes the context size (%i), like git diff -U", (context) => {
    const after = TEN.replace("2\n", "two\n").replace("6\n", "").replace("9\n", "9\nx\n");
    expectLikeGit("f.txt", TEN, after, context);
  });
});

describe("unifiedDiff: seeded random edits of templates/runtime/jobs/pipeline.ts", () => {
  const template = readFileSync(
    join(import.meta.dirname, "../../templates/runtime/jobs/pipeline.ts"),
    "utf8",
  ).split("\n");
  template.pop(); // the empty string after the final newline
  const ambiguous = { cases: 0, sameAsGit: 0 };

  it.each([1, 2, 3, 4])("batch %i (50 cases): applies with git apply, like git diff", (batch) => {
    const rnd = seededRandom(batch * 104729);
    for (let n = 0; n < 50; n++) {
      // Even cases: distinct lines (numbered), new lines all new: a unique shortest diff.
      // Odd cases: the template's repeated lines, and new lines often copies of other lines.
      const distinct = n % 2 === 0;
      const size = rnd.int(template.length + 1);
      const start = rnd.int(template.length - size + 1);
      const before = template
        .slice(start, start + size)
        .map((line, i) => (distinct ? `${line} // ${start + i}` : line));
      const after = [...before];
      let serial = 0;
      for (let k = rnd.int(6); k >= 0; k--) {
        const i = rnd.int(after.length + 1);
        const added = Array.from({ length: rnd.int(3) }, () =>
          !distinct && rnd.chance(0.5)
            ? rnd.pick(["", "}", ...template])
            : `// edit ${serial++} ${rnd.int(1000)}`,
        );
        after.splice(i, rnd.int(4), ...added);
      }
      const eol = rnd.chance(0.2) ? "\r\n" : "\n";
      const text = (ls: string[]) => ls.join(eol) + (ls.length > 0 && !rnd.chance(0.2) ? eol : "");
      // Mostly edits, sometimes a created or deleted (non-empty) file.
      const kind = rnd.int(10);
      const args = [
        `dir/file-${n}.ts`,
        kind === 0 && after.length > 0 ? undefined : text(before),
        kind === 1 && before.length > 0 ? undefined : text(after),
        rnd.pick([3, 3, 0, 1, 5]),
      ] as const;
      if (distinct) expectLikeGit(...args);
      else {
        ambiguous.cases++;
        if (appliesLikeGit(...args)) ambiguous.sameAsGit++;
      }
    }
  });

  it("measured the agreement with git on the ambiguous cases", () => {
    expect(ambiguous.cases).toBe(100);
    // Only a guard against gross regressions: see the numbers at the top.
    expect(ambiguous.sameAsGit).toBeGreaterThanOrEqual(90);
  });
});

describe("diffLines: against a brute-force longest common subsequence", () => {
  /** Length of a longest common subsequence, by dynamic programming. */
  function lcsLength(a: readonly string[], b: readonly string[]): number {
    let row = new Array<number>(b.length + 1).fill(0);
    for (let i = a.length - 1; i >= 0; i--) {
      const next = new Array<number>(b.length + 1).fill(0);
      for (let j = b.length - 1; j >= 0; j--) {
        next[j] = a[i] === b[j] ? row[j + 1]! + 1 : Math.max(row[j]!, next[j + 1]!);
      }
      row = next;
    }
    return row[0]!;
  }

  it("finds a shortest edit script, with changes apart and runs moved down", () => {
    const rnd = seededRandom(2024);
    for (let n = 0; n < 3000; n++) {
      const letters = "abcdef".slice(0, 1 + rnd.int(6));
      const word = (length: number) => Array.from({ length }, () => `${rnd.pick([...letters])}\n`);
      const a = word(rnd.int(16));
      const b = rnd.chance(0.5) ? word(rnd.int(16)) : a.filter(() => rnd.chance(0.8));
      if (rnd.chance(0.3)) b.splice(rnd.int(b.length + 1), 0, ...word(rnd.int(4)));
      const changes = diffLines(a, b);
      const where = `${a.join("").replaceAll("\n", "")} → ${b.join("").replaceAll("\n", "")}`;

      const out: string[] = [];
      let i = 0; // next line of a
      let edits = 0;
      changes.forEach((c, k) => {
        expect(c.aCount + c.bCount, where).toBeGreaterThan(0);
        if (k > 0) expect(c.aStart, where).toBeGreaterThan(i); // an unchanged line in between
        out.push(...a.slice(i, c.aStart));
        expect(c.bStart, where).toBe(out.length);
        out.push(...b.slice(c.bStart, c.bStart + c.bCount));
        i = c.aStart + c.aCount;
        edits += c.aCount + c.bCount;
        // A run cannot move down any further.
        const aEnd = c.aStart + c.aCount;
        const bEnd = c.bStart + c.bCount;
        if (c.aCount > 0 && aEnd < a.length) expect(a[c.aStart], where).not.toBe(a[aEnd]);
        if (c.bCount > 0 && bEnd < b.length) expect(b[c.bStart], where).not.toBe(b[bEnd]);
      });
      out.push(...a.slice(i));
      expect(out, where).toEqual(b);
      expect(edits, where).toBe(a.length + b.length - 2 * lcsLength(a, b));
    }
  });

  it("deletes before inserting when shortest scripts tie", () => {
    const lines = (text: string) => [...text].map((c) => `${c}\n`);
    expect(diffLines(lines("}}AB"), lines("AB}}"))).toEqual([
      { aStart: 0, aCount: 2, bStart: 0, bCount: 0 },
      { aStart: 4, aCount: 0, bStart: 2, bCount: 2 },
    ]);
    // Deleting one line of a run deletes the last one.
    expect(diffLines(lines("a}}}b"), lines("a}}b"))).toEqual([
      { aStart: 3, aCount: 1, bStart: 3, bCount: 0 },
    ]);
  });

  it("splits lines keeping their endings", () => {
    expect(splitLines("")).toEqual([]);
    expect(splitLines("a")).toEqual(["a"]);
    expect(splitLines("a\r\nb\n\nc")).toEqual(["a\r\n", "b\n", "\n", "c"]);
  });
});
