/**
 * Validation of field maps (`input_schema`, `output_schema`, `properties`) and field descriptors.
 * Every problem is collected; a value whose shape is already wrong is not descended into.
 */
import type { PathSegment } from "./errors.js";
import { fieldToJsonSchema, type SchemaMode } from "./json-schema.js";
import {
  APPLIES_TO,
  DESCRIPTOR_KEYWORDS,
  FIELD_TYPES,
  FORMAT_ALIASES,
  KEYWORD_ALIASES,
  STRING_FORMATS,
  TYPE_ALIASES,
  type DescriptorKeyword,
} from "./keywords.js";
import type { FieldDescriptor, FieldType } from "./model.js";
import { fieldNameProblem } from "./names.js";
import { entries, isInteger, type Entry, type Node, type Source } from "./source.js";
import { didYouMean, suggest } from "../suggest.js";
import { checkValue } from "./values.js";

/** Unknown types that are not typos but a different idea, with what to write instead. */
const TYPE_HINTS: Record<string, string> = {
  enum: `; for a fixed set of values write "type": "string" with "enum": ["a", "b"]`,
  null: `; fields cannot be null: leave the field out instead (inputs are optional by default, outputs with "required": false)`,
};

type FieldMapKind = "input_schema" | "output_schema" | "properties";

/**
 * How deep fields may nest: a field of input_schema/output_schema is level 1, each field of its "properties"
 * or its "items" one more. Measured (TypeScript 5.9): tsc gives up on the generated validators at 50 nested
 * objects ("TS2321: Excessive stack depth comparing types"; 100 when objects and arrays alternate), and
 * create's $schema edit of the manifest (jsonc-parser's formatter) crashes at 49. 32 stays clear of both,
 * and is far deeper than any schema written by hand.
 */
export const MAX_FIELD_DEPTH = 32;

/** `depth`: the level of this map's fields (1 for input_schema and output_schema). */
export function validateFieldMap(src: Source, node: Node, path: PathSegment[], mode: SchemaMode, kind: FieldMapKind, depth = 1): void {
  if (node.type !== "object") {
    src.report(node, path, `must be an object mapping field names to field descriptors, found ${src.describe(node)}`);
    return;
  }
  const fields = entries(node);
  // People who know JSON Schema often write one here; say so instead of reporting "type" and "properties" as fields.
  const typeEntry = fields.find((f) => f.key === "type");
  if (typeEntry?.value.value === "object" && fields.some((f) => f.key === "properties" && f.value.type === "object")) {
    src.report(
      node,
      path,
      `${kind} maps field names directly to descriptors; it is not a JSON Schema: move the entries of "properties" up one level`,
    );
    return;
  }
  if (fields.length === 0 && kind === "output_schema") {
    src.report(node, path, `declare at least one output field, e.g. "result": { "type": "string" }`);
  }
  if (fields.length === 0 && kind === "properties") {
    src.report(node, path, `declare at least one property, or remove "properties" to accept an object with any keys`);
  }
  for (const field of fields) {
    const problem = fieldNameProblem(field.key);
    if (problem !== undefined) src.report(field.keyNode, [...path, field.key], problem);
    validateDescriptor(src, field.value, [...path, field.key], mode, false, depth);
  }
}

function validateDescriptor(src: Source, node: Node, path: PathSegment[], mode: SchemaMode, inItems: boolean, depth: number): void {
  if (depth > MAX_FIELD_DEPTH) return reportTooDeep(src, node, path);
  if (node.type !== "object") {
    const shorthand = node.type === "string" && (FIELD_TYPES as readonly string[]).includes(String(node.value));
    src.report(
      node,
      path,
      shorthand
        ? `must be a field descriptor object, found ${src.describe(node)}; write { "type": ${src.sourceOf(node)} }`
        : `must be a field descriptor object such as { "type": "string" }, found ${src.describe(node)}`,
    );
    return;
  }
  const before = src.problems.length;
  const keywords = new Map<DescriptorKeyword, Entry>();
  let typeMisspelled = false;
  for (const entry of entries(node)) {
    if ((DESCRIPTOR_KEYWORDS as readonly string[]).includes(entry.key)) keywords.set(entry.key as DescriptorKeyword, entry);
    else {
      const match = suggest(entry.key, DESCRIPTOR_KEYWORDS, KEYWORD_ALIASES);
      if (match === "type") typeMisspelled = true;
      const hint = match !== undefined ? `; did you mean "${match}"?` : `; allowed keywords: ${DESCRIPTOR_KEYWORDS.join(", ")}`;
      src.report(entry.keyNode, [...path, entry.key], `unknown keyword "${entry.key}"${hint}`);
    }
  }

  // A misspelled "type" was just reported with a suggestion; do not also call it missing.
  const type = typeMisspelled ? undefined : checkType(src, node, keywords.get("type"), path);
  for (const [keyword, entry] of keywords) {
    if (keyword === "type") continue;
    const rule = APPLIES_TO[keyword];
    if (type !== undefined && rule !== undefined && !rule.types.includes(type)) {
      const instead = rule.instead?.[type];
      src.report(
        entry.keyNode,
        [...path, keyword],
        `"${keyword}" only applies to ${listTypes(rule.types)} fields, not ${type}` +
          (instead === undefined ? "; remove it" : `; use "${instead}" for ${type} fields`),
      );
      continue;
    }
    checkKeyword(src, keyword, entry, [...path, keyword], type, mode, inItems, depth);
  }
  if (type === "array" && !keywords.has("items")) {
    src.report(node, path, `an array field needs "items" to describe its elements, e.g. "items": { "type": "string" }`);
  }
  checkRange(src, keywords, path, "minimum", "maximum");
  checkRange(src, keywords, path, "minLength", "maxLength");
  checkRange(src, keywords, path, "minItems", "maxItems");

  // Only a descriptor without problems has a meaningful schema to check default/examples against.
  if (type !== undefined && src.problems.length === before) checkSampleValues(src, node, keywords, path, mode);
}

/** The first field past MAX_FIELD_DEPTH, reported once: nothing below it is checked (or generated). */
function reportTooDeep(src: Source, node: Node, path: PathSegment[]): void {
  const [, capability, schema] = path; // capabilities.<name>.<input_schema|output_schema>... (validate.ts)
  src.report(
    node,
    path,
    `capability "${String(capability)}": ${String(schema)} nests fields more than ${MAX_FIELD_DEPTH} levels deep (the limit: its TypeScript types could not be type-checked much deeper); flatten it, or declare the deeper part as { "type": "object" } without "properties" (an object with any keys)`,
  );
}

function checkType(src: Source, node: Node, entry: Entry | undefined, path: PathSegment[]): FieldType | undefined {
  const allowed = `allowed types: ${FIELD_TYPES.join(", ")}`;
  if (entry === undefined) {
    src.report(node, path, `missing required keyword "type" (${allowed})`);
    return undefined;
  }
  const value = entry.value;
  if (value.type !== "string") {
    src.report(value, [...path, "type"], `must be a string, found ${src.describe(value)} (${allowed})`);
    return undefined;
  }
  const name = String(value.value);
  if ((FIELD_TYPES as readonly string[]).includes(name)) return name as FieldType;
  const hint = Object.hasOwn(TYPE_HINTS, name) ? (TYPE_HINTS[name] ?? "") : didYouMean(name, FIELD_TYPES, TYPE_ALIASES);
  src.report(value, [...path, "type"], `unknown type "${name}"${hint} (${allowed})`);
  return undefined;
}

function checkKeyword(
  src: Source,
  keyword: DescriptorKeyword,
  { keyNode, value }: Entry,
  path: PathSegment[],
  type: FieldType | undefined,
  mode: SchemaMode,
  inItems: boolean,
  depth: number,
): void {
  const mustBe = (what: string) => src.report(value, path, `must be ${what}, found ${src.describe(value)}`);
  switch (keyword) {
    case "required":
      if (inItems) src.report(keyNode, path, `"required" has no meaning inside "items" (array elements are always present); remove it`);
      else if (value.type !== "boolean") mustBe("true or false");
      return;
    case "description":
      if (value.type !== "string") mustBe("a string");
      return;
    case "enum":
      checkEnum(src, value, path, type);
      return;
    case "examples":
      if (value.type !== "array") mustBe("an array of example values");
      return;
    case "minimum":
    case "maximum":
      if (value.type !== "number") mustBe("a number");
      return;
    case "minLength":
    case "maxLength":
    case "minItems":
    case "maxItems":
      if (!isInteger(value) || Number(value.value) < 0) mustBe("a non-negative integer");
      return;
    case "pattern":
      if (value.type !== "string") mustBe("a string holding a regular expression");
      else checkPattern(src, value, path);
      return;
    case "format":
      if (value.type !== "string") mustBe("a string");
      else if (!(STRING_FORMATS as readonly string[]).includes(String(value.value))) {
        const name = String(value.value);
        const hint = didYouMean(name, STRING_FORMATS, FORMAT_ALIASES);
        src.report(value, path, `unknown format "${name}"${hint} (allowed formats: ${STRING_FORMATS.join(", ")})`);
      }
      return;
    case "items":
      validateDescriptor(src, value, path, mode, true, depth + 1);
      return;
    case "properties":
      validateFieldMap(src, value, path, mode, "properties", depth + 1);
      return;
    case "type":
    case "default":
      return; // type is checked first; default is checked once the whole descriptor is known to be valid
  }
}

function checkEnum(src: Source, node: Node, path: PathSegment[], type: FieldType | undefined): void {
  if (node.type !== "array" || (node.children ?? []).length === 0) {
    src.report(node, path, `must be a non-empty array of allowed values, found ${node.type === "array" ? "an empty array" : src.describe(node)}`);
    return;
  }
  const seen = new Map<string, number>();
  (node.children ?? []).forEach((item, index) => {
    const at = [...path, index];
    if (!["string", "number", "boolean"].includes(item.type)) {
      src.report(item, at, `enum values must be strings, numbers or booleans, found ${src.describe(item)}`);
      return;
    }
    if (type !== undefined && !matchesType(item, type)) {
      src.report(item, at, `enum value must be ${withArticle(type)} like the field, found ${src.describe(item)}`);
      return;
    }
    const key = `${item.type}:${String(item.value)}`;
    const first = seen.get(key);
    if (first !== undefined) src.report(item, at, `enum value ${src.sourceOf(item)} is listed twice (first at index ${first})`);
    else seen.set(key, index);
  });
}

function checkPattern(src: Source, node: Node, path: PathSegment[]): void {
  try {
    // The `u` flag is what Ajv uses at runtime, and it is stricter than plain RegExp (e.g. stray escapes).
    new RegExp(String(node.value), "u");
  } catch (error) {
    const reason = (error as Error).message.replace(/^Invalid regular expression: \/.*\/u?: /s, "");
    src.report(node, path, `pattern is not a valid regular expression (with the "u" flag): ${reason}`);
  }
}

/** minimum <= maximum and friends, reported at the lower bound. */
function checkRange(src: Source, keywords: Map<DescriptorKeyword, Entry>, path: PathSegment[], low: DescriptorKeyword, high: DescriptorKeyword): void {
  const lowNode = keywords.get(low)?.value;
  const highNode = keywords.get(high)?.value;
  if (lowNode?.type !== "number" || highNode?.type !== "number") return;
  if (Number(lowNode.value) > Number(highNode.value)) {
    src.report(lowNode, [...path, low], `${low} (${src.sourceOf(lowNode)}) is greater than ${high} (${src.sourceOf(highNode)}), so no value could match`);
  }
}

function checkSampleValues(src: Source, node: Node, keywords: Map<DescriptorKeyword, Entry>, path: PathSegment[], mode: SchemaMode): void {
  const defaultEntry = keywords.get("default");
  const examplesEntry = keywords.get("examples");
  if (defaultEntry === undefined && examplesEntry === undefined) return;
  const { default: _default, examples: _examples, ...rest } = src.valueOf(node) as FieldDescriptor;
  const schema = fieldToJsonSchema(rest, mode);
  const check = (valueNode: Node, at: PathSegment[], label: string) => {
    const mismatch = checkValue(schema, src.valueOf(valueNode));
    if (mismatch === undefined) return;
    src.report(nodeAt(valueNode, mismatch.at), [...at, ...mismatch.at], `${label} does not match the field: ${mismatch.message}`);
  };
  if (defaultEntry !== undefined) check(defaultEntry.value, [...path, "default"], "default");
  (examplesEntry?.value.children ?? []).forEach((example, index) => check(example, [...path, "examples", index], "example"));
}

/** The node inside `root` at `segments`, or the deepest one that exists. */
function nodeAt(root: Node, segments: PathSegment[]): Node {
  let current = root;
  for (const segment of segments) {
    const next =
      typeof segment === "number"
        ? current.children?.[segment]
        : entries(current).find((e) => e.key === segment)?.value;
    if (next === undefined) return current;
    current = next;
  }
  return current;
}

function matchesType(node: Node, type: FieldType): boolean {
  if (type === "integer") return isInteger(node);
  return node.type === type;
}

function withArticle(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

function listTypes(types: readonly string[]): string {
  return types.length <= 1 ? types.join("") : `${types.slice(0, -1).join(", ")} and ${types[types.length - 1]}`;
}
