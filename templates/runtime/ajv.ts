/**
 * The two JSON Schema validators used by src/generated/validators.ts, and a formatter that turns
 * Ajv's errors into one message a caller can act on ("input.max_words: must be integer").
 * Part of your project: edit freely.
 */
import { Ajv, type ErrorObject, type Options } from "ajv";
import formatsModule from "ajv-formats";
import { clip, oneLine, quote } from "./ops/text.js";

// ajv-formats is CommonJS; under Node's ESM interop its plugin function is also on `.default`.
const addFormats = formatsModule.default;

const shared: Options = {
  allErrors: true,
  // Strict mode rejects unknown keywords and odd schemas at startup, not at request time.
  // Annotation keywords (description, examples, default) are part of the standard and allowed.
  strict: true,
};

/** Input: coerce "5" to 5 where the schema says integer, fill in defaults. Mutates the data. */
export const inputAjv = new Ajv({ ...shared, coerceTypes: true, useDefaults: true });

/** Output: check the handler's result exactly as returned, never change it. */
export const outputAjv = new Ajv({ ...shared, coerceTypes: false, useDefaults: false });

addFormats(inputAjv);
addFormats(outputAjv);

/** At most this many distinct problems are listed; the rest are counted. */
const MAX_PROBLEMS = 10;
/** A caller's key or value echoed in a message is cut to about this many characters. */
const MAX_ECHO = 80;
/** A field path is cut to this many characters (deep nesting, many odd keys). */
const MAX_PATH = 160;
/** One problem's description is cut to this many characters (long enums, patterns). */
const MAX_DESCRIPTION = 240;
/** An enum lists at most this many allowed values. */
const MAX_ENUM_VALUES = 10;

/** JSON pointer "/tags/2" under root "input" -> "input.tags[2]". */
function fieldPath(root: string, pointer: string): string {
  if (pointer === "") return root;
  let path = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) path += `.${clip(key, MAX_ECHO)}`;
    else path += `[${quote(key, MAX_ECHO)}]`;
    if (path.length > MAX_PATH) break; // clipped below; no need to build the rest
  }
  return clip(path, MAX_PATH);
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `missing required field ${quote(params.missingProperty, MAX_ECHO)}`;
    case "additionalProperties":
      return `unknown field ${quote(params.additionalProperty, MAX_ECHO)}`;
    case "enum": {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      const listed = allowed.slice(0, MAX_ENUM_VALUES).map((v) => quote(v, MAX_ECHO));
      if (allowed.length > listed.length) listed.push(`… (${allowed.length - listed.length} more)`);
      return `must be one of ${listed.join(", ")}`;
    }
    default:
      return error.message ?? `fails ${quote(error.keyword, MAX_ECHO)}`;
  }
}

/**
 * One readable line for all of Ajv's errors, e.g. `input: missing required field "text"; input.n: must be integer`.
 * Bounded whatever the input: at most 10 distinct problems, then `; and N more problems`, and every
 * path and echoed key or value clipped, so a 900 KB key name or 5,000 unknown keys are not echoed whole.
 */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined, root = "input"): string {
  if (!errors || errors.length === 0) return `${root}: does not match the schema`;
  const problems = new Set<string>();
  for (const e of errors) {
    const line = `${fieldPath(root, e.instancePath)}: ${clip(describe(e), MAX_DESCRIPTION)}`;
    problems.add(oneLine(line));
  }
  const listed = [...take(problems, MAX_PROBLEMS)];
  const more = problems.size - listed.length;
  if (more > 0) listed.push(`and ${more} more ${more === 1 ? "problem" : "problems"}`);
  return listed.join("; ");
}

function* take<T>(items: Iterable<T>, count: number): Generator<T> {
  let n = 0;
  for (const item of items) {
    if (n++ >= count) return;
    yield item;
  }
}
