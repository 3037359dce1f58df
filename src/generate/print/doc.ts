/**
 * A small port of prettier's document printer (prettier/src/document): the same commands, the same
 * `fits` measure and the same break propagation, for the subset of documents the generators build. The
 * generated files are laid out with it exactly as prettier (printWidth 100, 2-space indent) lays out the
 * same code, without loading prettier: print/js.ts and print/ts.ts build the documents the way prettier's
 * JavaScript and TypeScript printers do, and the tests compare the results with prettier itself.
 */

export type Doc = string | Doc[] | Command;

type Command =
  | { kind: "group"; contents: Doc; break: boolean; expandedStates?: Doc[] }
  | { kind: "indent"; contents: Doc }
  | { kind: "line"; soft: boolean; hard: boolean; literal?: boolean; keepSpaces?: boolean }
  | { kind: "if-break"; breakContents: Doc; flatContents: Doc }
  | { kind: "break-parent" }
  /** Text that is never measured (a comment: always followed by a hard line). */
  | { kind: "comment"; text: string }
  | { kind: "lazy"; value: LazyGroup };

/**
 * A group printed without a document (print/js.ts: JSON values): as its flat text when it fits, else as
 * the text print() lays out. Its broken form starts with a one-character text followed by a line break
 * ("{" or "["), which is all `fits` measures of a broken group.
 */
export interface LazyGroup {
  /** The width of flat() when it is at most a line (100), else Infinity. */
  width(): number;
  /** The group printed flat. */
  flat(): string;
  /** Whether the group (or one inside it) must break: prettier's propagated `break`. */
  forced(): boolean;
  /** The group broken, starting at `column`, its line breaks indented from `indentation`. */
  print(column: number, indentation: number): string;
}

export function lazy(value: LazyGroup): Doc {
  return { kind: "lazy", value };
}

/** Thrown for text this printer does not lay out exactly like prettier (wide characters...): the caller formats with prettier. */
export class Unsupported extends Error {}

export const line: Doc = { kind: "line", soft: false, hard: false };
export const softline: Doc = { kind: "line", soft: true, hard: false };
export const breakParent: Doc = { kind: "break-parent" };
export const hardline: Doc = [{ kind: "line", soft: false, hard: true }, breakParent];
/** A line break that keeps the spaces before it (prettier's markAsRoot(literalline) in a JSDoc comment). */
export const hardlineKeepingSpaces: Doc = [
  { kind: "line", soft: false, hard: true, keepSpaces: true },
  breakParent,
];
/** A line break back to column 0 (prettier's literalline, for verbatim comment text). */
export const literalline: Doc = [
  { kind: "line", soft: false, hard: true, literal: true },
  breakParent,
];

export function group(contents: Doc, options: { shouldBreak?: boolean } = {}): Doc {
  return { kind: "group", contents, break: options.shouldBreak === true };
}

/** prettier's conditionalGroup: the first state that fits flat, else the last one broken. */
export function conditionalGroup(states: Doc[]): Doc {
  return { kind: "group", contents: states[0]!, break: false, expandedStates: states };
}

export function indent(contents: Doc): Doc {
  return { kind: "indent", contents };
}

export function ifBreak(breakContents: Doc, flatContents: Doc = ""): Doc {
  return { kind: "if-break", breakContents, flatContents };
}

export function comment(text: string): Doc {
  return { kind: "comment", text };
}

export function join(separator: Doc, docs: Doc[]): Doc[] {
  const out: Doc[] = [];
  docs.forEach((doc, i) => {
    if (i > 0) out.push(separator);
    out.push(doc);
  });
  return out;
}

// prettier's getStringWidth counts every character of ASCII text (0x20-0x7f) as 1. Beyond ASCII it looks
// characters up in Unicode tables; the ranges below (Latin, Greek, Cyrillic, general punctuation, currency
// and letterlike symbols) are all 1 wide there (a test checks each code point against prettier). Anything
// else is not guessed: Unsupported makes the caller format that file with prettier itself.
const NARROW =
  /^[\x20-\x7e\u00a0-\u02ff\u0370-\u0482\u048a-\u052f\u1e00-\u1fff\u2010-\u205e\u20a0-\u20c0\u2100-\u214f]*$/;

export function textWidth(text: string): number {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text.length;
  if (NARROW.test(text)) return text.length;
  throw new Unsupported(`no exact width for ${JSON.stringify(text.slice(0, 40))}`);
}

const MODE_BREAK = 1;
const MODE_FLAT = 2;
type Mode = typeof MODE_BREAK | typeof MODE_FLAT;

interface Cmd {
  ind: number;
  mode: Mode;
  doc: Doc;
}

/** prettier's propagateBreaks: a group holding a hard line (or a broken group) breaks, up to a conditional group. */
function propagateBreaks(doc: Doc, visited: Set<Command>): boolean {
  if (typeof doc === "string") return false;
  if (Array.isArray(doc)) {
    let found = false;
    for (const part of doc) if (propagateBreaks(part, visited)) found = true;
    return found;
  }
  switch (doc.kind) {
    case "break-parent":
      return true;
    case "group": {
      if (visited.has(doc)) return doc.break;
      visited.add(doc);
      if (doc.expandedStates) {
        for (const state of doc.expandedStates) propagateBreaks(state, visited);
        // A conditional group is never broken by what it holds.
        return doc.break;
      }
      if (propagateBreaks(doc.contents, visited)) doc.break = true;
      return doc.break;
    }
    case "indent":
      return propagateBreaks(doc.contents, visited);
    case "if-break": {
      const a = propagateBreaks(doc.breakContents, visited);
      const b = propagateBreaks(doc.flatContents, visited);
      return a || b;
    }
    case "lazy":
      return doc.value.forced();
    default:
      return false;
  }
}

/** What fits() measures of an indent, a group or an if-break, in the mode it measures it in. */
function measuredContents(
  mode: Mode,
  doc: Extract<Doc, { kind: "indent" | "group" | "if-break" }>,
): { mode: Mode; doc: Doc } | undefined {
  if (doc.kind === "indent") return { mode, doc: doc.contents };
  if (doc.kind === "group") {
    const groupMode = doc.break ? MODE_BREAK : mode;
    const contents =
      doc.expandedStates && groupMode === MODE_BREAK ? doc.expandedStates.at(-1)! : doc.contents;
    return { mode: groupMode, doc: contents };
  }
  const contents = mode === MODE_BREAK ? doc.breakContents : doc.flatContents;
  return contents ? { mode, doc: contents } : undefined;
}

/** prettier's fits: whether `next`, then `rest` up to its first line break, fits in `width` columns. */
function fits(next: Cmd, rest: Cmd[], width: number): boolean {
  let restIndex = rest.length;
  const cmds: Array<{ mode: Mode; doc: Doc }> = [{ mode: next.mode, doc: next.doc }];
  let pendingSpace = false;
  while (width >= 0) {
    if (cmds.length === 0) {
      if (restIndex === 0) return true;
      const r = rest[--restIndex]!;
      cmds.push({ mode: r.mode, doc: r.doc });
      continue;
    }
    const { mode, doc } = cmds.pop()!;
    if (typeof doc === "string") {
      if (doc) {
        if (pendingSpace) {
          width -= 1;
          pendingSpace = false;
        }
        width -= textWidth(doc);
      }
      continue;
    }
    if (Array.isArray(doc)) {
      for (let i = doc.length - 1; i >= 0; i--) cmds.push({ mode, doc: doc[i]! });
      continue;
    }
    switch (doc.kind) {
      case "indent":
      case "group":
      case "if-break": {
        const inner = measuredContents(mode, doc);
        if (inner) cmds.push(inner);
        break;
      }
      case "line":
        if (mode === MODE_BREAK || doc.hard) return true;
        if (!doc.soft) pendingSpace = true;
        break;
      case "comment":
        // Always followed by a hard line.
        return true;
      case "break-parent":
        break;
      case "lazy": {
        if (pendingSpace) {
          width -= 1;
          pendingSpace = false;
        }
        if (mode === MODE_FLAT && !doc.value.forced()) {
          width -= doc.value.width();
          break;
        }
        // Broken: "{" or "[", then a line.
        return width - 1 >= 0;
      }
    }
  }
  return false;
}

/** prettier's trim(): drop trailing spaces and tabs before a line break. */
function trimOutput(out: string[]): void {
  while (out.length > 0) {
    const last = out[out.length - 1]!;
    const trimmed = last.replace(/[ \t]+$/, "");
    if (trimmed.length === last.length) break;
    if (trimmed === "") out.pop();
    else {
      out[out.length - 1] = trimmed;
      break;
    }
  }
}

/**
 * A lazy group printed at column `pos`: flat when it is not forced to break and either needs no measuring
 * or fits (`measure`: what follows it, and the width), else broken by its own printer. Its end column.
 */
function printLazy(
  doc: Extract<Doc, { kind: "lazy" }>,
  ind: number,
  measure: false | { cmds: Cmd[]; width: number },
  pos: number,
  out: string[],
): number {
  const flat =
    !doc.value.forced() &&
    (!measure || fits({ ind, mode: MODE_FLAT, doc }, measure.cmds, measure.width - pos));
  const text = flat ? doc.value.flat() : doc.value.print(pos, ind);
  out.push(text);
  return flat ? pos + text.length : text.length - text.lastIndexOf("\n") - 1;
}

/**
 * A line: in a flat group a space (nothing for a soft line); broken (or hard), a line break and the
 * indentation (none after a literal line). Its end column.
 */
function printLine(
  doc: Extract<Doc, { kind: "line" }>,
  ind: number,
  mode: Mode,
  pos: number,
  out: string[],
): number {
  if (mode === MODE_FLAT && !doc.hard) {
    if (doc.soft) return pos;
    out.push(" ");
    return pos + 1;
  }
  if (doc.literal) {
    out.push("\n");
    return 0;
  }
  if (!doc.keepSpaces) trimOutput(out);
  out.push("\n" + " ".repeat(ind));
  return ind;
}

/**
 * How a group measured in a breaking parent is printed: flat when it fits in `rem` columns (with what
 * follows up to its first line break), else the first of its expanded states that fits, else broken.
 */
function groupLayout(
  doc: Extract<Doc, { kind: "group" }>,
  ind: number,
  cmds: Cmd[],
  rem: number,
): Cmd {
  const flat: Cmd = { ind, mode: MODE_FLAT, doc: doc.contents };
  if (!doc.break && fits(flat, cmds, rem)) return flat;
  if (!doc.expandedStates) return { ind, mode: MODE_BREAK, doc: doc.contents };
  if (!doc.break) {
    for (let i = 1; i < doc.expandedStates.length - 1; i++) {
      const state: Cmd = { ind, mode: MODE_FLAT, doc: doc.expandedStates[i]! };
      if (fits(state, cmds, rem)) return state;
    }
  }
  return { ind, mode: MODE_BREAK, doc: doc.expandedStates.at(-1)! };
}

/**
 * The text of `doc` at printWidth `width`, with 2-space indentation and "\n" line ends. `indentation`: the
 * document starts at that column of a line indented that much (the caller wrote the indentation).
 */
export function printDoc(doc: Doc, width = 100, indentation = 0): string {
  propagateBreaks(doc, new Set());
  const out: string[] = [];
  let pos = indentation;
  let shouldRemeasure = false;
  const cmds: Cmd[] = [{ ind: indentation, mode: MODE_BREAK, doc }];

  while (cmds.length > 0) {
    const { ind, mode, doc } = cmds.pop()!;
    if (typeof doc === "string") {
      if (doc) {
        out.push(doc);
        if (cmds.length > 0) pos += textWidth(doc);
      }
      continue;
    }
    if (Array.isArray(doc)) {
      for (let i = doc.length - 1; i >= 0; i--) cmds.push({ ind, mode, doc: doc[i]! });
      continue;
    }
    switch (doc.kind) {
      case "indent":
        cmds.push({ ind: ind + 2, mode, doc: doc.contents });
        break;
      case "comment":
        out.push(doc.text);
        break;
      case "break-parent":
        break;
      case "lazy": {
        // As a group: flat in a flat parent, else flat if it fits; broken when it must break.
        const measure = mode !== MODE_FLAT || shouldRemeasure;
        if (measure) shouldRemeasure = false;
        pos = printLazy(doc, ind, measure && { cmds, width }, pos, out);
        break;
      }
      case "group": {
        if (mode === MODE_FLAT && !shouldRemeasure) {
          cmds.push({ ind, mode: doc.break ? MODE_BREAK : MODE_FLAT, doc: doc.contents });
        } else {
          shouldRemeasure = false;
          cmds.push(groupLayout(doc, ind, cmds, width - pos));
        }
        break;
      }
      case "if-break": {
        const contents = mode === MODE_BREAK ? doc.breakContents : doc.flatContents;
        if (contents) cmds.push({ ind, mode, doc: contents });
        break;
      }
      case "line":
        // A hard line in a flat group: what follows is measured again.
        if (mode === MODE_FLAT && doc.hard) shouldRemeasure = true;
        pos = printLine(doc, ind, mode, pos, out);
        break;
    }
  }
  return out.join("");
}
