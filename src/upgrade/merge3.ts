/**
 * Three-way merge of text files, line by line, in the style of diff3 (and of
 * `git merge-file --diff3`), following the procedure described in Khanna, Kunal and Pierce, "A
 * Formal Investigation of Diff3" (2007):
 *
 * 1. Diff base→ours and base→theirs (line-diff.ts). A base line is *stable* when both diffs keep
 *    it, and it is reached in step with both sides (nothing was inserted before it on either side
 *    since the previous stable line).
 * 2. Walk the three files together. Stable lines are copied. Between two stable lines lies a
 *    chunk: if only ours differs from base there, ours is taken; if only theirs, theirs; if both
 *    made the same change, it is taken once; otherwise the chunk is a conflict:
 *
 *   <<<<<<< yours
 *   ...ours lines...
 *   ||||||| create-agent 0.1.0
 *   ...base lines...
 *   =======
 *   ...theirs lines...
 *   >>>>>>> create-agent 0.2.0
 *
 * So changes conflict when they overlap or touch (no unchanged base line between them): two
 * insertions at the same place conflict unless identical, and so does a deletion next to an edit.
 * Line endings are kept as they are. A marker line ends like the base line at the conflict (the
 * one before it, or the first base line for a conflict at the start): with CRLF if that line has
 * one, else with LF. A conflict section whose last line has no newline gets that line ending, so
 * that every marker starts its own line.
 *
 * With `lineSet` (a file whose lines are a set, such as .gitignore), lines both sides inserted at the
 * same place are no conflict: ours, then those of theirs ours lacks. A chunk where either side changed or
 * removed base lines, or added a `!` (negation) line, still conflicts.
 */
import { diffLines, type LineChange, splitLines } from "./line-diff.js";

export interface MergeLabels {
  /** Shown after `<<<<<<<`, e.g. "yours". */
  ours: string;
  /** Shown after `|||||||`, e.g. "create-agent 0.1.0". */
  base: string;
  /** Shown after `>>>>>>>`, e.g. "create-agent 0.2.0". */
  theirs: string;
}

export interface MergeResult {
  text: string;
  /** Number of conflict blocks in `text`; 0 means a clean merge. */
  conflicts: number;
}

export function merge3(
  base: string,
  ours: string,
  theirs: string,
  labels: MergeLabels,
  options: { lineSet?: boolean } = {},
): MergeResult {
  // Nothing to reconcile when one side kept the base or both sides agree.
  if (ours === theirs || theirs === base) return { text: ours, conflicts: 0 };
  if (ours === base) return { text: theirs, conflicts: 0 };

  const baseLines = splitLines(base);
  const oursLines = splitLines(ours);
  const theirsLines = splitLines(theirs);
  const inOurs = keptAt(baseLines.length, diffLines(baseLines, oursLines));
  const inTheirs = keptAt(baseLines.length, diffLines(baseLines, theirsLines));

  const out: string[] = [];
  let conflicts = 0;
  // The next line of each file; the three stay in step across stable lines.
  let b = 0;
  let o = 0;
  let t = 0;
  while (b < baseLines.length || o < oursLines.length || t < theirsLines.length) {
    if (b < baseLines.length && inOurs[b] === o && inTheirs[b] === t) {
      out.push(baseLines[b]!);
      b++;
      o++;
      t++;
      continue;
    }
    // A chunk: up to the next base line that both sides keep (or to the ends of the files).
    let bEnd = b;
    while (bEnd < baseLines.length && (inOurs[bEnd]! < 0 || inTheirs[bEnd]! < 0)) bEnd++;
    const oEnd = bEnd < baseLines.length ? inOurs[bEnd]! : oursLines.length;
    const tEnd = bEnd < baseLines.length ? inTheirs[bEnd]! : theirsLines.length;
    const baseChunk = baseLines.slice(b, bEnd);
    const oursChunk = oursLines.slice(o, oEnd);
    const theirsChunk = theirsLines.slice(t, tEnd);

    if (sameLines(oursChunk, baseChunk)) append(out, theirsChunk);
    else if (sameLines(theirsChunk, baseChunk) || sameLines(oursChunk, theirsChunk)) {
      append(out, oursChunk);
    } else if (options.lineSet && baseChunk.length === 0 && !negates(oursChunk, theirsChunk)) {
      appendUnion(out, oursChunk, theirsChunk, oursLines);
    } else {
      conflicts++;
      const near = b > 0 ? baseLines[b - 1] : baseLines[0];
      const eol = near?.endsWith("\r\n") ? "\r\n" : "\n";
      appendConflict(out, [oursChunk, baseChunk, theirsChunk], labels, eol);
    }
    b = bEnd;
    o = oEnd;
    t = tEnd;
  }
  return { text: out.join(""), conflicts };
}

/** For each base line, the index it has on the other side when the diff keeps it, else -1. */
function keptAt(baseLength: number, changes: readonly LineChange[]): Int32Array {
  const at = new Int32Array(baseLength).fill(-1);
  let line = 0;
  let shift = 0; // other index − base index, for the kept lines since the last change
  for (const change of changes) {
    for (; line < change.aStart; line++) at[line] = line + shift;
    line = change.aStart + change.aCount;
    shift += change.bCount - change.aCount;
  }
  for (; line < baseLength; line++) at[line] = line + shift;
  return at;
}

/** A conflict block: ours, base and theirs between markers, each line ending with a newline. */
function appendConflict(
  out: string[],
  [ours, base, theirs]: readonly string[][],
  labels: MergeLabels,
  eol: string,
): void {
  const section = (lines: readonly string[]) => {
    for (const line of lines) out.push(line.endsWith("\n") ? line : line + eol);
  };
  out.push(`<<<<<<< ${labels.ours}${eol}`);
  section(ours!);
  out.push(`||||||| ${labels.base}${eol}`);
  section(base!);
  out.push(`=======${eol}`);
  section(theirs!);
  out.push(`>>>>>>> ${labels.theirs}${eol}`);
}

/**
 * Lines both sides inserted at one place, in a set-like file: ours, then each of theirs not already in
 * `oursFile` (nor added before it), compared without line endings. A line with no newline (the file's
 * last) gets one when another follows it, ending like the line before it.
 */
function appendUnion(
  out: string[],
  ours: readonly string[],
  theirs: readonly string[],
  oursFile: readonly string[],
): void {
  const bare = (line: string) => line.replace(/\r?\n$/, "");
  const seen = new Set(oursFile.map(bare));
  const lines = [...ours];
  for (const line of theirs) {
    if (seen.has(bare(line))) continue;
    seen.add(bare(line));
    lines.push(line);
  }
  lines.forEach((line, i) => {
    const eol = (i > 0 ? lines[i - 1]! : line).endsWith("\r\n") ? "\r\n" : "\n";
    out.push(i < lines.length - 1 && !line.endsWith("\n") ? line + eol : line);
  });
}

/** A `!pattern` line re-includes what lines before it excluded: then order matters, and it stays a conflict. */
function negates(...chunks: readonly string[][]): boolean {
  return chunks.some((lines) => lines.some((line) => line.trimStart().startsWith("!")));
}

/** Appends lines one by one (spreading a big chunk into push() could overflow the stack). */
function append(out: string[], lines: readonly string[]): void {
  for (const line of lines) out.push(line);
}

function sameLines(x: readonly string[], y: readonly string[]): boolean {
  return x.length === y.length && x.every((line, i) => line === y[i]);
}

/**
 * A project file as create-agent compares and merges it: with LF line endings, and how to give a result
 * back in the file's own (CRLF where git's core.autocrlf or an editor on Windows made them so), so a
 * checkout's line endings are never taken for edits of every line.
 */
export function ownLineEndings(text: string): { lf: string; back: (result: string) => string } {
  if (!text.includes("\r\n")) return { lf: text, back: (result) => result };
  return {
    lf: text.replaceAll("\r\n", "\n"),
    back: (result) => result.replaceAll("\r\n", "\n").replaceAll("\n", "\r\n"),
  };
}

/**
 * Whether `text` holds a conflict an upgrade wrote (<<<<<<< yours ... >>>>>>> create-agent x.y.z), or
 * half of one: a marker line left by a resolution that stopped halfway.
 */
const hasUpgradeMarkers = (text: string): boolean =>
  /^<<<<<<< yours\r?$/m.test(text) || /^>>>>>>> create-agent \S+\r?$/m.test(text);

/** Which of `paths` still hold an earlier upgrade's conflict markers (read with `read`). */
export async function unresolvedConflicts(
  paths: string[],
  read: (path: string) => Promise<Buffer | undefined>,
): Promise<string[]> {
  const unresolved: string[] = [];
  for (const path of paths) {
    const text = (await read(path))?.toString("utf8");
    if (text !== undefined && hasUpgradeMarkers(text)) unresolved.push(path);
  }
  return unresolved;
}
