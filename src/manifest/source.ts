/**
 * The parsed text plus a problem collector. Validators walk jsonc-parser's syntax tree (not plain values)
 * because only the tree knows where each key and value sits in the file.
 */
import type { Node } from "jsonc-parser";
import { formatPath, type ManifestProblem, type PathSegment } from "./errors.js";

export type { Node };

export interface Entry {
  key: string;
  keyNode: Node;
  value: Node;
}

export class Source {
  readonly problems: ManifestProblem[] = [];
  private readonly lineStarts: number[] = [0];

  constructor(
    readonly text: string,
    readonly file: string,
  ) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** 1-based line and column (in UTF-16 code units, like editors count) of an offset. */
  position(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - (this.lineStarts[low] ?? 0) + 1 };
  }

  /** Records a problem located at a node (or raw offset); `undefined` means "no position". */
  report(at: Node | number | undefined, path: readonly PathSegment[], message: string): void {
    const offset = typeof at === "number" ? at : at?.offset;
    const position = offset === undefined ? {} : this.position(offset);
    this.problems.push({ file: this.file, path: formatPath(path), ...position, message });
  }

  /** Problems sorted by position (stable, so problems at the same spot keep discovery order). */
  sortedProblems(): ManifestProblem[] {
    return this.problems
      .map((problem, index) => ({ problem, index }))
      .sort(
        (a, b) =>
          (a.problem.line ?? 0) - (b.problem.line ?? 0) ||
          (a.problem.column ?? 0) - (b.problem.column ?? 0) ||
          a.index - b.index,
      )
      .map(({ problem }) => problem);
  }

  /**
   * The JSON value of a subtree. JSON.parse of the exact source slice (the text is known to be strict JSON
   * by then) keeps `__proto__` keys as own properties, which jsonc-parser's getNodeValue would not.
   */
  valueOf(node: Node): unknown {
    return JSON.parse(this.text.slice(node.offset, node.offset + node.length));
  }

  /** Source text of a node, e.g. to echo a number exactly as the user wrote it. */
  sourceOf(node: Node): string {
    return this.text.slice(node.offset, node.offset + node.length);
  }

  /** Short description of what a node holds, for "must be X, found Y" messages. */
  describe(node: Node): string {
    switch (node.type) {
      case "object":
        return "an object";
      case "array":
        return "an array";
      case "null":
        return "null";
      case "boolean":
        return `a boolean (${this.sourceOf(node)})`;
      case "number":
        return `a number (${this.sourceOf(node)})`;
      case "string":
        return `a string (${truncate(this.sourceOf(node))})`;
      default:
        return node.type;
    }
  }
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** Properties of an object node in order, first occurrence of each key only (duplicates are reported by the parser). */
export function entries(node: Node): Entry[] {
  const seen = new Set<string>();
  const out: Entry[] = [];
  for (const property of node.children ?? []) {
    const [keyNode, value] = property.children ?? [];
    if (keyNode === undefined || value === undefined) continue;
    const key = String(keyNode.value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ key, keyNode, value });
  }
  return out;
}

export function isInteger(node: Node): boolean {
  return node.type === "number" && Number.isInteger(node.value);
}
