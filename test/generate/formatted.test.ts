// `generate` writes every file already formatted, without running prettier (src/generate/print/). For each
// kind of file, over every manifest fixture and generated stress manifests, the emitted text must be
// exactly what prettier (the project's options, through src/generate/format.ts) makes of the file's source
// (the text the generator used to hand to prettier: the same bytes as before), and prettier must leave
// the emitted text unchanged.
import { describe, expect, it } from "vitest";
import { generateDiscovery } from "../../src/generate/discovery.js";
import { formatFile } from "../../src/generate/format.js";
import { generateHandlerStub, handlerPath } from "../../src/generate/handlers.js";
import { generateCode, printFile } from "../../src/generate/index.js";
import { capabilitySamples } from "../../src/generate/openapi.js";
import { generateRegistry } from "../../src/generate/registry.js";
import { generateSamples } from "../../src/generate/samples.js";
import type { SourceFile } from "../../src/generate/source-file.js";
import { generateTypes } from "../../src/generate/types.js";
import { generateValidators } from "../../src/generate/validators.js";
import { parseManifest, type AgentModel } from "../../src/manifest/index.js";
import { fixtureManifests, stressManifests } from "./stress-manifests.js";

const MANIFESTS = [...fixtureManifests(), ...stressManifests()];

function sourceFiles(model: AgentModel): Array<[string, SourceFile]> {
  const samples = capabilitySamples(model).samples;
  return [
    ["src/generated/types.ts", generateTypes(model)],
    ["src/generated/validators.ts", generateValidators(model)],
    ["src/generated/registry.ts", generateRegistry(model)],
    ["src/generated/samples.ts", generateSamples(model, samples)],
    ...model.capabilities.map((c): [string, SourceFile] => [
      handlerPath(c.name),
      generateHandlerStub(c),
    ]),
  ];
}

describe.each(MANIFESTS)("files generated for %s", (_name, text) => {
  const model = parseManifest(text, "agent.json");

  it("are laid out exactly as prettier lays out their source, which prettier leaves as it is", async () => {
    for (const [path, file] of sourceFiles(model)) {
      // Printed directly: none of these manifests needs the prettier fallback.
      const emitted = file.print();
      expect(emitted, path).toBe(await formatFile(path, file.source()));
      expect(await formatFile(path, emitted), path).toBe(emitted);
    }
  });

  it("include a discovery.ts that prettier leaves as it is", async () => {
    const { discoveryTs } = generateDiscovery(model);
    expect(await formatFile("discovery.ts", discoveryTs)).toBe(discoveryTs);
  });

  it("are what generateCode returns", async () => {
    const { files } = await generateCode(model);
    const byPath = new Map(files.map((f) => [f.path, f.contents]));
    for (const [path, file] of sourceFiles(model))
      expect(byPath.get(path), path).toBe(file.print());
  });
});

describe("text the printer does not measure exactly", () => {
  // Wide characters (CJK, emoji) have widths prettier looks up in Unicode tables: such a file is formatted by
  // prettier itself, so the output is still prettier's.
  const wide = JSON.stringify({
    name: "wide-agent",
    version: "1.0.0",
    description: "宽字符 🚀",
    capabilities: {
      translate: {
        description: "翻译 🚀",
        pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
        input_schema: {
          text: {
            type: "string",
            required: true,
            examples: ["你好，世界！这是一个很长的例子，用来测试宽字符的宽度计算是否正确无误。"],
          },
          lang: { type: "string", enum: ["中文", "日本語", "한국어", "emoji 🎉🎉🎉"] },
          extra: { type: "object", default: { ключ: 1, clé: [1, 2] } },
        },
        output_schema: { result: { type: "string", examples: ["😀".repeat(60)] } },
      },
    },
  });

  it("falls back to prettier, with the same result", async () => {
    const model = parseManifest(wide, "agent.json");
    for (const [path, file] of sourceFiles(model)) {
      const expected = await formatFile(path, file.source());
      expect(await printFile(path, file), path).toBe(expected);
      expect(await formatFile(path, expected), path).toBe(expected);
    }
    const { discoveryTs } = generateDiscovery(model);
    expect(await formatFile("discovery.ts", discoveryTs)).toBe(discoveryTs);
  });
});

describe("generateCode's existing option", () => {
  // A pattern the sampler cannot satisfy: warnings about samples and about the stub's placeholder.
  const odd = JSON.parse(stressManifests()[2]![1]) as { capabilities: Record<string, any> };
  odd.capabilities.odd = {
    pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
    input_schema: { code: { type: "string", required: true, pattern: "^zz[0-9]{3}$" } },
    output_schema: { code: { type: "string", pattern: "^zz[0-9]{3}$" } },
  };
  const model = parseManifest(JSON.stringify(odd), "agent.json");

  it("leaves out the stubs of handlers that exist, with the same warnings", async () => {
    const all = await generateCode(model);
    const some = await generateCode(model, {
      existing: (path) => path.startsWith("src/capabilities/"),
    });
    expect(some.files.map((f) => f.path)).toEqual(
      all.files.filter((f) => !f.path.startsWith("src/capabilities/")).map((f) => f.path),
    );
    expect(some.files).toEqual(all.files.filter((f) => !f.path.startsWith("src/capabilities/")));
    expect(some.warnings).toEqual(all.warnings);
    expect(all.warnings.some((w) => w.startsWith("odd: output placeholder"))).toBe(true);
    const none = await generateCode(model, { existing: () => false });
    expect(none).toEqual(all);
  });
});
