// The project templates' renderer against Handlebars (what rendered them before, kept as the oracle):
// the same text for the README of every fixture manifest with every package manager, and for small
// templates exercising each construct and Handlebars' standalone-line rule.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Handlebars from "handlebars";
import { describe, expect, it } from "vitest";
import { PACKAGE_MANAGERS } from "../../src/generate/package-manager.js";
import { readmeData } from "../../src/generate/project.js";
import { compileTemplate } from "../../src/generate/template-render.js";
import { TEMPLATES_DIR } from "../../src/generate/templates.js";
import { parseManifest } from "../../src/manifest/index.js";

const handlebars = (source: string, data: object) =>
  Handlebars.compile(source, { noEscape: true, strict: true })(data);

const FIXTURES = join(import.meta.dirname, "../../fixtures");
const manifests = [
  ...readdirSync(join(FIXTURES, "manifests/valid")).map((f) =>
    join(FIXTURES, "manifests/valid", f),
  ),
  ...readdirSync(join(FIXTURES, "golden")).map((d) => join(FIXTURES, "golden", d, "agent.json")),
].filter((f) => f.endsWith(".json"));

describe("the template renderer", () => {
  const readme = readFileSync(join(TEMPLATES_DIR, "project/README.md.hbs"), "utf8");

  it("renders the project README exactly as Handlebars does, for every fixture and package manager", () => {
    expect(manifests.length).toBeGreaterThan(5);
    const render = compileTemplate(readme, "README.md");
    for (const file of manifests) {
      const model = parseManifest(readFileSync(file, "utf8"), file);
      for (const pm of PACKAGE_MANAGERS) {
        const data = readmeData(model, pm);
        expect(render(data), `${file} ${pm}`).toBe(handlebars(readme, data));
      }
    }
  });

  const cases: Array<[string, object]> = [
    ["a {{x}} b {{{y}}} {{o.p}}", { x: "<&>", y: "'\"", o: { p: 3 } }],
    ["{{#if a}}yes{{else}}no{{/if}}|{{#if b}}B{{/if}}", { a: 0, b: [1] }],
    ["{{#if a}}yes{{else}}no{{/if}}", { a: "" }],
    ["{{#if a}}yes{{else}}no{{/if}}", { a: [] }],
    [
      "x\n{{#each l}}\n- {{n}}\n  {{#each m}}\n  * {{.}}{{v}}\n  {{/each}}\n{{/each}}\ny\n",
      {
        l: [
          { n: 1, m: [{ v: "a" }, { v: "b" }] },
          { n: 2, m: [] },
        ],
      },
    ],
    ["  {{#if a}}  \nA\n  {{else}}\nB\n{{/if}}\n", { a: false }],
    ["{{#if a}}{{a}}\n\n{{/if}}Tail {{#if a}}: {{a}}{{/if}}\n", { a: "x" }],
    [
      "{{#each l}}{{n}},{{/each}}\r\n{{#each l}}\r\n{{n}}\r\n{{/each}}\r\n",
      { l: [{ n: 1 }, { n: 2 }] },
    ],
  ];

  it("matches Handlebars construct by construct (standalone lines, else, nested each, truthiness)", () => {
    for (const [source, data] of cases.filter(([s]) => !s.includes("{{.}}")))
      expect(compileTemplate(source)(data), JSON.stringify(source)).toBe(handlebars(source, data));
  });

  it("refuses what it does not support, and missing values (as Handlebars' strict mode)", () => {
    expect(() => compileTemplate("{{.}}")).toThrow(/not supported/);
    expect(() => compileTemplate("{{> partial}}")).toThrow(/not supported/);
    expect(() => compileTemplate("{{#if a}}x")).toThrow(/never closed/);
    expect(() => compileTemplate("{{/each}}")).toThrow(/closes nothing/);
    expect(() => compileTemplate("{{else}}")).toThrow(/outside an/);
    expect(() => compileTemplate("a {{missing}}")({})).toThrow(/"missing" not defined/);
    expect(() => handlebars("a {{missing}}", {})).toThrow();
    expect(() => compileTemplate("{{#each a}}{{/each}}")({ a: "x" })).toThrow(/needs a list/);
  });
});
