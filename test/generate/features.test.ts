// The feature table (src/features.ts) and what it makes of a project: the pruning of features.ts, the
// --features list, the dependencies and the runtime files a project with a given set carries.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_FEATURES,
  FEATURE_NAMES,
  FEATURES,
  parseFeatureList,
  projectDependencies,
  projectFeatures,
  pruneFeatureLines,
  recordedFeatures,
} from "../../src/features.js";
import { runtimeFilesFor } from "../../src/generate/runtime.js";
import { TEMPLATES_DIR } from "../../src/generate/templates.js";
import { dependencies } from "../../src/versions.js";

describe("pruneFeatureLines", () => {
  const source = [
    'import { a } from "./a.js"; // feature: solana',
    'import { b } from "./b.js";',
    "export const LIST = [",
    '  "evm",',
    '  "solana", // feature: solana',
    '  "mcp", // feature: mcp',
    '  "x", // feature: evm',
    "];",
    "// feature: solana is mentioned here, not at the end",
    "",
  ].join("\n");

  it("keeps a marked line only for a feature the project has, every other line as it is", () => {
    expect(pruneFeatureLines(source, ["mcp"])).toBe(
      [
        'import { b } from "./b.js";',
        "export const LIST = [",
        '  "evm",',
        '  "mcp", // feature: mcp',
        '  "x", // feature: evm',
        "];",
        "// feature: solana is mentioned here, not at the end",
        "",
      ].join("\n"),
    );
    expect(pruneFeatureLines(source, ["solana", "mcp"])).toBe(source);
  });

  it("keeps CRLF line ends and a trailing space after the marker", () => {
    expect(pruneFeatureLines('a\r\n"s", // feature: solana \r\nb\r\n', [])).toBe("a\r\nb\r\n");
  });

  it("on the real features.ts: all features keep it whole, none leaves only evm", () => {
    const template = readFileSync(join(TEMPLATES_DIR, "runtime/features.ts"), "utf8");
    expect(pruneFeatureLines(template, FEATURE_NAMES)).toBe(template);
    const none = pruneFeatureLines(template, []);
    expect(none).not.toMatch(/\/\/ feature: /);
    expect(none).toContain('"evm",');
  });
});

describe("parseFeatureList (--features and the prompt)", () => {
  it("reads names in any order and case, spaces allowed, into the table's order", () => {
    expect(parseFeatureList("redis, SOLANA,redis")).toEqual(["solana", "redis"]);
  });
  it("all is every feature; none and an empty list are none", () => {
    expect(parseFeatureList("all")).toEqual(FEATURE_NAMES);
    expect(parseFeatureList("none")).toEqual([]);
    expect(parseFeatureList(" ")).toEqual([]);
  });
  it("refuses an unknown name listing the valid ones, and evm as always there", () => {
    expect(() => parseFeatureList("mcp,solan")).toThrow(
      'unknown feature "solan" (did you mean solana?): the features are solana, onchain, mcp, a2a, console, redis, queue, metrics, facilitator-auth',
    );
    expect(() => parseFeatureList("evm")).toThrow("evm is always included");
    // A near miss names the feature meant; nothing close, no guess.
    expect(() => parseFeatureList("metric")).toThrow('"metric" (did you mean metrics?)');
    expect(() => parseFeatureList("kafka")).toThrow(/^unknown feature "kafka": the features are/);
  });
});

describe("the table", () => {
  it("a new project starts with mcp, a2a and console", () => {
    expect(DEFAULT_FEATURES).toEqual(["mcp", "a2a", "console"]);
  });

  it("names exactly the runtime registry's optional features, each folder once", () => {
    const template = readFileSync(join(TEMPLATES_DIR, "runtime/features.ts"), "utf8");
    const registry = [...template.matchAll(/^\s*"([a-z0-9-]+)", \/\/ feature: \1$/gm)].map(
      (m) => m[1],
    );
    expect(registry).toEqual(FEATURE_NAMES);
    expect(new Set(FEATURES.map((f) => f.folder)).size).toBe(FEATURES.length);
  });

  it("each feature's packages come from the version table; the core keeps the rest", () => {
    for (const f of FEATURES)
      for (const [name, version] of Object.entries(f.dependencies))
        expect(dependencies[name as keyof typeof dependencies]).toBe(version);
    expect(Object.keys(projectDependencies([]))).toEqual(["ajv", "ajv-formats", "express"]);
    expect(projectDependencies(FEATURE_NAMES)).toEqual(dependencies);
    expect(Object.keys(projectDependencies(["redis"]))).toContain("ioredis");
  });

  it("viem is a dependency only with onchain; no project carries the x402 client", () => {
    expect(projectDependencies([]).viem).toBeUndefined();
    expect(projectDependencies(["onchain"]).viem).toBe(dependencies.viem);
  });

  it("a recorded project still carrying the core files onchain was split from keeps onchain", () => {
    const pkg = { createAgent: { version: "0.2.0", features: ["mcp"] } };
    expect(projectFeatures(pkg, () => false)).toEqual(["mcp"]);
    expect(
      projectFeatures(pkg, (path) => path === "src/runtime/payments/evm/direct-settlement.ts"),
    ).toEqual(["onchain", "mcp"]);
    // Without a record every feature of its time is there already, onchain among them.
    expect(projectFeatures({}, () => false)).toContain("onchain");
  });

  it("a project without createAgent.features (0.1.0, 0.2.0) counts as having every feature of its time, not queue or a2a", () => {
    expect(recordedFeatures({ createAgent: { version: "0.2.0" } })).toEqual(
      FEATURE_NAMES.filter((name) => name !== "queue" && name !== "a2a"),
    );
    expect(recordedFeatures({ createAgent: { features: ["redis", "mcp"] } })).toEqual([
      "mcp",
      "redis",
    ]);
    expect(recordedFeatures({ createAgent: { features: [] } })).toEqual([]);
    // A record edited by hand reads as the names are typed elsewhere.
    expect(recordedFeatures({ createAgent: { features: [" Redis", "MCP", 3] } })).toEqual([
      "mcp",
      "redis",
    ]);
  });
});

describe("runtimeFilesFor", () => {
  it("carries the core and only the folders of the project's features, features.ts pruned", () => {
    const paths = (features: string[]) => runtimeFilesFor(features).map((f) => f.path);
    const all = paths([...FEATURE_NAMES]);
    const core = paths([]);
    expect(all).toContain("src/runtime/payments/svm/scheme.ts");
    expect(all).toContain("src/runtime/mcp/route.ts");
    expect(core.some((p) => p.startsWith("src/runtime/payments/svm/"))).toBe(false);
    expect(core.some((p) => p.startsWith("src/runtime/mcp/"))).toBe(false);
    expect(core.some((p) => p.startsWith("src/runtime/console/"))).toBe(false);
    expect(core).toContain("src/runtime/payments/evm/scheme.ts");
    expect(core).toContain("src/runtime/app.ts");
    const featuresTs = runtimeFilesFor(["mcp"]).find((f) => f.path === "src/runtime/features.ts");
    expect(featuresTs?.contents).toContain('"mcp", // feature: mcp');
    expect(featuresTs?.contents).not.toContain("// feature: solana");
  });
});
