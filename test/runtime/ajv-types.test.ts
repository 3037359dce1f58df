// The runtime's inputAjv and outputAjv are typed LazyAjv (templates/runtime/ajv.ts): Ajv's own members
// and one `compile` signature instead of Ajv's five overloads, so a project's typecheck does not weigh
// JSONSchemaType and the JTD types on every generated validator. These checks fail to compile
// (npm run typecheck) or fail here when a real Ajv no longer fits that type, or the lazy one stops
// behaving as the real one.
import { Ajv } from "ajv";
import { expect, it } from "vitest";
import { inputAjv, outputAjv, type LazyAjv } from "../../templates/runtime/ajv.js";

const schema = {
  type: "object",
  properties: { text: { type: "string" }, n: { type: "integer", default: 5 } },
  required: ["text"],
  additionalProperties: false,
};

it("a real Ajv instance fits LazyAjv, and the lazy instances validate as a real one does", () => {
  // Compile-time: fails `npm run typecheck` if Ajv's compile (or any other member) no longer fits.
  const real: LazyAjv = new Ajv({ allErrors: true, strict: true });
  const fromReal = real.compile<{ text: string; n?: number }>(schema);
  const fromLazy = inputAjv.compile<{ text: string; n?: number }>(schema);
  for (const validate of [fromReal, fromLazy]) {
    const data: unknown = { text: "hi" };
    expect(validate(data)).toBe(true);
    if (validate(data)) expect(data.text).toBe("hi"); // the type guard narrows to the declared type
    expect(validate({ n: 1 })).toBe(false);
    expect(validate.errors?.[0]?.keyword).toBe("required");
  }
  // The lazy instances keep Ajv's other members (here the real instance's validate and getSchema).
  expect(outputAjv.validate({ type: "string" }, "x")).toBe(true);
  expect(outputAjv.validate({ type: "string" }, 1)).toBe(false);
});
