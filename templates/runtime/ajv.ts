/**
 * The two JSON Schema validators used by src/generated/validators.ts, and a formatter that turns
 * Ajv's errors into one message a caller can act on ("input.max_words: must be integer").
 *
 * Start-up stays flat in the number of capabilities: Ajv itself is loaded when the first validator
 * runs, and `inputAjv.compile(schema)` returns a validator that compiles its schema on first use
 * (once; later calls are Ajv's own compiled function). Production compiles every validator before
 * it takes a job (compileValidators, from createApp), so a schema Ajv refuses stops the start there;
 * dev mode compiles each one when its capability is first called.
 * Part of your project: edit freely.
 */
import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options, Schema, ValidateFunction } from "ajv";
import { clip, oneLine, quote } from "./ops/text.js";

// Ajv and ajv-formats are CommonJS: loaded synchronously, on first use, by require.
const require = createRequire(import.meta.url);

const shared: Options = {
  allErrors: true,
  // Strict mode rejects unknown keywords and odd schemas when a schema is compiled (see above).
  // Annotation keywords (description, examples, default) are part of the standard and allowed.
  strict: true,
};

/**
 * Ajv as lazyAjv gives it: Ajv's own members, and the one `compile` it has (a synchronous validator
 * of any schema). Ajv's own five `compile` overloads would make tsc weigh JSONSchemaType<T> and the JTD
 * types on every generated validator, a few hundred types each in every typecheck of the project.
 */
export interface LazyAjv extends Omit<Ajv, "compile"> {
  compile<T = unknown>(schema: Schema): ValidateFunction<T>;
}

/**
 * An Ajv instance created (with ajv-formats) on first use. `compile` returns a validator that compiles
 * on first use; everything else (addKeyword, addFormat, validate...) is the real instance's.
 */
function lazyAjv(options: Options): LazyAjv {
  // Typed LazyAjv from here on (a real Ajv fits it: test/runtime/ajv-types.test.ts), so that this file
  // does not call Ajv's overloaded compile either.
  let instance: LazyAjv | undefined;
  const real = (): LazyAjv => {
    if (!instance) {
      const { Ajv: AjvClass } = require("ajv") as { Ajv: new (options: Options) => LazyAjv };
      const addFormats = (require("ajv-formats") as { default: (ajv: LazyAjv) => unknown }).default;
      instance = new AjvClass(options);
      addFormats(instance);
    }
    return instance;
  };
  const compile = (schema: Schema) => lazyValidator(real, schema);
  return new Proxy({} as LazyAjv, {
    get(_target, property) {
      if (property === "compile") return compile;
      const value: unknown = Reflect.get(real(), property);
      return typeof value === "function" ? value.bind(real()) : value;
    },
    set: (_target, property, value) => Reflect.set(real(), property, value),
    has: (_target, property) => Reflect.has(real(), property),
  });
}

/** A ValidateFunction that compiles `schema` with `ajv()` on its first call (or first look at its compiled parts). */
function lazyValidator(ajv: () => LazyAjv, schema: Schema): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const real = (): ValidateFunction => (compiled ??= ajv().compile(schema));
  const validate = function (
    this: unknown,
    data: unknown,
    dataCxt?: Parameters<ValidateFunction>[1],
  ) {
    const fn = real();
    const valid = fn.call(this, data, dataCxt);
    validate.errors = fn.errors;
    return valid;
  } as ValidateFunction;
  validate.schema = schema;
  validate.errors = null;
  for (const part of ["schemaEnv", "source", "evaluated"] as const)
    Object.defineProperty(validate, part, { get: () => real()[part], enumerable: true });
  return validate;
}

/** Input: coerce "5" to 5 where the schema says integer, fill in defaults. Mutates the data. */
export const inputAjv: LazyAjv = lazyAjv({ ...shared, coerceTypes: true, useDefaults: true });

/** Output: check the handler's result exactly as returned, never change it. */
export const outputAjv: LazyAjv = lazyAjv({ ...shared, coerceTypes: false, useDefaults: false });

/**
 * Compiles every validator of these capabilities now (for a validator that compiles lazily, its
 * first use), so a schema Ajv refuses is reported up front: a list of `capability "x" input: why`.
 */
export function compileValidators(
  capabilities: Record<
    string,
    { validateInput: ValidateFunction; validateOutput: ValidateFunction }
  >,
): string[] {
  const problems: string[] = [];
  for (const [name, capability] of Object.entries(capabilities)) {
    for (const [side, validate] of [
      ["input", capability.validateInput],
      ["output", capability.validateOutput],
    ] as const) {
      try {
        void validate.schemaEnv; // compiles a lazy validator; a no-op for one Ajv compiled already
      } catch (err) {
        problems.push(
          `capability ${JSON.stringify(name)}: its ${side} schema does not compile: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }
  return problems;
}

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
