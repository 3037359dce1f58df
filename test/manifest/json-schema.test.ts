import { describe, expect, it } from "vitest";
import { toJsonSchema, type FieldDescriptor } from "../../src/manifest/index.js";

const fields: Record<string, FieldDescriptor> = {
  a: { type: "string", required: true },
  b: { type: "integer" },
  c: { type: "boolean", required: false },
};

describe("toJsonSchema", () => {
  it("input: only required: true fields are required", () => {
    expect(toJsonSchema(fields, "input")).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" }, c: { type: "boolean" } },
      required: ["a"],
      additionalProperties: false,
    });
  });

  it("output: every field is required unless required: false", () => {
    expect(toJsonSchema(fields, "output").required).toEqual(["a", "b"]);
  });

  it("an empty field map is a closed empty object", () => {
    expect(toJsonSchema({}, "input")).toEqual({ type: "object", properties: {}, required: [], additionalProperties: false });
  });

  it("nested objects follow the mode's required rule and are closed", () => {
    const nested: Record<string, FieldDescriptor> = {
      options: {
        type: "object",
        description: "opts",
        properties: { mode: { type: "string", required: true }, depth: { type: "integer" }, note: { type: "string", required: false } },
      },
    };
    expect(toJsonSchema(nested, "input").properties).toEqual({
      options: {
        type: "object",
        description: "opts",
        properties: { mode: { type: "string" }, depth: { type: "integer" }, note: { type: "string" } },
        required: ["mode"],
        additionalProperties: false,
      },
    });
    expect((toJsonSchema(nested, "output").properties as Record<string, { required: string[] }>).options?.required).toEqual(["mode", "depth"]);
  });

  it("arrays of objects convert items recursively and drop required", () => {
    const schema = toJsonSchema(
      {
        rows: {
          type: "array",
          minItems: 1,
          maxItems: 5,
          items: { type: "object", required: true, properties: { id: { type: "string" } } } as FieldDescriptor,
        },
      },
      "output",
    );
    expect(schema.properties).toEqual({
      rows: {
        type: "array",
        items: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false },
        minItems: 1,
        maxItems: 5,
      },
    });
  });

  it("an object without properties is free-form", () => {
    expect(toJsonSchema({ meta: { type: "object", description: "anything" } }, "input").properties).toEqual({
      meta: { type: "object", description: "anything" },
    });
  });

  it("maps every keyword 1:1 and never emits title", () => {
    const schema = toJsonSchema(
      {
        s: {
          type: "string",
          description: "d",
          enum: ["x", "y"],
          default: "x",
          examples: ["y"],
          minLength: 1,
          maxLength: 2,
          pattern: "^[xy]$",
          format: "regex",
        },
        n: { type: "number", minimum: 0, maximum: 1 },
      },
      "input",
    );
    expect(schema.properties).toEqual({
      s: { type: "string", description: "d", enum: ["x", "y"], default: "x", examples: ["y"], minLength: 1, maxLength: 2, pattern: "^[xy]$", format: "regex" },
      n: { type: "number", minimum: 0, maximum: 1 },
    });
    expect(JSON.stringify(schema)).not.toContain('"title"');
  });

  it("emits keys in a fixed order regardless of descriptor key order", () => {
    const a = toJsonSchema({ f: { maxLength: 3, pattern: "a", description: "x", type: "string", minLength: 1 } as FieldDescriptor }, "input");
    const b = toJsonSchema({ f: { type: "string", minLength: 1, description: "x", pattern: "a", maxLength: 3 } }, "input");
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(Object.keys((a.properties as Record<string, object>).f ?? {})).toEqual(["type", "description", "minLength", "maxLength", "pattern"]);
    expect(Object.keys(a)).toEqual(["type", "properties", "required", "additionalProperties"]);
  });

  it("does not alias the manifest's default values", () => {
    const descriptor: FieldDescriptor = { type: "object", default: { a: 1 } };
    const schema = toJsonSchema({ o: descriptor }, "input");
    ((schema.properties as Record<string, { default: { a: number } }>).o as { default: { a: number } }).default.a = 2;
    expect(descriptor.default).toEqual({ a: 1 });
  });
});
