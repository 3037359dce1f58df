// conforms() lets the manifest check and the sampler skip Ajv for values that are valid: it must never call
// a value valid that Ajv (with the options they use) rejects, and it should accept the valid values the
// sampler makes.
import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { sampleValue } from "../../src/generate/sample-values.js";
import { conforms } from "../../src/manifest/conforms.js";
import { parseManifest, type JsonSchema } from "../../src/manifest/index.js";
import { fixtureManifests, stressManifests } from "../generate/stress-manifests.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/** Every schema node of a capability schema, with the path to it. */
function nodes(schema: JsonSchema, out: JsonSchema[] = []): JsonSchema[] {
  out.push(schema);
  for (const child of Object.values(
    (schema.properties as Record<string, JsonSchema> | undefined) ?? {},
  ))
    nodes(child, out);
  if (schema.items && typeof schema.items === "object") nodes(schema.items as JsonSchema, out);
  return out;
}

const VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  1,
  -1,
  0.5,
  2,
  1e21,
  "",
  "a",
  "example",
  "fast",
  "ABC-1234",
  "2025-01-31",
  "not a date",
  "user@example.com",
  "https://example.com",
  "00000000-0000-4000-8000-000000000000",
  "😀😀",
  [],
  [1],
  ["a", "b"],
  [[1, 2]],
  {},
  { text: "x" },
  { a: 1 },
  { toString: "x" },
  { result: "r", score: 0.5 },
];

describe("conforms", () => {
  const schemas = [...fixtureManifests(), ...stressManifests()].flatMap(([, text]) =>
    parseManifest(text, "agent.json").capabilities.flatMap((c) => [
      ...nodes(c.inputSchema),
      ...nodes(c.outputSchema),
    ]),
  );

  it("never accepts a value Ajv rejects", () => {
    for (const schema of schemas) {
      const validate = ajv.compile(schema);
      const candidates = [...VALUES, sampleValue(schema, true), sampleValue(schema, false)];
      for (const value of candidates) {
        if (conforms(schema, value))
          expect(validate(value), JSON.stringify({ schema, value })).toBe(true);
      }
    }
  });

  it("accepts the sampler's valid values without Ajv", () => {
    let valid = 0;
    let accepted = 0;
    for (const schema of schemas) {
      const validate = ajv.compile(schema);
      for (const value of [sampleValue(schema, true), sampleValue(schema, false)]) {
        if (!validate(value)) continue;
        valid++;
        if (conforms(schema, value)) accepted++;
      }
    }
    expect(accepted).toBe(valid);
  });
});
