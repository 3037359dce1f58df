/**
 * JavaScript laid out the way prettier's estree printer lays it out (prettier/src/language-js/print:
 * object.js, array.js, property.js, assignment.js, key.js, literal printing), for the code the generators
 * write: JSON-like values (objects, arrays, strings, numbers, booleans, null), identifiers, `export const`
 * declarations and imports.
 *
 * Statements are documents for print/doc.ts. JSON values are "lazy" groups: one that fits on its line is
 * written as its flat text; one that does not is written directly by printBroken() below, which takes
 * the decisions prettier's documents would take (a property or element of a broken object or array is
 * always followed by "," and a line break, which makes each decision local). The tests compare the
 * output with prettier's on fixtures and random values.
 */
import {
  type Doc,
  group,
  ifBreak,
  indent,
  join,
  lazy,
  line,
  textWidth,
  Unsupported,
} from "./doc.js";

const WIDTH = 100;

/** An identifier (or other code) to print as it is, e.g. a handler's name as a property value. */
export class Code {
  constructor(readonly text: string) {}
}

/** A value the JS printers lay out: JSON data, or Code. */
export type JsValue = unknown;

/** Text that JSON.stringify writes as it is, and whose width is its length: printable ASCII but `"` and `\`. */
const PLAIN = /^[ !#-[\]-~]*$/;

/** prettier's printString for a string literal as JSON.stringify writes it: the quote with fewer escapes. */
export function stringLiteral(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`;
  const raw = JSON.stringify(value);
  let doubles = 0;
  let singles = 0;
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw.charCodeAt(i);
    if (c === 34) doubles++;
    else if (c === 39) singles++;
  }
  if (doubles <= singles) return raw;
  // makeString(content, "'"): \" needs no escape any more, ' needs one.
  const body = raw
    .slice(1, -1)
    .replace(/\\(["'\\])|(["'])/g, (match, escaped: string, quote: string) => {
      if (escaped) return escaped === '"' ? '"' : match;
      return quote === "'" ? "\\'" : quote;
    });
  return `'${body}'`;
}

/** prettier's printNumber, applied to the JSON text of a (non-negative) number. */
export function numberLiteral(text: string): string {
  // Integers and plain decimals (what JSON.stringify writes for most numbers) print as they are.
  if (/^(?:0|[1-9]\d{0,20})(?:\.\d*[1-9])?$/.test(text)) return text;
  return text
    .toLowerCase()
    .replace(/^([+-]?[\d.]+e)(?:\+|(-))?0*(?=\d)/, "$1$2")
    .replace(/^([+-]?[\d.]+)e[+-]?0+$/, "$1")
    .replace(/^([+-])?\./, "$10.")
    .replace(/(\.\d+?)0+(?=e|$)/, "$1")
    .replace(/\.(?=e|$)/, "");
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * An object key as prettier prints it (quoteProps "as-needed", TypeScript parser): bare when it is an ES5
 * identifier name, else a string literal. Numbers stay quoted (unquoting them is unsafe in TypeScript).
 */
export function propertyKeyText(key: string): string {
  if (IDENTIFIER.test(key)) return key;
  // A non-ASCII key may still be an ES5 identifier (prettier would unquote it): not guessed here.
  if (!/^[\x20-\x7e]*$/.test(key)) throw new Unsupported(`non-ASCII key ${JSON.stringify(key)}`);
  return stringLiteral(key);
}

type Kind = "string" | "number" | "negative" | "boolean" | "null" | "object" | "array" | "code";

function kindOf(value: JsValue): Kind {
  if (value instanceof Code) return "code";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      // JSON.stringify(-0) is "0"; JSON writes non-finite numbers as null.
      if (!Number.isFinite(value)) return "null";
      return value < 0 ? "negative" : "number";
    case "boolean":
      return "boolean";
    case "object":
      return "object";
    default:
      throw new Unsupported(`cannot print a ${typeof value}`);
  }
}

export interface ValueOptions {
  /**
   * The source wrote every non-empty object over several lines (JSON.stringify(value, null, 2)), so
   * prettier keeps them expanded (objectWrap "preserve").
   */
  expandObjects?: boolean;
}

/**
 * The document of a value, as prettier prints the JavaScript expression JSON.stringify(value) would be.
 * Non-empty objects and arrays are lazy groups (see the top of this file).
 */
export function valueDoc(value: JsValue, options: ValueOptions = {}): Doc {
  const kind = kindOf(value);
  if (kind === "negative") return ["-", flatText(-(value as number))];
  if (kind !== "object" && kind !== "array") return flatText(value);
  if (isEmpty(value as object)) return kind === "array" ? "[]" : "{}";
  const expand = options.expandObjects === true;
  return lazy({
    width: () => flatWidth(value),
    flat: () => flatText(value),
    forced: () => isForced(value, expand),
    print: (column, indentation) => printBroken(value as object, column, indentation, expand),
  });
}

function isEmpty(value: object): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0;
}

/**
 * The width of flatText(value) when it is at most WIDTH (a line), else Infinity: measured without building
 * the text, and without measuring further than a line (so measuring again, deeper, costs little: nothing
 * is cached, which keeps memory, and the garbage collector's work, small).
 */
export function flatWidth(value: JsValue): number {
  if (typeof value === "string")
    return PLAIN.test(value) ? value.length + 2 : flatText(value).length;
  const kind = kindOf(value);
  if (kind !== "object" && kind !== "array") return flatText(value).length;
  let width: number;
  if (kind === "array") {
    const values = value as JsValue[];
    width = values.length === 0 ? 2 : values.length * 2;
    for (let i = 0; i < values.length && width <= WIDTH; i++) width += flatWidth(values[i]);
  } else {
    const record = value as Record<string, JsValue>;
    width = 2;
    for (const key in record) {
      if (width > WIDTH) break;
      const v = record[key];
      width +=
        v instanceof Code && v.text === key
          ? key.length + 2
          : propertyKeyText(key).length + 4 + flatWidth(v);
    }
  }
  return width > WIDTH ? Infinity : width;
}

/**
 * The value printed on one line: what its document prints in flat mode. Throws Unsupported for text whose
 * width is not known exactly, so every width measured later is the text's length.
 */
export function flatText(value: JsValue): string {
  switch (kindOf(value)) {
    case "code":
      return (value as Code).text;
    case "null":
      return "null";
    case "boolean":
      return value ? "true" : "false";
    case "string": {
      const text = stringLiteral(value as string);
      textWidth(text);
      return text;
    }
    case "number":
      return numberLiteral(JSON.stringify(value));
    case "negative":
      return `-${numberLiteral(JSON.stringify(-(value as number)))}`;
    case "array": {
      const values = value as JsValue[];
      let text = "[";
      for (let i = 0; i < values.length; i++)
        text += i === 0 ? flatText(values[i]) : `, ${flatText(values[i])}`;
      return `${text}]`;
    }
    case "object": {
      const record = value as Record<string, JsValue>;
      let text = "";
      for (const key in record) {
        const v = record[key];
        text += text === "" ? "{ " : ", ";
        text +=
          v instanceof Code && v.text === key ? key : `${propertyKeyText(key)}: ${flatText(v)}`;
      }
      return text === "" ? "{}" : `${text} }`;
    }
  }
}

/**
 * Whether the value's group breaks whatever the width (prettier's propagated group breaks). Only asked of
 * values narrow enough to fit on a line, so never costly.
 */
export function isForced(value: JsValue, expand: boolean): boolean {
  const kind = kindOf(value);
  if (kind === "array") {
    const values = value as JsValue[];
    if (arrayShouldBreak(values)) return true;
    for (const v of values) if (isForced(v, expand)) return true;
    return false;
  }
  if (kind !== "object") return false;
  const record = value as Record<string, JsValue>;
  for (const key in record) if (expand || isForced(record[key], expand)) return true;
  return false;
}

/** array.js: more than one element, all objects (or all arrays) with more than one entry each. */
function arrayShouldBreak(values: JsValue[]): boolean {
  if (values.length < 2) return false;
  const kind = kindOf(values[0]);
  if (kind !== "array" && kind !== "object") return false;
  return values.every(
    (v) =>
      kindOf(v) === kind &&
      (kind === "array" ? (v as unknown[]).length : Object.keys(v as object).length) > 1,
  );
}

/** array.js isConciselyPrintedArray: numbers only (signed or not), printed with fill. */
function isConcise(values: JsValue[]): boolean {
  return values.every((v) => {
    const kind = kindOf(v);
    return kind === "number" || kind === "negative";
  });
}

const spaces = (n: number) => " ".repeat(n);

/**
 * A value starting at `column`, whose line breaks indent from `indentation`, inside a broken object or
 * array (so "," and a line break follow it): flat when it fits, else broken.
 */
function printAt(value: JsValue, column: number, indentation: number, expand: boolean): string {
  const kind = kindOf(value);
  if (kind !== "object" && kind !== "array") return flatText(value);
  const width = flatWidth(value);
  if (width === 2) return flatText(value); // {} or []
  if (column + width + 1 <= WIDTH && !isForced(value, expand)) return flatText(value);
  return printBroken(value as object, column, indentation, expand);
}

/** A non-empty object or array that does not fit on its line, as prettier breaks it. */
function printBroken(value: object, column: number, indentation: number, expand: boolean): string {
  const inner = indentation + 2;
  const newline = `\n${spaces(inner)}`;
  if (Array.isArray(value)) {
    if (isConcise(value)) {
      // fill(): as many numbers on a line as fit, each with its comma (the last one's too).
      const items = value.map((v) => `${flatText(v)},`);
      let out = `[${newline}`;
      let position = inner;
      items.forEach((item, i) => {
        out += item;
        const next = items[i + 1];
        if (next === undefined) return;
        if (position + item.length + 1 + next.length <= WIDTH) {
          out += " ";
          position += item.length + 1;
        } else {
          out += newline;
          position = inner;
        }
      });
      return `${out}\n${spaces(indentation)}]`;
    }
    let out = "[";
    for (const v of value) out += `${newline}${printAt(v, inner, inner, expand)},`;
    return `${out}\n${spaces(indentation)}]`;
  }
  let out = "{";
  for (const [key, v] of Object.entries(value as Record<string, JsValue>)) {
    out += `${newline}${printProperty(key, v, inner, expand)},`;
  }
  return `${out}\n${spaces(indentation)}}`;
}

/** `key: value` at column `indentation` of a broken object, with prettier's assignment layouts. */
export function printProperty(
  key: string,
  value: JsValue,
  indentation: number,
  expand: boolean,
): string {
  if (value instanceof Code && value.text === key) return key;
  const keyText = propertyKeyText(key);
  const kind = kindOf(value);
  const shortKey = keyText.length < 5;
  const afterColon = indentation + keyText.length + 1;
  if (!shortKey && kind === "string") {
    // break-after-operator
    const text = flatText(value);
    if (afterColon + 1 + text.length + 1 <= WIDTH) return `${keyText}: ${text}`;
    return `${keyText}:\n${spaces(indentation + 2)}${text}`;
  }
  if (shortKey || kind === "number" || kind === "boolean" || kind === "string") {
    // never-break-after-operator
    return `${keyText}: ${printAt(value, afterColon + 1, indentation, expand)}`;
  }
  // fluid: the value stays after the colon when it fits there, or when it can start there ("{" or "[").
  const width = flatWidth(value);
  if (afterColon + 1 + width + 1 <= WIDTH && !isForced(value, expand))
    return `${keyText}: ${flatText(value)}`;
  const opens = (kind === "object" || kind === "array") && width > 2;
  const stays = opens ? afterColon + 2 <= WIDTH : afterColon + 1 + width + 1 <= WIDTH;
  if (stays) return `${keyText}: ${printAt(value, afterColon + 1, indentation, expand)}`;
  return `${keyText}:\n${spaces(indentation + 2)}${printAt(value, indentation + 2, indentation + 2, expand)}`;
}

/**
 * A statement `<head> <value>;`, where head ends with "=" (e.g. `export const x =`): prettier's "fluid"
 * assignment, as printed at the start of a line. The value stays after the "=" when it fits there (or, for
 * an object or array, when its "{" or "[" does), else it moves to the next line, indented.
 */
export function statementText(head: string, value: JsValue, options: ValueOptions = {}): string {
  const expand = options.expandObjects === true;
  const width = flatWidth(value);
  textWidth(head);
  if (head.length + 1 + width + 1 <= WIDTH && !isForced(value, expand))
    return `${head} ${flatText(value)};`;
  const kind = kindOf(value);
  const opens = (kind === "object" || kind === "array") && width > 2;
  if (opens && head.length + 2 <= WIDTH)
    return `${head} ${printBroken(value as object, head.length + 1, 0, expand)};`;
  return `${head}\n  ${printAt(value, 2, 2, expand)};`;
}

/**
 * `<head> {` then one property per line, then `};`: an object literal prettier keeps expanded, after the
 * "=" when its "{" fits there, else on the next line, indented.
 */
export function expandedObjectText(head: string, entries: Array<[string, JsValue]>): string {
  const lastLine = head.slice(head.lastIndexOf("\n") + 1);
  const indentation = lastLine.length + 2 <= WIDTH ? 0 : 2;
  const pad = " ".repeat(indentation);
  let out = indentation === 0 ? `${head} {` : `${head}\n${pad}{`;
  for (const [key, value] of entries)
    out += `\n${pad}  ${printProperty(key, value, indentation + 2, false)},`;
  return `${out}\n${pad}};`;
}

/** `import [type ]{ a, b } from "source";` (module.js printModuleSpecifiers), on one line if it fits. */
export function importText(names: string[], source: string, typeOnly: boolean): string {
  const head = typeOnly ? "import type " : "import ";
  const from = ` from ${stringLiteral(source)};`;
  const flat = `${head}{ ${names.join(", ")} }${from}`;
  if (names.length === 1 || flat.length <= WIDTH) return flat;
  return `${head}{\n${names.map((n) => `  ${n},`).join("\n")}\n}${from}`;
}

/** The "break-after-operator" assignment layout. */
export function breakAfterOperator(left: Doc, operator: string, right: Doc): Doc {
  return group([group(left), operator, group(indent([line, right]))]);
}

/** `import [type ]{ a, b } from "source";` (module.js printModuleSpecifiers). */
export function importDoc(names: string[], source: string, typeOnly: boolean): Doc {
  const head = typeOnly ? "import type " : "import ";
  const from = ` from ${stringLiteral(source)};`;
  if (names.length === 1) return [head, `{ ${names[0]} }`, from];
  return [
    head,
    group(["{", indent([line, join([",", line], names)]), ifBreak(","), line, "}"]),
    from,
  ];
}
