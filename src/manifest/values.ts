/**
 * Checks `default` and `examples` values with Ajv against the converted field schema: the same engine (and the
 * same formats) that validates real requests at runtime, so a default that passes here passes there. A value
 * that conforms() (Ajv's semantics, without compiling a validator) needs no Ajv at all; Ajv is loaded and
 * asked only about the others, and words the mismatch.
 */
import { createRequire } from "node:module";
import type { Ajv, ErrorObject } from "ajv";
import { conforms } from "./conforms.js";
import type { PathSegment } from "./errors.js";
import type { JsonSchema } from "./model.js";

let ajv: Ajv | undefined;

function engine(): Ajv {
  if (ajv === undefined) {
    // CommonJS packages, required on demand: manifests whose values all conform never load them.
    const require = createRequire(import.meta.url);
    const { Ajv: AjvClass } = require("ajv") as typeof import("ajv");
    const addFormats = require("ajv-formats") as (ajv: Ajv) => Ajv;
    // allErrors off: one precise reason per bad value reads better than a cascade.
    ajv = new AjvClass({ allErrors: false, strict: true });
    addFormats(ajv);
  }
  return ajv;
}

export interface ValueMismatch {
  /** Location inside the checked value, e.g. ["options", 0]. */
  at: PathSegment[];
  message: string;
}

/** undefined when `value` matches `schema`. */
export function checkValue(schema: JsonSchema, value: unknown): ValueMismatch | undefined {
  if (conforms(schema, value)) return undefined;
  const ajv = engine();
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    return { at: [], message: `cannot be checked: ${(error as Error).message}` };
  } finally {
    // Schemas are compiled once per manifest value; do not let the cache grow across manifests.
    ajv.removeSchema(schema);
  }
  if (validate(value)) return undefined;
  const error = validate.errors?.[0];
  if (error === undefined) return { at: [], message: "does not match" };
  return { at: pointerSegments(error.instancePath, value), message: explain(error) };
}

/** "/options/0" -> ["options", 0] (numbers where the value is an array, so paths print as [0]). */
function pointerSegments(pointer: string, root: unknown): PathSegment[] {
  if (pointer === "") return [];
  const segments: PathSegment[] = [];
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const segment: PathSegment = Array.isArray(current) ? Number(key) : key;
    segments.push(segment);
    current = current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined;
  }
  return segments;
}

/** Ajv's terse messages, rephrased as sentences a manifest author understands. */
function explain(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "type":
      return `must be ${article(String(p.type))}`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "minimum":
      return `must be at least ${String(p.limit)}`;
    case "maximum":
      return `must be at most ${String(p.limit)}`;
    case "minLength":
      return `must be at least ${String(p.limit)} characters long`;
    case "maxLength":
      return `must be at most ${String(p.limit)} characters long`;
    case "minItems":
      return `must have at least ${String(p.limit)} items`;
    case "maxItems":
      return `must have at most ${String(p.limit)} items`;
    case "pattern":
      return `must match the pattern ${JSON.stringify(p.pattern)}`;
    case "format":
      return `must be a valid "${String(p.format)}"`;
    case "required":
      return `is missing the required property "${String(p.missingProperty)}"`;
    case "additionalProperties":
      return `has the property "${String(p.additionalProperty)}", which the field does not declare`;
    default:
      return error.message ?? "does not match";
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
