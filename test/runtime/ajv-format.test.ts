import { describe, expect, it } from "vitest";
import { formatAjvErrors, inputAjv } from "../../templates/runtime/ajv.js";

const schema = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
  additionalProperties: false,
};

describe("formatAjvErrors bounds", () => {
  const validate = inputAjv.compile(schema);

  it("keeps the usual wording", () => {
    validate({ foo: 1 });
    const message = formatAjvErrors(validate.errors);
    expect(message).toBe('input: missing required field "text"; input: unknown field "foo"');
  });

  it("lists 10 of 5,000 unknown keys and counts the rest", () => {
    const data: Record<string, unknown> = { text: "a" };
    for (let i = 0; i < 5_000; i++) data[`k${i}`] = i;
    expect(validate(data)).toBe(false);
    const message = formatAjvErrors(validate.errors);
    expect(message.length).toBeLessThan(2_000);
    expect(message).toContain('input: unknown field "k0"');
    expect(message).toContain('input: unknown field "k9"');
    expect(message).not.toContain('"k10"');
    expect(message).toMatch(/; and 4990 more problems$/);
    expect(message).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
  });

  it("does not echo a 900 KB key name whole", () => {
    const key = "K".repeat(900_000);
    expect(validate({ text: "a", [key]: 1 })).toBe(false);
    const message = formatAjvErrors(validate.errors);
    expect(message.length).toBeLessThan(2_000);
    expect(message).toMatch(/^input: unknown field "K+… \(\d+ more characters\)$/);
  });

  it("clips long paths and keeps odd keys on one line", () => {
    const nested = inputAjv.compile({
      type: "object",
      additionalProperties: { type: "object", additionalProperties: { type: "integer" } },
    });
    const odd = "line\u2028break\nhere " + "w".repeat(900_000);
    expect(nested({ [odd]: { [odd]: "x" } })).toBe(false);
    const message = formatAjvErrors(nested.errors);
    expect(message.length).toBeLessThan(2_000);
    expect(message).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
    expect(message).toContain("must be integer");
  });

  it("says 1 more problem in the singular", () => {
    const data: Record<string, unknown> = { text: "a" };
    for (let i = 0; i < 11; i++) data[`k${i}`] = i;
    validate(data);
    expect(formatAjvErrors(validate.errors)).toMatch(/; and 1 more problem$/);
  });
});
