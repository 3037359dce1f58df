/** The vocabulary of field descriptors: which keywords exist and which field types each one applies to. */
import { FIELD_TYPES, type FieldType } from "./model.js";

export const DESCRIPTOR_KEYWORDS = [
  "type",
  "required",
  "description",
  "enum",
  "default",
  "examples",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "items",
  "minItems",
  "maxItems",
  "properties",
] as const;
export type DescriptorKeyword = (typeof DESCRIPTOR_KEYWORDS)[number];

/** Keywords that only make sense for some types, with the keyword to use instead for other types. */
export const APPLIES_TO: Partial<Record<DescriptorKeyword, { types: readonly FieldType[]; instead?: Partial<Record<FieldType, string>> }>> = {
  enum: { types: ["string", "number", "integer", "boolean"] },
  minimum: { types: ["number", "integer"], instead: { string: "minLength", array: "minItems" } },
  maximum: { types: ["number", "integer"], instead: { string: "maxLength", array: "maxItems" } },
  minLength: { types: ["string"], instead: { array: "minItems", number: "minimum", integer: "minimum" } },
  maxLength: { types: ["string"], instead: { array: "maxItems", number: "maximum", integer: "maximum" } },
  pattern: { types: ["string"] },
  format: { types: ["string"] },
  items: { types: ["array"] },
  minItems: { types: ["array"], instead: { string: "minLength", number: "minimum", integer: "minimum" } },
  maxItems: { types: ["array"], instead: { string: "maxLength", number: "maximum", integer: "maximum" } },
  properties: { types: ["object"] },
};

/**
 * ajv-formats' string formats (its int32/int64/float/double formats apply to numbers and are left out).
 * A test keeps this list in sync with ajv-formats and with schema/agent.schema.json.
 */
export const STRING_FORMATS = [
  "date",
  "time",
  "date-time",
  "iso-time",
  "iso-date-time",
  "duration",
  "uri",
  "uri-reference",
  "uri-template",
  "url",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "regex",
  "uuid",
  "json-pointer",
  "json-pointer-uri-fragment",
  "relative-json-pointer",
  "byte",
  "password",
  "binary",
] as const;

export const TYPE_ALIASES: Record<string, FieldType> = {
  int: "integer",
  long: "integer",
  str: "string",
  text: "string",
  bool: "boolean",
  float: "number",
  double: "number",
  decimal: "number",
  list: "array",
  dict: "object",
  map: "object",
  record: "object",
};

export const KEYWORD_ALIASES: Record<string, DescriptorKeyword> = {
  min: "minimum",
  max: "maximum",
  regex: "pattern",
  props: "properties",
  choices: "enum",
  values: "enum",
  item: "items",
};

export const FORMAT_ALIASES: Record<string, string> = {
  datetime: "date-time",
  timestamp: "date-time",
  iso8601: "date-time",
  "e-mail": "email",
  link: "url",
  guid: "uuid",
  base64: "byte",
};

export { FIELD_TYPES };
