/**
 * A quick check that a JSON value satisfies one of our field schemas (src/manifest/json-schema.ts), so the
 * common case needs no Ajv at all: compiling a validator per schema just to confirm a valid value cost more
 * than everything else `generate` does. It follows Ajv's own semantics for each keyword those schemas use
 * (type, enum, minimum, maximum, minLength/maxLength in code points, pattern with the "u" flag, format with
 * ajv-formats' full definitions, items, minItems, maxItems, properties, required, additionalProperties: false).
 * It only ever answers "valid" when Ajv would: for anything else (a failure, or a schema it does not know)
 * it answers false and the caller asks Ajv, which also writes the error messages.
 */
import { createRequire } from "node:module";
import { DESCRIPTOR_KEYWORDS } from "./keywords.js";
import type { JsonSchema } from "./model.js";

type FormatDefinition =
  RegExp | ((value: string) => boolean) | { validate: RegExp | ((value: string) => boolean) };

let formats: Record<string, FormatDefinition> | undefined;

function formatDefinition(name: string): FormatDefinition | undefined {
  // ajv-formats' definitions alone (no Ajv): the very functions Ajv calls for the `format` keyword.
  formats ??= (
    createRequire(import.meta.url)("ajv-formats/dist/formats.js") as {
      fullFormats: Record<string, FormatDefinition>;
    }
  ).fullFormats;
  return Object.hasOwn(formats, name) ? formats[name] : undefined;
}

/**
 * The keywords of the schemas src/manifest/json-schema.ts makes: every descriptor keyword (`required` there is
 * the parent's list here), plus what the conversion adds (`additionalProperties`, and `title` from the type
 * generators). Any other keyword sends the value to Ajv.
 */
const KNOWN = new Set<string>([...DESCRIPTOR_KEYWORDS, "additionalProperties", "title"]);

const patterns = new Map<string, RegExp>();

/** Code points, as Ajv counts string lengths (ucs2length). */
function length(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    count++;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if ((next & 0xfc00) === 0xdc00) i++;
    }
  }
  return count;
}

function typeMatches(type: unknown, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return typeof value === "number" && !(value % 1) && !Number.isNaN(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return false;
  }
}

/** A bound keyword (minimum, maxLength...) is absent, or a number that `n` respects. */
function within(bound: unknown, n: number, side: "min" | "max"): boolean {
  if (bound === undefined) return true;
  return typeof bound === "number" && (side === "min" ? n >= bound : n <= bound);
}

/** True only when Ajv would accept `value` for `schema`; false means "ask Ajv". */
export function conforms(schema: JsonSchema, value: unknown): boolean {
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) return false;
  if (!typeMatches(schema.type, value)) return false;
  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum)) return false;
    if (typeof value === "object" && value !== null) return false;
    if (!schema.enum.some((e) => (typeof e !== "object" || e === null) && e === value))
      return false;
  }
  if (typeof value === "number") {
    if (!within(schema.minimum, value, "min") || !within(schema.maximum, value, "max"))
      return false;
  }
  if (typeof value === "string" && !stringConforms(schema, value)) return false;
  if (Array.isArray(value) && !arrayConforms(schema, value)) return false;
  if (typeMatches("object", value) && !objectConforms(schema, value as Record<string, unknown>))
    return false;
  return true;
}

/** minLength, maxLength (code points), pattern ("u" flag), format (ajv-formats' full definitions). */
function stringConforms(schema: JsonSchema, value: string): boolean {
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    const n = length(value);
    if (!within(schema.minLength, n, "min") || !within(schema.maxLength, n, "max")) return false;
  }
  if (schema.pattern !== undefined) {
    if (typeof schema.pattern !== "string") return false;
    let re = patterns.get(schema.pattern);
    if (re === undefined) {
      try {
        re = new RegExp(schema.pattern, "u");
      } catch {
        return false;
      }
      patterns.set(schema.pattern, re);
    }
    if (!re.test(value)) return false;
  }
  if (schema.format !== undefined) {
    const definition =
      typeof schema.format === "string" ? formatDefinition(schema.format) : undefined;
    if (definition === undefined) return false;
    const check =
      typeof definition === "object" && !(definition instanceof RegExp)
        ? definition.validate
        : definition;
    if (!(check instanceof RegExp ? check.test(value) : check(value))) return false;
  }
  return true;
}

/** minItems, maxItems, and items (one schema, checked on every element). */
function arrayConforms(schema: JsonSchema, value: unknown[]): boolean {
  if (
    !within(schema.minItems, value.length, "min") ||
    !within(schema.maxItems, value.length, "max")
  )
    return false;
  if (schema.items !== undefined) {
    if (typeof schema.items !== "object" || schema.items === null || Array.isArray(schema.items))
      return false;
    for (const item of value) if (!conforms(schema.items as JsonSchema, item)) return false;
  }
  return true;
}

/** properties, required, additionalProperties: false. */
function objectConforms(schema: JsonSchema, record: Record<string, unknown>): boolean {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties !== undefined) {
    if (typeof properties !== "object" || properties === null) return false;
    for (const key of Object.keys(properties)) {
      // Ajv looks properties up like `data[key]`, inherited ones included.
      const v = record[key];
      if (v !== undefined && !conforms(properties[key]!, v)) return false;
    }
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required)) return false;
    for (const key of schema.required)
      if (typeof key !== "string" || record[key] === undefined) return false;
  }
  if (schema.additionalProperties !== undefined) {
    if (schema.additionalProperties !== false) return false;
    for (const key of Object.keys(record))
      if (properties === undefined || !Object.hasOwn(properties, key)) return false;
  }
  return true;
}
