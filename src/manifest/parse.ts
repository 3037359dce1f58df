/**
 * Text -> syntax tree. agent.json is strict JSON: no comments, no trailing commas, no duplicate keys
 * (JSON.parse silently keeps the last duplicate, which hides mistakes).
 */
import { getLocation, parseTree, printParseErrorCode, type ParseError } from "jsonc-parser";
import type { PathSegment } from "./errors.js";
import type { Node, Source } from "./source.js";

// Numeric values of jsonc-parser's ParseErrorCode (an ambient const enum, unusable under isolatedModules).
const INVALID_SYMBOL = 1;
const VALUE_EXPECTED = 4;
const PROPERTY_NAME_EXPECTED = 3;
const END_OF_FILE_EXPECTED = 9;
const INVALID_COMMENT_TOKEN = 10;
const UNEXPECTED_END_OF_COMMENT = 11;
const UNEXPECTED_END_OF_STRING = 12;

/** Returns the root object node, or undefined when the text is not a JSON object (problems recorded). */
export function parseJsonText(source: Source): Node | undefined {
  const { text } = source;
  if (text.trim() === "") {
    source.report(0, [], 'the file is empty: expected a JSON object with "name", "version" and "capabilities"');
    return undefined;
  }
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  if (errors.length > 0) {
    reportSyntaxErrors(source, errors);
    return undefined;
  }
  if (root === undefined) return undefined;
  reportDuplicateKeys(source, root, []);
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
  const isComment = (e: ParseError) => e.error === INVALID_COMMENT_TOKEN || e.error === UNEXPECTED_END_OF_COMMENT;
  const firstOther = errors.find((e) => !isComment(e));
  for (const error of errors.filter((e) => isComment(e) || e === firstOther)) {
    const { offset, message } = describeSyntaxError(source.text, error);
    source.report(offset, locationPath(source.text, offset), `invalid JSON: ${message}`);
  }
}

function describeSyntaxError(text: string, error: ParseError): { offset: number; message: string } {
  const found = text.slice(error.offset, error.offset + error.length);
  if (error.error === INVALID_COMMENT_TOKEN || error.error === UNEXPECTED_END_OF_COMMENT) {
    return { offset: error.offset, message: "comments are not allowed (agent.json is strict JSON)" };
  }
  // A trailing comma surfaces as "value expected" / "property name expected" at the closing bracket.
  if ((error.error === VALUE_EXPECTED || error.error === PROPERTY_NAME_EXPECTED) && /^[}\]]$/.test(found)) {
    const comma = precedingNonSpace(text, error.offset);
    if (comma !== undefined && text[comma] === ",") {
      return { offset: comma, message: "trailing comma is not allowed (agent.json is strict JSON); remove it" };
    }
  }
  const words = codeAsWords(error.error);
  if (error.offset >= text.trimEnd().length) {
    return { offset: error.offset, message: `unexpected end of file (the JSON is incomplete): ${words}` };
  }
  if (error.error === INVALID_SYMBOL && found.startsWith("'")) {
    return { offset: error.offset, message: `${words} ${found}: use double quotes for strings and keys` };
  }
  if (error.error === END_OF_FILE_EXPECTED) {
    return { offset: error.offset, message: `${words}: there is more text after the end of the top-level object` };
  }
  if (error.error === INVALID_SYMBOL) return { offset: error.offset, message: `${words} ${JSON.stringify(found)}` };
  if (error.error === UNEXPECTED_END_OF_STRING) {
    return { offset: error.offset, message: `${words}: close the string on the same line (write \\n for a line break)` };
  }
  return { offset: error.offset, message: words };
}

/** "CloseBraceExpected" -> "close brace expected". */
function codeAsWords(code: number): string {
  return printParseErrorCode(code as Parameters<typeof printParseErrorCode>[0])
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase();
}

function precedingNonSpace(text: string, offset: number): number | undefined {
  for (let i = offset - 1; i >= 0; i--) if (!/\s/.test(text[i] ?? "")) return i;
  return undefined;
}

/** Best-effort path of the spot where parsing failed (the trailing "" jsonc uses for "a key is expected here" is dropped). */
function locationPath(text: string, offset: number): PathSegment[] {
  const path = [...getLocation(text, offset).path];
  while (path.length > 0 && path[path.length - 1] === "") path.pop();
  return path;
}

function reportDuplicateKeys(source: Source, node: Node, path: PathSegment[]): void {
  if (node.type === "array") {
    (node.children ?? []).forEach((child, index) => reportDuplicateKeys(source, child, [...path, index]));
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
      if (value !== undefined) reportDuplicateKeys(source, value, [...path, key]);
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
