/**
 * schema/agent.schema.json (editor hover docs and completion) must agree with the validator: every valid
 * fixture passes it, and every invalid fixture fails it unless the problem is one JSON Schema cannot express.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import ajvFormats from "ajv-formats";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { FIELD_TYPES, manifestJsonSchemaPath, STRING_FORMATS } from "../../src/manifest/index.js";
import { RESERVED_PROPERTY_NAMES, WINDOWS_RESERVED_NAMES } from "../../src/manifest/names.js";

const root = fileURLToPath(new URL("../../fixtures/manifests/", import.meta.url));
const jsonFiles = (dir: string) => readdirSync(join(root, dir)).filter((f) => f.endsWith(".json")).sort();
const read = (dir: string, file: string): unknown => JSON.parse(readFileSync(join(root, dir, file), "utf8"));

/** Not JSON at all, so there is nothing to hand to the schema. */
const UNPARSEABLE = [
  "empty-file.json",
  "json-comment.json",
  "json-single-quotes.json",
  "json-trailing-comma.json",
  "json-truncated.json",
  "json-text-after-end.json",
  "json-string-line-break.json",
];
/**
 * Valid for the schema, rejected by the validator: duplicate keys (JSON.parse keeps the last), case-fold and
 * type-name collisions, values checked against their own field (default/examples), regex compilation and
 * min > max comparisons. Kept explicit so a new fixture has to be classified on purpose.
 */
const SCHEMA_BLIND = [
  "capability-names-case-fold.json",
  "capability-names-type-collision.json",
  "default-nested-mismatch.json",
  "default-type-mismatch.json",
  "duplicate-json-keys.json",
  "minimum-greater-than-maximum.json",
  "pattern-invalid.json",
];

const schemaText = readFileSync(manifestJsonSchemaPath, "utf8");
const schema = JSON.parse(schemaText) as Record<string, unknown>;
// Ajv defaults (strictSchema on, strictRequired off): how the generated project and most tools compile it.
// Strict-mode warnings are collected so the schema stays warning-free.
const warnings: unknown[] = [];
const ajv = new Ajv({ allErrors: true, logger: { log: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: console.error } });
ajvFormats.default(ajv);
const validate = ajv.compile(schema);

describe("schema/agent.schema.json", () => {
  it("compiles without strict-mode warnings", () => {
    expect(warnings).toEqual([]);
  });

  it("is a draft-07 schema with an $id", () => {
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(typeof schema.$id).toBe("string");
  });

  it.each(jsonFiles("valid"))("accepts valid/%s", (file) => {
    const ok = validate(read("valid", file));
    expect(ok, JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  const structural = jsonFiles("invalid").filter((f) => !UNPARSEABLE.includes(f) && !SCHEMA_BLIND.includes(f));
  it.each(structural)("rejects invalid/%s", (file) => {
    expect(validate(read("invalid", file))).toBe(false);
  });

  it.each(SCHEMA_BLIND)("cannot see the problem in invalid/%s (list is accurate)", (file) => {
    const ok = validate(read("invalid", file));
    expect(ok, JSON.stringify(validate.errors, null, 2)).toBe(true);
  });

  it("lists only existing fixtures", () => {
    const all = jsonFiles("invalid");
    for (const file of [...UNPARSEABLE, ...SCHEMA_BLIND]) expect(all).toContain(file);
  });

  it("has the same field types and formats as the validator", () => {
    const descriptor = (schema.definitions as Record<string, { properties: Record<string, { enum: string[] }> }>).descriptor;
    expect(descriptor?.properties.type?.enum).toEqual([...FIELD_TYPES]);
    expect(descriptor?.properties.format?.enum).toEqual([...STRING_FORMATS]);
  });

  it("allows exactly ajv-formats' string formats", () => {
    // Formats with `type: "number"` (int32, float, ...) do not apply to string fields.
    const stringFormats = Object.entries(fullFormats)
      .filter(([, format]) => !(typeof format === "object" && "type" in format && format.type === "number"))
      .map(([name]) => name);
    expect([...STRING_FORMATS].sort()).toEqual(stringFormats.sort());
  });

  it("rejects every reserved capability name in any letter case", () => {
    const manifest = (name: string) => ({
      name: "a",
      version: "1.0.0",
      capabilities: {
        [name]: { pricing: { model: "per_job", amount: "1", currency: "USDC" }, input_schema: {}, output_schema: { x: { type: "string" } } },
      },
    });
    const names = [...RESERVED_PROPERTY_NAMES, ...WINDOWS_RESERVED_NAMES].filter((n) => /^[a-z]/i.test(n));
    for (const name of names) {
      for (const variant of [name, name.toUpperCase(), name.charAt(0).toUpperCase() + name.slice(1)]) {
        expect(validate(manifest(variant)), variant).toBe(false);
      }
    }
    for (const fine of ["consume", "context", "com10", "auxiliary", "lpt", "valueOfItems"]) {
      expect(validate(manifest(fine)), fine).toBe(true);
    }
  });
});
