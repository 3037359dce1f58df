/**
 * Text -> syntax tree. agent.json is strict JSON: no comments, no trailing commas, no duplicate keys
 * (JSON.parse silently keeps the last duplicate, which hides mistakes).
 */
import { createRequire } from "node:module";
import type { ParseError } from "jsonc-parser";
import type { PathSegment } from "./errors.js";
import type { Node, Source } from "./source.js";

/** jsonc-parser (CommonJS), required only for text that is not strict JSON: valid files never load it. */
function jsonc(): typeof import("jsonc-parser") {
  return createRequire(import.meta.url)("jsonc-parser") as typeof import("jsonc-parser");
}

/**
 * jsonc-parser's name for an error's code ("InvalidSymbol", ...), which this file compares: its
 * ParseErrorCode is an ambient const enum, unusable under isolatedModules.
 */
type CodeName = ReturnType<typeof import("jsonc-parser").printParseErrorCode>;

const COMMENT_CODES: readonly CodeName[] = ["InvalidCommentToken", "UnexpectedEndOfComment"];

function codeName(error: ParseError): CodeName {
  return jsonc().printParseErrorCode(error.error);
}

/** Returns the root object node, or undefined when the text is not a JSON object (problems recorded). */
export function parseJsonText(source: Source): Node | undefined {
  const { text } = source;
  if (text.trim() === "") {
    source.report(
      0,
      [],
      'the file is empty: expected a JSON object with "name", "version" and "capabilities"',
    );
    return undefined;
  }
  let root: Node | undefined;
  let duplicates = true;
  if (isStrictJson(text)) ({ root, duplicates } = strictJsonTree(text));
  else {
    // Invalid JSON: jsonc-parser finds each error and where it is.
    const errors: ParseError[] = [];
    root = jsonc().parseTree(text, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
    if (errors.length > 0) {
      reportSyntaxErrors(source, errors);
      return undefined;
    }
  }
  if (root === undefined) return undefined;
  if (duplicates) reportDuplicateKeys(source, root, []);
  if (root.type !== "object") {
    source.report(root, [], `the top level must be a JSON object, found ${source.describe(root)}`);
    return undefined;
  }
  return root;
}

/**
 * After the first real syntax error, jsonc-parser's recovery produces follow-on errors that are mostly noise,
 * so only that one is reported. Comment errors do not disturb parsing, so every comment is reported.
 */
function reportSyntaxErrors(source: Source, errors: ParseError[]): void {
  const isComment = (e: ParseError) => COMMENT_CODES.includes(codeName(e));
  const firstOther = errors.find((e) => !isComment(e));
  for (const error of errors.filter((e) => isComment(e) || e === firstOther)) {
    const { offset, message } = describeSyntaxError(source.text, error);
    source.report(offset, locationPath(source.text, offset), `invalid JSON: ${message}`);
  }
}

function describeSyntaxError(text: string, error: ParseError): { offset: number; message: string } {
  const found = text.slice(error.offset, error.offset + error.length);
  const code = codeName(error);
  if (COMMENT_CODES.includes(code)) {
    return {
      offset: error.offset,
      message: "comments are not allowed (agent.json is strict JSON)",
    };
  }
  // A trailing comma surfaces as "value expected" / "property name expected" at the closing bracket.
  if ((code === "ValueExpected" || code === "PropertyNameExpected") && /^[}\]]$/.test(found)) {
    const comma = precedingNonSpace(text, error.offset);
    if (comma !== undefined && text[comma] === ",") {
      return {
        offset: comma,
        message: "trailing comma is not allowed (agent.json is strict JSON); remove it",
      };
    }
  }
  const words = code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase(); // "close brace expected"
  if (error.offset >= text.trimEnd().length) {
    return {
      offset: error.offset,
      message: `unexpected end of file (the JSON is incomplete): ${words}`,
    };
  }
  if (code === "InvalidSymbol" && found.startsWith("'")) {
    return {
      offset: error.offset,
      message: `${words} ${found}: use double quotes for strings and keys`,
    };
  }
  if (code === "EndOfFileExpected") {
    return {
      offset: error.offset,
      message: `${words}: there is more text after the end of the top-level object`,
    };
  }
  if (code === "InvalidSymbol")
    return { offset: error.offset, message: `${words} ${JSON.stringify(found)}` };
  if (code === "UnexpectedEndOfString") {
    return {
      offset: error.offset,
      message: `${words}: close the string on the same line (write \\n for a line break)`,
    };
  }
  return { offset: error.offset, message: words };
}

function precedingNonSpace(text: string, offset: number): number | undefined {
  for (let i = offset - 1; i >= 0; i--) if (!/\s/.test(text[i] ?? "")) return i;
  return undefined;
}

/** Best-effort path of the spot where parsing failed (the trailing "" jsonc uses for "a key is expected here" is dropped). */
function locationPath(text: string, offset: number): PathSegment[] {
  const path = [...jsonc().getLocation(text, offset).path];
  while (path.length > 0 && path[path.length - 1] === "") path.pop();
  return path;
}

/** `path` is the node's location, shared and restored as the walk goes (copied only for a report). */
function reportDuplicateKeys(source: Source, node: Node, path: PathSegment[]): void {
  if (node.type === "array") {
    (node.children ?? []).forEach((child, index) => {
      path.push(index);
      reportDuplicateKeys(source, child, path);
      path.pop();
    });
    return;
  }
  if (node.type !== "object") return;
  const first = new Map<string, Node>();
  for (const property of node.children ?? []) {
    const [keyNode, value] = property.children ?? [];
    if (keyNode === undefined) continue;
    const key = String(keyNode.value);
    const previous = first.get(key);
    if (previous === undefined) {
      first.set(key, keyNode);
      if (value !== undefined) {
        path.push(key);
        reportDuplicateKeys(source, value, path);
        path.pop();
      }
    } else {
      const { line, column } = source.position(previous.offset);
      source.report(
        keyNode,
        [...path, key],
        `duplicate key "${key}" (first defined at line ${line}, column ${column}); JSON would silently keep only the last one, so remove one of them`,
      );
    }
  }
}

/** Whether `text` is strict JSON (JSON.parse accepts it). */
function isStrictJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The syntax tree jsonc-parser's parseTree builds, for text already known to be strict JSON: the same
 * nodes as far as the validators read them (type, offset, length, value, children; properties with
 * [key, value] children; no parent links), built in one pass without jsonc-parser's general scanner, which handles what strict JSON
 * never holds (comments, errors) and was most of the time spent reading a large agent.json. Also says
 * whether some object repeats a key (then the caller reports where).
 */
type TreeNode = { -readonly [K in keyof Node]: Node[K] };

export function strictJsonTree(text: string): { root: Node; duplicates: boolean } {
  let i = 0;
  let duplicates = false;
  const space = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else return;
    }
  };
  const string = (): TreeNode => {
    const start = i;
    let end = text.indexOf('"', i + 1);
    for (;;) {
      // A quote preceded by an odd number of backslashes is escaped.
      let slashes = 0;
      for (let j = end - 1; text.charCodeAt(j) === 92; j--) slashes++;
      if (slashes % 2 === 0) break;
      end = text.indexOf('"', end + 1);
    }
    i = end + 1;
    const raw = text.slice(start, i);
    const value = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    return { type: "string", offset: start, length: i - start, value };
  };
  // An object or an array, from its opening bracket at `start` to its closing one (`close`'s code):
  // `member` reads each element (an object's: a property, its key and value).
  const container = (
    type: "object" | "array",
    start: number,
    close: number,
    member: () => TreeNode,
  ): TreeNode => {
    const node: TreeNode = { type, offset: start, length: 0, children: [] };
    i++;
    space();
    if (text.charCodeAt(i) === close) i++;
    else {
      for (;;) {
        node.children!.push(member());
        space();
        if (text.charCodeAt(i++) === close) break;
      }
    }
    node.length = i - start;
    return node;
  };
  const object = (start: number): TreeNode => {
    // Keys seen in this object: a list while short, a set beyond.
    const keys: string[] = [];
    let seen: Set<string> | undefined;
    return container("object", start, 125, () => {
      space();
      const property: TreeNode = { type: "property", offset: i, length: 0, children: [] };
      const key = string();
      if (!duplicates) {
        const name = key.value as string;
        if (seen === undefined && keys.length >= 16) seen = new Set(keys);
        if (seen ? seen.has(name) : keys.includes(name)) duplicates = true;
        else if (seen) seen.add(name);
        else keys.push(name);
      }
      space();
      i++;
      property.children!.push(key, value());
      property.length = i - property.offset;
      return property;
    });
  };
  const array = (start: number): TreeNode => container("array", start, 93, value);
  const value = (): TreeNode => {
    space();
    const start = i;
    const c = text.charCodeAt(i);
    if (c === 123) return object(start);
    if (c === 91) return array(start);
    if (c === 34) return string();
    if (c === 116) {
      i += 4;
      return { type: "boolean", offset: start, length: 4, value: true };
    }
    if (c === 102) {
      i += 5;
      return { type: "boolean", offset: start, length: 5, value: false };
    }
    if (c === 110) {
      i += 4;
      return { type: "null", offset: start, length: 4, value: null };
    }
    while (i < text.length && /[-+.0-9eE]/.test(text[i]!)) i++;
    return {
      type: "number",
      offset: start,
      length: i - start,
      value: Number(text.slice(start, i)),
    };
  };
  return { root: value(), duplicates };
}
