/**
 * A capability's input from the command line: `--input name=value` pairs typed by the declared field
 * types, on top of an optional JSON file, then checked locally with Ajv exactly as a create-agent
 * server checks it (templates/runtime/ajv.ts: allErrors, strict, coerceTypes, useDefaults, ajv-formats),
 * so a bad input is reported before anything is sent.
 */
import { readFile } from "node:fs/promises";
import { Ajv, type ErrorObject } from "ajv";
import ajvFormats from "ajv-formats";
import { didYouMean, type FieldDescriptor } from "../manifest/index.js";
import { CallError } from "./errors.js";
import type { ServiceCapability } from "./service.js";

/** The JSON object in `file` (`-` = standard input): the base input that `--input` values go on top of. */
export async function readInputFile(
  file: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Record<string, unknown>> {
  const where = file === "-" ? "standard input (--json -)" : `--json ${file}`;
  let text: string;
  try {
    text = file === "-" ? await readStream(stdin) : await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a folder, not a file"
          : (error as Error).message;
    throw new CallError("usage", `${where}: cannot read the input file: ${reason}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new CallError("usage", `${where}: not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new CallError(
      "usage",
      `${where}: the input must be a JSON object of field values, e.g. {"text": "hi"}, not ${describeJson(value)}`,
    );
  return value as Record<string, unknown>;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * `base` (a copy) with every `--input name=value` applied, each value typed by its field's declared type:
 * string as-is, number/integer via Number, boolean true/false, array/object as JSON.
 */
export function buildInput(
  capability: ServiceCapability,
  pairs: readonly string[],
  base: Record<string, unknown> = {},
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...base };
  const fields = capability.inputFields;
  const known = Object.keys(fields);
  const given = new Set<string>();
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0)
      throw new CallError(
        "usage",
        `--input "${pair}": write name=value, e.g. --input ${known[0] ?? "text"}=hello`,
      );
    const name = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const descriptor = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (descriptor === undefined)
      throw new CallError(
        "usage",
        `--input ${name}: "${capability.name}" has no input field "${name}" (its fields: ${known.join(", ") || "none"})${didYouMean(name, known)}`,
      );
    if (given.has(name))
      throw new CallError("usage", `--input ${name}: given more than once; give each field once`);
    given.add(name);
    Object.defineProperty(input, name, {
      value: typedValue(name, raw, descriptor),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return input;
}

function typedValue(name: string, raw: string, descriptor: FieldDescriptor): unknown {
  const at = `--input ${name}`;
  switch (descriptor.type) {
    case "number":
    case "integer": {
      const value = raw.trim() === "" ? Number.NaN : Number(raw);
      if (!Number.isFinite(value))
        throw new CallError(
          "usage",
          `${at}: "${raw}" is not a number, and field "${name}" is ${descriptor.type === "integer" ? "an integer" : "a number"}`,
        );
      return value;
    }
    case "boolean":
      if (raw === "true") return true;
      if (raw === "false") return false;
      throw new CallError(
        "usage",
        `${at}: "${raw}" is not a boolean; field "${name}" takes true or false`,
      );
    case "array":
    case "object": {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        const example = descriptor.type === "array" ? `'["a","b"]'` : `'{"key":"value"}'`;
        throw new CallError(
          "usage",
          `${at}: field "${name}" is ${descriptor.type === "array" ? "an array" : "an object"}, so its value is JSON, e.g. ${name}=${example}; "${raw}" is not valid JSON (${(error as Error).message})`,
        );
      }
      const isArray = Array.isArray(value);
      const isObject = typeof value === "object" && value !== null && !isArray;
      if (descriptor.type === "array" ? !isArray : !isObject)
        throw new CallError(
          "usage",
          `${at}: field "${name}" is ${descriptor.type === "array" ? "an array" : "an object"}, but the JSON given is ${describeJson(value)}`,
        );
      return value;
    }
    default:
      return raw;
  }
}

function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

let engine: Ajv | undefined;

/** The input validator's options, the same as the server's (templates/runtime/ajv.ts). */
function inputAjv(): Ajv {
  if (engine === undefined) {
    engine = new Ajv({ allErrors: true, strict: true, coerceTypes: true, useDefaults: true });
    // ajv-formats is CommonJS: Node hands us module.exports, whose `.default` is the plugin itself.
    ajvFormats.default(engine);
  }
  return engine;
}

/**
 * Every problem of `input` against the capability's input schema, each as `input.<field>: <problem>`;
 * empty when it is valid. Checks a copy: coercion and defaults do not change what is sent (the server
 * applies the same ones).
 */
export function inputProblems(capability: ServiceCapability, input: unknown): string[] {
  const ajv = inputAjv();
  let validate;
  try {
    validate = ajv.compile(capability.inputSchema);
  } catch (error) {
    throw new CallError(
      "service",
      `the input schema of "${capability.name}" cannot be compiled, so the input cannot be checked: ${(error as Error).message}`,
    );
  } finally {
    ajv.removeSchema(capability.inputSchema);
  }
  if (validate(structuredClone(input))) return [];
  const known = Object.keys(capability.inputFields);
  return [...new Set((validate.errors ?? []).map((error) => describeError(error, known)))];
}

/** One Ajv error as `input.<field>: <problem>`; `known` are the top-level field names. */
function describeError(error: ErrorObject, known: readonly string[]): string {
  const params = error.params as Record<string, unknown>;
  let path = fieldPath(error.instancePath);
  let problem: string;
  switch (error.keyword) {
    case "required":
      path = fieldPath(`${error.instancePath}/${String(params.missingProperty)}`);
      problem = "missing required field";
      break;
    case "additionalProperties":
      path = fieldPath(`${error.instancePath}/${String(params.additionalProperty)}`);
      problem =
        error.instancePath === ""
          ? `unknown field${didYouMean(String(params.additionalProperty), known)}`
          : "unknown field";
      break;
    case "enum": {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      problem = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`;
      break;
    }
    default:
      problem = error.message ?? `fails "${error.keyword}"`;
  }
  return `${path}: ${problem}`;
}

/** JSON pointer "/tags/2" -> "input.tags[2]". */
function fieldPath(pointer: string): string {
  let path = "input";
  if (pointer === "") return path;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) path += `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}
