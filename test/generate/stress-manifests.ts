// Manifests that push the generators' layouts: every manifest fixture, plus generated ones with many
// capabilities, names of every length (quoted keys, long identifiers that break lines), nested objects and
// arrays, bounded arrays (unions of tuples), enums of every type, long and odd descriptions (comment
// closers, line breaks, Markdown line breaks, carriage returns, non-ASCII text), and examples and defaults
// of every JSON shape. All are valid manifests (parseManifest accepts them).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { manyCapabilities } from "../../bench/workload.mjs";

const FIXTURES = join(import.meta.dirname, "../../fixtures");

type Json = Record<string, unknown>;

/** Every manifest fixture: fixtures/manifests/valid, the golden cases' and the e2e one. */
export function fixtureManifests(): Array<[string, string]> {
  const valid = readdirSync(join(FIXTURES, "manifests/valid"))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f): [string, string] => [
      `manifests/valid/${f}`,
      readFileSync(join(FIXTURES, "manifests/valid", f), "utf8"),
    ]);
  const golden = readdirSync(join(FIXTURES, "golden"))
    .sort()
    .map((d): [string, string] => [
      `golden/${d}`,
      readFileSync(join(FIXTURES, "golden", d, "agent.json"), "utf8"),
    ]);
  return [...valid, ...golden, ["e2e", readFileSync(join(FIXTURES, "e2e/agent.json"), "utf8")]];
}

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

const DESCRIPTIONS = [
  "A field",
  "Multi\nline\ndescription",
  "Closes */ a comment",
  "Tagged @deprecated",
  "Markdown line break  \nnext line",
  "trailing spaces   ",
  "  leading spaces",
  "Quotes \"double\" and 'single'",
  "A long description that goes on and on, well past the hundred columns of a line, to see that nothing breaks it",
  "Carriage\rreturn",
  "Windows\r\nline end",
  "café — “quoted” ‘x’ … naïve Ωmega",
  "star * line\n * looks like JSDoc",
  "",
];
const STRINGS = [
  "fast",
  "careful",
  "it's",
  'say "hi"',
  "x-y",
  "a much longer enum value here",
  "UPPER",
  "with space",
  "é",
  "back\\slash",
  "tab\there",
  "new\nline",
];
const FIELD_NAMES = [
  "text",
  "limit",
  "mode",
  "options",
  "items",
  "minItems",
  "maxItems",
  "value",
  "nested_thing",
  "veryLongFieldNameThatIsQuiteLongIndeedAndThenSome",
  "_x",
  "toString",
];

function field(r: ReturnType<typeof rng>, depth: number): Json {
  const type =
    depth > 3
      ? r.pick(["string", "number", "integer", "boolean"])
      : r.pick([
          "string",
          "string",
          "number",
          "integer",
          "boolean",
          "array",
          "array",
          "object",
          "object",
        ]);
  const d: Json = { type };
  if (r.next() < 0.3) d.description = r.pick(DESCRIPTIONS);
  if (type === "string") {
    if (r.next() < 0.3) {
      const values = new Set<string>();
      const n = 1 + r.int(12);
      for (let i = 0; i < n; i++) values.add(r.pick(STRINGS) + (r.next() < 0.5 ? String(i) : ""));
      d.enum = [...values];
      if (r.next() < 0.3) d.default = (d.enum as string[])[0];
    } else {
      if (r.next() < 0.2) d.minLength = r.int(3);
      if (r.next() < 0.2) d.maxLength = 5 + r.int(20);
      if (r.next() < 0.15) d.format = r.pick(["email", "date-time", "uri", "uuid", "date"]);
      else if (r.next() < 0.1) d.pattern = r.pick(["^[a-z]+$", "^[A-Z]{3}-\\d{4}$", "^\\d+$"]);
      if (r.next() < 0.2 && d.format === undefined && d.pattern === undefined) {
        d.examples = [
          r
            .pick(["example value", 'quoted "x"', "it's", "naïve café"])
            .slice(0, (d.maxLength as number | undefined) ?? 100),
        ];
        if ((d.examples as string[])[0]!.length < ((d.minLength as number | undefined) ?? 0))
          delete d.examples;
      }
    }
  } else if (type === "number" || type === "integer") {
    if (r.next() < 0.25) {
      d.enum =
        type === "integer"
          ? [1, 2, 3, -1, 1000000, 42, 7].slice(0, 1 + r.int(7))
          : [0.5, 1.5, -2.25, 1e21, 1e-7, 100].slice(0, 1 + r.int(6));
    } else {
      if (r.next() < 0.3) d.minimum = r.pick([0, 1, -5]);
      if (r.next() < 0.3) d.maximum = r.pick([10, 100, 1e6]);
      if (r.next() < 0.2) d.default = Math.max((d.minimum as number | undefined) ?? 1, 1);
    }
  } else if (type === "boolean") {
    if (r.next() < 0.1) d.enum = [true];
    else if (r.next() < 0.2) d.default = false;
  } else if (type === "array") {
    const items = field(r, depth + 1);
    delete items.required;
    d.items = items;
    if (r.next() < 0.3) d.minItems = r.pick([0, 1, 2, 3]);
    if (r.next() < 0.3)
      d.maxItems = Math.max(
        (d.minItems as number | undefined) ?? 0,
        r.pick([0, 1, 2, 3, 5, 10, 20, 25]),
      );
  } else if (type === "object") {
    if (r.next() < 0.75) {
      const properties: Json = {};
      const n = 1 + r.int(4);
      for (let i = 0; i < n; i++)
        properties[r.pick(FIELD_NAMES) + (r.next() < 0.5 ? "" : String(i))] = field(r, depth + 1);
      d.properties = properties;
    } else if (r.next() < 0.4) {
      // A free-form object: any example, keys needing quotes included.
      d.examples = [
        {
          "a-b": 1,
          "with space": [1, -2, 3.5],
          $key: "x",
          "1": null,
          nested: {
            deep: [
              { x: 1, y: 2 },
              { x: 3, y: 4 },
            ],
          },
        },
      ];
    }
  }
  if (depth === 0 && r.next() < 0.3) d.required = r.next() < 0.5;
  return d;
}

/** A random manifest (seeded: the same seed gives the same manifest). */
export function randomManifest(seed: number, count = 1 + (seed % 4)): string {
  const r = rng(seed);
  const capabilities: Json = {};
  const names = [
    "summarize",
    "classify-review",
    "get2fa",
    "a",
    "x_y",
    "extract-entities-from-very-long-documents-with-many-words",
    "do",
    "v2_to_v3",
  ];
  for (let c = 0; c < count; c++) {
    const name = r.pick(names) + (c ? `-n${c}` : "");
    const input: Json = {};
    const output: Json = {};
    const inputs = r.int(5);
    const outputs = 1 + r.int(4);
    for (let i = 0; i < inputs; i++) input[r.pick(FIELD_NAMES) + String(i)] = field(r, 0);
    for (let i = 0; i < outputs; i++)
      output[r.pick(["result", "score", "sections", "matrix", "ok", "data"]) + String(i)] = field(
        r,
        0,
      );
    const description = r.pick([
      "Summarize a text",
      "",
      "Does */ things",
      "Long description ".repeat(8).trim(),
      "Line\nbreak",
      "Ünïcödé — fine",
    ]);
    capabilities[name] = {
      ...(description ? { description } : {}),
      pricing: {
        model: "per_job",
        amount: r.pick(["0.01", "1", "0.000001", "12.5"]),
        currency: "USDC",
      },
      input_schema: input,
      output_schema: output,
    };
  }
  return JSON.stringify({
    name: "stress-agent",
    version: "1.0.0",
    description: "Stress 'test' \"manifest\"",
    capabilities,
  });
}

/** Capability names of every length from 1 to 64, plain and with dashes and underscores. */
export function namesManifest(): string {
  const capabilities: Json = {};
  for (let length = 1; length <= 64; length++) {
    const plain = "abcdefghijklmnopqrstuvwxyz".repeat(3).slice(0, length);
    const dashed = `b${"-c".repeat(32)}`.slice(0, length).replace(/-$/, "d");
    for (const name of [plain, dashed]) {
      capabilities[name] = {
        description: `Capability ${name}`,
        pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
        input_schema: { text: { type: "string", required: true } },
        output_schema: {
          result: { type: "string" },
          score: { type: "number", minimum: 0, maximum: 1 },
        },
      };
    }
  }
  return JSON.stringify({ name: "names-agent", version: "1.0.0", capabilities });
}

/** Many capabilities: the benchmarks' own workload (bench/workload.mjs), long import lists, long files. */
export function manyManifest(count = 40): string {
  return JSON.stringify({ ...manyCapabilities(count), name: "many-agent" });
}

/** Deep nesting, wide enums, bounded arrays and examples of every shape. */
export function shapesManifest(): string {
  const deep = (n: number): Json =>
    n === 0
      ? { type: "string", enum: STRINGS, description: "The innermost value" }
      : {
          type: "object",
          description: `Level ${n}`,
          properties: {
            inner: deep(n - 1),
            list: { type: "array", items: deep(n - 1), maxItems: 2 },
          },
        };
  const capabilities: Json = {
    shapes: {
      description: "Every shape the generators lay out",
      pricing: { model: "per_job", amount: "0.5", currency: "USDC" },
      input_schema: {
        deep: { ...deep(5), required: true },
        numbers: {
          type: "array",
          items: { type: "number" },
          examples: [
            [
              1, -2, 3.5, 1e21, 1e-7, 0, 12345678, -0.5, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
              15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
            ],
          ],
        },
        objects: {
          type: "array",
          items: { type: "object", properties: { a: { type: "string" }, b: { type: "integer" } } },
          examples: [
            [
              { a: "x", b: 1 },
              { a: "y", b: 2 },
            ],
          ],
        },
        matrix: {
          type: "array",
          items: { type: "array", items: { type: "integer" }, minItems: 1, maxItems: 4 },
          maxItems: 5,
          examples: [
            [
              [1, 2],
              [3, 4],
            ],
          ],
        },
        tuple: { type: "array", items: { type: "string", description: "One tag" }, minItems: 2 },
        wide_enum: {
          type: "string",
          enum: Array.from({ length: 30 }, (_, i) => `value-number-${i}`),
          default: "value-number-0",
        },
        numbers_enum: { type: "integer", enum: [1, 2, 3, -4, 1000000000] },
        free: {
          type: "object",
          default: { "needs quotes": true, plain: [1, 2], nested: { "a-b": "c" } },
        },
        long_default: {
          type: "string",
          default:
            "A default value long enough to need a line of its own when it is printed at any depth at all",
        },
      },
      output_schema: {
        rows: {
          type: "array",
          items: {
            type: "object",
            properties: {
              id: { type: "string", format: "uuid" },
              tags: { type: "array", items: { type: "string" } },
            },
          },
          minItems: 1,
        },
        summary: {
          type: "string",
          examples: [
            "An example summary that is long enough to move to its own line when printed in the stub",
          ],
        },
        flags: { type: "array", items: { type: "boolean" }, minItems: 2, maxItems: 3 },
      },
    },
  };
  return JSON.stringify({
    name: "shapes-agent",
    version: "2.0.0",
    description: "Shapes",
    capabilities,
  });
}

/** Every manifest the layout tests run on, by name. */
export function stressManifests(): Array<[string, string]> {
  const random = Array.from({ length: 24 }, (_, i): [string, string] => [
    `random-${i + 1}`,
    randomManifest(i + 1),
  ]);
  return [
    ["names", namesManifest()],
    ["many", manyManifest()],
    ["shapes", shapesManifest()],
    ...random,
  ];
}
