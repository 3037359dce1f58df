import { describe, expect, it } from "vitest";
import { toIdentifier, toTypeName } from "../../src/manifest/index.js";
import { capabilityNameProblem, fieldNameProblem, packageNameProblem } from "../../src/manifest/names.js";
import { editDistance, suggest } from "../../src/suggest.js";

describe.each<[string, (name: string) => string, Array<[string, string]>]>([
  [
    "toTypeName",
    toTypeName,
    [
      ["summarize", "Summarize"],
      ["extract-entities", "ExtractEntities"],
      ["extract_entities", "ExtractEntities"],
      ["getURL", "GetURL"],
      ["fooBar", "FooBar"],
      ["a-b-c", "ABC"],
      ["v2-translate", "V2Translate"],
      ["x", "X"],
    ],
  ],
  [
    "toIdentifier",
    toIdentifier,
    [
      ["summarize", "summarize"],
      ["extract-entities", "extractEntities"],
      ["extract_entities", "extractEntities"],
      ["getURL", "getURL"],
      ["URL", "url"],
      ["URL-parser", "urlParser"],
      ["Summarize", "summarize"],
      ["x", "x"],
    ],
  ],
])("%s", (_name, convert, cases) => {
  it.each(cases)("%s -> %s", (name, expected) => expect(convert(name)).toBe(expected));
});

describe("capability names", () => {
  it.each(["summarize", "extract-entities", "a", "A1_b-2", "x".repeat(64)])("accepts %s", (name) =>
    expect(capabilityNameProblem(name)).toBeUndefined(),
  );
  it.each([
    "",
    "../x",
    "a/b",
    "a.b",
    "a b",
    "1abc",
    "-abc",
    "_abc",
    "x".repeat(65),
    "constructor",
    "Constructor",
    "__proto__",
    "toString",
    "TOSTRING",
    "hasOwnProperty",
    "con",
    "CON",
    "Nul",
    "com1",
    "LPT9",
    "héllo",
  ])("rejects %j", (name) => expect(capabilityNameProblem(name)).toEqual(expect.any(String)));
});

describe("field names", () => {
  it.each(["text", "max_words", "_private", "A1", "x".repeat(64)])("accepts %s", (name) => expect(fieldNameProblem(name)).toBeUndefined());
  it.each(["max-words", "2nd", "a b", "a.b", "", "x".repeat(65), "__proto__", "constructor", "prototype"])("rejects %j", (name) =>
    expect(fieldNameProblem(name)).toEqual(expect.any(String)),
  );
});

describe("package names", () => {
  it.each(["my-agent", "@acme/my-agent", "a.b_c-1", "0day"])("accepts %s", (name) => expect(packageNameProblem(name)).toBeUndefined());
  it.each(["My-Agent", "my agent", "-x", ".x", "@acme", "@Acme/x", "a".repeat(215)])("rejects %j", (name) =>
    expect(packageNameProblem(name)).toEqual(expect.any(String)),
  );
});

describe("suggestions", () => {
  it("counts a transposition as one edit", () => expect(editDistance("requried", "required")).toBe(1));
  it.each([
    ["capabilites", ["name", "capabilities"], "capabilities"],
    ["int", ["string", "integer"], "integer"],
    ["str", ["string", "integer"], "string"],
    ["String", ["string", "integer"], "string"],
    ["xyz", ["string", "integer"], undefined],
  ] as const)("%s -> %s", (input, candidates, expected) => expect(suggest(input, candidates, { int: "integer" })).toBe(expected));
});
