/**
 * The two JSON Schema validators used by src/generated/validators.ts, and a formatter that turns
 * Ajv's errors into one message a caller can act on ("input.max_words: must be integer").
 * Part of your project: edit freely.
 */
import { Ajv, type ErrorObject, type Options } from "ajv";
import formatsModule from "ajv-formats";

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

/** JSON pointer "/tags/2" under root "input" -> "input.tags[2]". */
function fieldPath(root: string, pointer: string): string {
  if (pointer === "") return root;
  let path = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) path += `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `missing required field ${JSON.stringify(params.missingProperty)}`;
    case "additionalProperties":
      return `unknown field ${JSON.stringify(params.additionalProperty)}`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return error.message ?? `fails "${error.keyword}"`;
  }
}

/** One readable line for all of Ajv's errors, e.g. `input: missing required field "text"; input.n: must be integer`. */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined, root = "input"): string {
  if (!errors || errors.length === 0) return `${root}: does not match the schema`;
  const lines = errors.map((e) => `${fieldPath(root, e.instancePath)}: ${describe(e)}`);
  return [...new Set(lines)].join("; ");
}
