/**
 * Field descriptors -> draft-07 JSON Schema. The runtime validates requests/results with these schemas and the
 * generator derives TypeScript types from them, so both always agree with agent.json.
 * Keys are emitted in a fixed order so generated files are byte-stable.
 */
import type { FieldDescriptor, JsonSchema } from "./model.js";

export type SchemaMode = "input" | "output";

/** Keywords copied verbatim, in emission order. `items` and `properties` are converted recursively. */
const COPIED = ["type", "description", "enum", "default", "examples", "minimum", "maximum", "minLength", "maxLength", "pattern", "format"] as const;
const COPIED_ARRAY = ["minItems", "maxItems"] as const;

/**
 * A closed object schema for a field map. Input fields are optional unless `required: true`;
 * output fields are required unless `required: false` (a handler that promises a field must return it).
 */
export function toJsonSchema(fields: Record<string, FieldDescriptor>, mode: SchemaMode): JsonSchema {
  return { type: "object", ...objectBody(fields, mode) };
}

/** The schema of one field; `required` is a property of the parent object, so it never appears here. */
export function fieldToJsonSchema(descriptor: FieldDescriptor, mode: SchemaMode): JsonSchema {
  const schema: JsonSchema = {};
  for (const keyword of COPIED) {
    if (descriptor[keyword] !== undefined) schema[keyword] = clone(descriptor[keyword]);
  }
  if (descriptor.items !== undefined) schema.items = fieldToJsonSchema(descriptor.items, mode);
  for (const keyword of COPIED_ARRAY) {
    if (descriptor[keyword] !== undefined) schema[keyword] = descriptor[keyword];
  }
  // Without `properties` an object is free-form (any keys): emit only `type: "object"`.
  if (descriptor.properties !== undefined) Object.assign(schema, objectBody(descriptor.properties, mode));
  return schema;
}

function objectBody(fields: Record<string, FieldDescriptor>, mode: SchemaMode): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, descriptor] of Object.entries(fields)) {
    // defineProperty: a field literally named "__proto__" must stay an own key (validation forbids it, but be safe).
    Object.defineProperty(properties, name, {
      value: fieldToJsonSchema(descriptor, mode),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const isRequired = mode === "input" ? descriptor.required === true : descriptor.required !== false;
    if (isRequired) required.push(name);
  }
  return { properties, required, additionalProperties: false };
}

/** Deep copy so generated schemas never alias the manifest (callers may mutate either). */
function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
