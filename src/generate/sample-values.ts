import { createRequire } from "node:module";
import type { Ajv } from "ajv";
import { conforms } from "../manifest/conforms.js";
import type { JsonSchema } from "../manifest/model.js";
import { shellQuote } from "../shell-quote.js";

/** Values that satisfy common string formats. */
const FORMAT_SAMPLES: Record<string, string> = {
  date: "2025-01-31",
  time: "12:00:00Z",
  "date-time": "2025-01-31T12:00:00Z",
  "iso-time": "12:00:00Z",
  "iso-date-time": "2025-01-31T12:00:00Z",
  duration: "P1D",
  uri: "https://example.com",
  "uri-reference": "https://example.com",
  "uri-template": "https://example.com/{id}",
  url: "https://example.com",
  email: "user@example.com",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  regex: "^a+$",
  uuid: "00000000-0000-4000-8000-000000000000",
  "json-pointer": "/a",
  "relative-json-pointer": "0",
  byte: "ZXhhbXBsZQ==",
  int32: "1",
  int64: "1",
  float: "1.5",
  double: "1.5",
  password: "example",
  binary: "example",
};

/** Strings tried, in order, against a `pattern` that "example" does not match. */
const PATTERN_CANDIDATES = [
  "example",
  "a",
  "A",
  "0",
  "1",
  "abc",
  "ABC",
  "abc123",
  "a1",
  "x-1",
  "2025-01-31",
  "user@example.com",
  "https://example.com",
  "en",
  "EN",
  "USD",
  "0x0000000000000000000000000000000000000000",
];

export interface Sample {
  value: unknown;
  /** Why the value does not satisfy the schema (empty when it does). */
  problems: string[];
}

/**
 * A small value that satisfies `schema`: `examples[0]`, then `default`, then the first `enum` value, then a
 * type-based value within the declared bounds. `minimal` keeps only required properties (for inputs).
 */
export function sampleValue(schema: JsonSchema, minimal: boolean): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case "string":
      return sampleString(schema);
    case "number":
    case "integer":
      return sampleNumber(schema);
    case "boolean":
      return false;
    case "array": {
      const count = Math.max(Number(schema.minItems ?? 0), minimal ? 0 : 1);
      const items = (schema.items ?? {}) as JsonSchema;
      return Array.from({ length: Math.min(count, Number(schema.maxItems ?? count)) }, () =>
        sampleValue(items, minimal),
      );
    }
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(properties)) {
        if (!minimal || required.has(key)) out[key] = sampleValue(value, minimal);
      }
      return out;
    }
    default:
      return null;
  }
}

function sampleString(schema: JsonSchema): string {
  const format = typeof schema.format === "string" ? FORMAT_SAMPLES[schema.format] : undefined;
  if (format !== undefined) return format;
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  const fit = (s: string) => s.padEnd(min, s.slice(-1) || "x").slice(0, max);
  if (typeof schema.pattern === "string") {
    const re = new RegExp(schema.pattern, "u");
    const hit = PATTERN_CANDIDATES.map(fit).find((candidate) => re.test(candidate));
    if (hit !== undefined) return hit;
  }
  return fit("example");
}

function sampleNumber(schema: JsonSchema): number {
  const min = typeof schema.minimum === "number" ? schema.minimum : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  let n = min ?? (max !== undefined ? Math.min(max, 1) : 1);
  if (schema.type === "integer") n = Math.ceil(n);
  return n;
}

let checker: Ajv | undefined;

/**
 * A sample checked against the schema with the same Ajv options projects use for outputs. Samples are
 * usually valid by construction, which conforms() confirms without Ajv; Ajv (loaded only then) checks the
 * others and words their problems.
 */
export function checkedSample(schema: JsonSchema, minimal: boolean): Sample {
  const value = sampleValue(schema, minimal);
  if (conforms(schema, value)) return { value, problems: [] };
  if (checker === undefined) {
    // CommonJS packages, required on demand so a run with valid samples never loads them.
    const require = createRequire(import.meta.url);
    const { Ajv: AjvClass } = require("ajv") as typeof import("ajv");
    const addFormats = require("ajv-formats") as (ajv: Ajv) => Ajv;
    checker = addFormats(new AjvClass({ allErrors: true, strict: false }));
  }
  const validate = checker.compile(schema);
  const ok = validate(value);
  const problems = ok
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`);
  return { value, problems };
}

/**
 * The `--input name=value` words of `call` for the required fields of an input schema, with sample values
 * that satisfy it (an object or array as JSON, as call reads it), quoted for sh.
 */
export function callInputWords(inputSchema: JsonSchema): string[] {
  const input = sampleValue(inputSchema, true) as Record<string, unknown>;
  const required = new Set((inputSchema.required as string[] | undefined) ?? []);
  return Object.entries(input)
    .filter(([name]) => required.has(name))
    .map(([name, value]) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      return `--input ${shellQuote(`${name}=${text}`)}`;
    });
}
