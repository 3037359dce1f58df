// The generated types and the registry must agree on every interface name, whatever the capability is called:
// json-schema-to-typescript "normalizes" names ("Get2faInput" -> "Get2FaInput"), which broke projects.
import { describe, expect, it } from "vitest";
import { generateCode } from "../../src/generate/index.js";
import { parseManifest } from "../../src/manifest/index.js";

const capability = {
  pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
  input_schema: { a: { type: "string" } },
  output_schema: { b: { type: "string" } },
};

describe("generated type names", () => {
  it("are the names the registry imports, for names with digits, underscores and case changes", async () => {
    const names = ["get2fa", "v2_to_v3", "x2y", "parse-HTML5doc"];
    const model = parseManifest(
      JSON.stringify({
        name: "a",
        version: "1.0.0",
        capabilities: Object.fromEntries(names.map((n) => [n, capability])),
      }),
      "agent.json",
    );
    const { files } = await generateCode(model);
    const text = (path: string) => String(files.find((f) => f.path === path)!.contents);
    const declared = [...text("src/generated/types.ts").matchAll(/^export interface (\w+)/gm)].map(
      (m) => m[1],
    );
    const imported = /import type \{([^}]*)\} from "\.\/types\.js"/
      .exec(text("src/generated/registry.ts"))![1]!
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    expect(imported.length).toBe(names.length * 2);
    expect(declared.sort()).toEqual(imported.sort());
  });
});

describe("bounded arrays", () => {
  it("are plain arrays in an output (the handler builds it), tuples up to maxItems in an input", async () => {
    const list = { type: "array", items: { type: "string" }, maxItems: 3 };
    const model = parseManifest(
      JSON.stringify({
        name: "a",
        version: "1.0.0",
        capabilities: {
          translate: {
            ...capability,
            input_schema: { tags: list },
            output_schema: { alternatives: list },
          },
        },
      }),
      "agent.json",
    );
    const { files } = await generateCode(model);
    const types = String(files.find((f) => f.path === "src/generated/types.ts")!.contents);
    expect(types).toMatch(/TranslateOutput \{[^}]*\n {2}alternatives: string\[\];/);
    expect(types).toMatch(
      /tags\?: \[\] \| \[string\] \| \[string, string\] \| \[string, string, string\];/,
    );
  });
});
