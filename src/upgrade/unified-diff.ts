/**
 * A unified diff of one file, as `git diff` prints it (without git's extra header lines) and as
 * `git apply` / `patch -p1` read it:
 *
 *   --- a/src/app.ts        (--- /dev/null for a created file)
 *   +++ b/src/app.ts        (+++ /dev/null for a deleted file)
 *   @@ -12,7 +12,8 @@
 *    context
 *   -removed
 *   +added
 *   \ No newline at end of file     (after a last line without a newline)
 *
 * Lines are compared with their line endings, so a CRLF↔LF change shows as a change.
 */
import { diffLines, type LineChange, splitLines } from "./line-diff.js";

/**
 * `before` undefined means the file is created, `after` undefined that it is deleted. Returns ""
 * when nothing changes. A file created or deleted empty has no hunk: only the two header lines are
 * returned (patch tools cannot apply that; the caller creates or deletes the file itself).
 */
export function unifiedDiff(
  path: string,
  before: string | undefined,
  after: string | undefined,
  context = 3,
): string {
  if (before === after) return "";
  const a = splitLines(before ?? "");
  const b = splitLines(after ?? "");
  let out = `--- ${before === undefined ? "/dev/null" : `a/${path}`}\n`;
  out += `+++ ${after === undefined ? "/dev/null" : `b/${path}`}\n`;
  const line = (prefix: string, text: string) =>
    prefix + text + (text.endsWith("\n") ? "" : "\n\\ No newline at end of file\n");

  for (const hunk of hunks(diffLines(a, b), context)) {
    const first = hunk[0]!;
    const last = hunk.at(-1)!;
    const s1 = Math.max(first.aStart - context, 0);
    const s2 = Math.max(first.bStart - context, 0);
    const e1 = Math.min(last.aStart + last.aCount + context, a.length);
    const e2 = Math.min(last.bStart + last.bCount + context, b.length);
    out += `@@ -${range(s1, e1 - s1)} +${range(s2, e2 - s2)} @@\n`;
    let i = s1; // next line of `a` to print
    for (const c of hunk) {
      for (; i < c.aStart; i++) out += line(" ", a[i]!);
      for (let k = 0; k < c.aCount; k++) out += line("-", a[c.aStart + k]!);
      for (let k = 0; k < c.bCount; k++) out += line("+", b[c.bStart + k]!);
      i = c.aStart + c.aCount;
    }
    for (; i < e1; i++) out += line(" ", a[i]!);
  }
  return out;
}

/** Groups changes into hunks: changes at most 2 × context lines apart share one (their context
 * lines would overlap or touch). */
function hunks(changes: LineChange[], context: number): LineChange[][] {
  const groups: LineChange[][] = [];
  for (const c of changes) {
    const group = groups.at(-1);
    const prev = group?.at(-1);
    if (group && prev && c.aStart - (prev.aStart + prev.aCount) <= 2 * context) group.push(c);
    else groups.push([c]);
  }
  return groups;
}

/** "start,count" of a hunk header (1-based), git-style: ",1" is left out, an empty range names
 * the line before it. */
function range(start: number, count: number): string {
  if (count === 1) return `${start + 1}`;
  return `${count === 0 ? start : start + 1},${count}`;
}
