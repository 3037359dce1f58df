// src/generate/type-text.ts writes the interfaces json-schema-to-typescript 16 writes, without that package:
// the package itself is the oracle here, with the options the generators always used (the project's types:
// maxItems 20; the client generator's: maxItems -1), on the handler's view of each input schema (defaults
// make fields required) and on each output schema.
import { compile } from "json-schema-to-typescript";
import { describe, expect, it } from "vitest";
import { handlerView, toInterface } from "../../src/generate/types.js";
import { interfaceText } from "../../src/generate/type-text.js";
import { parseManifest, type JsonSchema } from "../../src/manifest/index.js";
import { fixtureManifests, stressManifests } from "./stress-manifests.js";

/** What src/generate/types.ts toInterface() did with json-schema-to-typescript. */
async function oracle(
  schema: JsonSchema,
  name: string,
  options: { maxItems?: number } = {},
): Promise<string> {
  const code = await compile({ ...schema, title: name }, name, {
    bannerComment: "",
    format: false,
    declareExternallyReferenced: true,
    strictIndexSignatures: true,
    unknownAny: true,
    ...options,
  });
  return code.replace(
    /^(export (?:interface|type) )[A-Za-z_$][\w$]*/m,
    (_, head: string) => head + name,
  );
}

describe.each([...fixtureManifests(), ...stressManifests()])("interfaces for %s", (_name, text) => {
  const model = parseManifest(text, "agent.json");
  const cases = model.capabilities.flatMap((c): Array<[JsonSchema, string]> => [
    [handlerView(c.inputSchema), `${c.typeName}Input`],
    [c.outputSchema, `${c.typeName}Output`],
    [c.inputSchema, `${c.typeName}Input`],
  ]);

  it("are json-schema-to-typescript's, with maxItems 20 (project types)", async () => {
    for (const [schema, name] of cases)
      expect(interfaceText(schema, name), name).toBe(await oracle(schema, name));
  });

  it("are json-schema-to-typescript's, with maxItems -1 (client types, through toInterface)", async () => {
    for (const [schema, name] of cases) {
      expect(await toInterface(schema, name, { maxItems: -1 }), name).toBe(
        await oracle(schema, name, { maxItems: -1 }),
      );
    }
  });
});
