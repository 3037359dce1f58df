import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatProblem, loadManifest, ManifestError, parseManifest } from "../../src/manifest/index.js";
import { formatPath } from "../../src/manifest/errors.js";
import { thrownBy } from "../thrown.js";

const capability = (amount = '"0.01"') =>
  `{ "pricing": { "model": "per_job", "amount": ${amount}, "currency": "USDC" }, "input_schema": {}, "output_schema": { "ok": { "type": "boolean" } } }`;

const problemsOf = (text: string, file = "agent.json") =>
  thrownBy(ManifestError, () => parseManifest(text, file)).problems;

describe("parseManifest", () => {
  it("keeps tags out of the declaration (GET /about) and defaults them to the name's words", () => {
    const capability = (extra: object) => ({
      ...extra,
      pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
      input_schema: {},
      output_schema: { ok: { type: "boolean" } },
    });
    const text = JSON.stringify({
      name: "a",
      version: "1.0.0",
      capabilities: {
        "extract-entities": capability({ tags: ["nlp", "entities"] }),
        summarizeText_v2: capability({}),
      },
    });
    const [tagged, plain] = parseManifest(text, "agent.json").capabilities;
    expect(tagged!.tags).toEqual(["nlp", "entities"]);
    expect(tagged!.declaration).not.toHaveProperty("tags");
    expect(Object.keys(tagged!.declaration)).toEqual(["pricing", "input_schema", "output_schema"]);
    expect(plain!.tags).toEqual(["summarize", "text", "v2"]);
  });

  it("builds the model of the README example", () => {
    const text = JSON.stringify({
      $schema: "./src/generated/agent.schema.json",
      name: "my-agent",
      version: "0.1.0",
      description: "What this agent does",
      capabilities: {
        summarize: {
          description: "Summarize a text",
          pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
          input_schema: { text: { type: "string", required: true }, max_words: { type: "integer" } },
          output_schema: { summary: { type: "string" } },
        },
      },
    });
    const model = parseManifest(text, "agent.json");
    expect(model.name).toBe("my-agent");
    expect(model.version).toBe("0.1.0");
    expect(model.description).toBe("What this agent does");
    expect(model.manifest).toEqual(JSON.parse(text));
    expect(model.capabilities).toEqual([
      {
        name: "summarize",
        typeName: "Summarize",
        identifier: "summarize",
        declaration: JSON.parse(text).capabilities.summarize,
        tags: ["summarize"],
        priceAtomic: "10000",
        inputSchema: {
          type: "object",
          properties: { text: { type: "string" }, max_words: { type: "integer" } },
          required: ["text"],
          additionalProperties: false,
        },
        outputSchema: {
          type: "object",
          properties: { summary: { type: "string" } },
          required: ["summary"],
          additionalProperties: false,
        },
      },
    ]);
  });

  it("defaults description to the empty string and keeps capability order", () => {
    const model = parseManifest(`{"name":"a","version":"1.0.0","capabilities":{"b-two":${capability()},"a_one":${capability()}}}`, "x.json");
    expect(model.description).toBe("");
    expect(model.capabilities.map((c) => [c.name, c.typeName, c.identifier])).toEqual([
      ["b-two", "BTwo", "bTwo"],
      ["a_one", "AOne", "aOne"],
    ]);
  });

  it("reports 1-based line:column of values, keys and enclosing objects on a multi-line manifest", () => {
    const text = [
      "{", //                                              line 1
      '  "name": "Bad Name",', //                          line 2: value at column 11
      '  "version": "0.1.0",', //                          line 3
      '  "colour": 1,', //                                 line 4: unknown key at column 3
      '  "capabilities": {', //                            line 5
      '    "run": {', //                                   line 6: object at column 12 (missing pricing)
      '      "input_schema": { "x": { "type": "int" } },', // line 7: "int" at column 40
      '      "output_schema": { "y": { "type": "string" } }',
      "    }",
      "  }",
      "}",
    ].join("\n");
    const problems = problemsOf(text);
    expect(problems.map((p) => [p.path, p.line, p.column])).toEqual([
      ["$.name", 2, 11],
      ["$.colour", 4, 3],
      ["$.capabilities.run", 6, 12],
      ["$.capabilities.run.input_schema.x.type", 7, 40],
    ]);
    expect(problems.every((p) => p.file === "agent.json")).toBe(true);
  });

  it("counts columns after CRLF line endings and tabs like an editor does", () => {
    const text = '{\r\n\t"name": 5,\r\n\t"version": "1.0.0",\r\n\t"capabilities": {}\r\n}';
    expect(problemsOf(text).map((p) => [p.path, p.line, p.column])).toEqual([
      ["$.name", 2, 10],
      ["$.capabilities", 4, 18],
    ]);
  });

  it("reports every problem, sorted by position, in the message one per line", () => {
    const text = `{"name":"a","version":"x","capabilities":{"Z":${capability('"-1"')},"../y":${capability("1")}}}`;
    try {
      parseManifest(text, "dir/agent.json");
      expect.unreachable();
    } catch (error) {
      const e = error as ManifestError;
      expect(e.name).toBe("ManifestError");
      expect(e.problems.map((p) => p.path)).toEqual([
        "$.version",
        "$.capabilities.Z.pricing.amount",
        '$.capabilities["../y"]',
        '$.capabilities["../y"].pricing.amount',
      ]);
      expect(e.message).toBe(e.problems.map(formatProblem).join("\n"));
      expect(e.message.split("\n")[0]).toMatch(/^dir\/agent\.json:1:23: \$\.version: /);
      expect(e.message).not.toContain("    at ");
    }
  });

  it("ignores a UTF-8 byte-order mark", () => {
    expect(parseManifest(`\uFEFF{"name":"a","version":"1.0.0","capabilities":{"x":${capability()}}}`, "a.json").name).toBe("a");
  });

  it("keeps a __proto__ key inside a default value as data", () => {
    const text = `{"name":"a","version":"1.0.0","capabilities":{"x":{"pricing":{"model":"per_job","amount":"1","currency":"USDC"},"input_schema":{"o":{"type":"object","default":{"__proto__":{"polluted":true}}}},"output_schema":{"ok":{"type":"boolean"}}}}}`;
    const model = parseManifest(text, "a.json");
    const fallback = model.manifest.capabilities.x?.input_schema.o?.default as Record<string, unknown>;
    expect(Object.hasOwn(fallback, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses fields nested more than 32 levels deep (tsc gives up near 50), naming the capability, the schema and where", () => {
    /** `depth` levels of fields, arrays and objects alternating: a, a.items, a.items.properties.a, ... */
    const nested = (depth: number) => {
      let field: object = { type: "string" };
      for (let level = depth - 1; level >= 1; level--)
        field = level % 2 ? { type: "array", items: field } : { type: "object", properties: { a: field } };
      return { a: field };
    };
    const pricing = { model: "per_job", amount: "0.01", currency: "USDC" };
    const manifest = (input: object, output: object) =>
      JSON.stringify({ name: "a", version: "1.0.0", capabilities: { deep: { pricing, input_schema: input, output_schema: output } } });
    expect(parseManifest(manifest(nested(32), nested(32)), "agent.json").capabilities).toHaveLength(1);
    const problems = problemsOf(manifest({}, nested(40)));
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      [
        `$.capabilities.deep.output_schema.a${".items.properties.a".repeat(16)}`,
        'capability "deep": output_schema nests fields more than 32 levels deep (the limit: its TypeScript types could not be type-checked much deeper); flatten it, or declare the deeper part as { "type": "object" } without "properties" (an object with any keys)',
      ],
    ]);
  });

  it("reports the first syntax error with its position", () => {
    expect(problemsOf('{\n  "name": "a"\n  "version": "1.0.0"\n}')).toEqual([
      { file: "agent.json", path: "$.version", line: 3, column: 3, message: "invalid JSON: comma expected" },
    ]);
  });
});

describe("formatPath / formatProblem", () => {
  it("uses dots for identifiers and brackets otherwise", () => {
    expect(formatPath(["capabilities", "summarize", "pricing", "amount"])).toBe("$.capabilities.summarize.pricing.amount");
    expect(formatPath(["capabilities", "../x"])).toBe('$.capabilities["../x"]');
    expect(formatPath(["capabilities", "extract-entities", "examples", 2])).toBe('$.capabilities["extract-entities"].examples[2]');
    expect(formatPath(["$schema"])).toBe("$.$schema");
    expect(formatPath([])).toBe("$");
  });

  it("omits unknown positions and empty paths", () => {
    expect(formatProblem({ file: "a.json", path: "$.x", line: 1, column: 2, message: "m" })).toBe("a.json:1:2: $.x: m");
    expect(formatProblem({ file: "a.json", path: "$.x", message: "m" })).toBe("a.json: $.x: m");
    expect(formatProblem({ file: "a.json", path: "", message: "m" })).toBe("a.json: m");
  });
});

describe("loadManifest", () => {
  const dir = mkdtempSync(join(tmpdir(), "manifest-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reports a missing file with its absolute path", async () => {
    const missing = join(dir, "nope", "agent.json");
    await expect(loadManifest(missing, "agent.json")).rejects.toThrow(
      new ManifestError([{ file: "agent.json", path: "", message: `file not found (looked at ${missing})` }]),
    );
    await expect(loadManifest(missing, "agent.json")).rejects.toThrow(`agent.json: file not found (looked at ${missing})`);
  });

  it("reports a directory", async () => {
    const error = await loadManifest(dir, "agent.json").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as ManifestError).message).toBe(
      `agent.json: is a directory, not a manifest file (looked at ${dir}); point at the agent.json inside it`,
    );
  });

  it("reads a file and uses the display name in problems", async () => {
    const file = join(dir, "agent.json");
    writeFileSync(file, `{"name":"a","version":"1.0.0","capabilities":{"x":${capability()}}}`);
    expect((await loadManifest(file)).capabilities[0]?.priceAtomic).toBe("10000");
    writeFileSync(file, "[]");
    await expect(loadManifest(file, "my/agent.json")).rejects.toThrow("my/agent.json:1:1: $: the top level must be a JSON object, found an array");
  });

  it("defaults the display name to the path relative to the working directory", async () => {
    const relative = "fixtures/manifests/invalid/top-level-array.json";
    await expect(loadManifest(resolve(relative))).rejects.toThrow(`${relative}:1:1: $:`);
  });
});
