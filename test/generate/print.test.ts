// src/generate/print/: the printer behind the formatted output of `generate`, checked against prettier on
// random JSON values (any default or example can hold one), and the guarantees around it: the widths it
// assumes are prettier's, and the generate path loads none of the packages it replaces.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { format, util } from "prettier";
import { describe, expect, it } from "vitest";
import { textWidth, Unsupported } from "../../src/generate/print/doc.js";
import { statementText } from "../../src/generate/print/js.js";

function rng(seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

describe("JSON values", () => {
  const KEYS = [
    "a",
    "ab",
    "name",
    "description",
    "type",
    "x-y",
    "a b",
    "$ref",
    "200",
    "application/json",
    "it's",
    'say "hi"',
    "averylongkeynamethatgoesonandonandon",
    "_private",
    "k1",
  ];
  const PIECES = [
    "word ",
    "longer words here ",
    "'",
    '"',
    "\\",
    "\n",
    "é—",
    "x",
    "The quick brown fox jumps over the lazy dog. ",
  ];
  const NUMBERS = [0, 1, -1, 0.5, -0.25, 1e21, 1e-7, 123456789, -3, 42, 2.5e-10, 100000];

  function value(r: ReturnType<typeof rng>, depth: number): unknown {
    const roll = r.next();
    if (depth > 4 || roll < 0.35) {
      switch (r.pick(["string", "number", "boolean", "null"])) {
        case "string":
          return Array.from({ length: Math.floor(r.next() * 6) }, () => r.pick(PIECES)).join("");
        case "number":
          return r.pick(NUMBERS);
        case "boolean":
          return r.next() < 0.5;
        default:
          return null;
      }
    }
    if (roll < 0.55) {
      const kind = r.next();
      return Array.from({ length: Math.floor(r.next() * 8) }, () =>
        kind < 0.3 ? r.pick(NUMBERS) : kind < 0.5 ? object(r, depth + 1) : value(r, depth + 1),
      );
    }
    return object(r, depth + 1);
  }

  function object(r: ReturnType<typeof rng>, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const n = Math.floor(r.next() * 6);
    for (let i = 0; i < n; i++)
      out[r.pick(KEYS) + (r.next() < 0.3 ? String(i) : "")] = value(r, depth);
    return out;
  }

  it("are printed as prettier prints them, on one line (JSON.stringify) or expanded (indented JSON)", async () => {
    const r = rng(7);
    for (let i = 0; i < 400; i++) {
      const data = object(r, 0);
      const name = r.pick([
        "x",
        "someVeryLongIdentifierNameForTheSchemaOfACapability",
        "classifyReviewInputSchema",
      ]);
      const expand = r.next() < 0.3;
      const source = `export const ${name} = ${JSON.stringify(data, null, expand ? 2 : undefined)};`;
      const expected = await format(source, {
        parser: "typescript",
        printWidth: 100,
        trailingComma: "all",
      });
      expect(
        `${statementText(`export const ${name} =`, data, { expandObjects: expand })}\n`,
        source,
      ).toBe(expected);
    }
  });
});

describe("text widths", () => {
  it("are prettier's for every character the printer measures", () => {
    const narrow: number[] = [];
    for (let code = 0x20; code <= 0x2fff; code++) {
      const char = String.fromCharCode(code);
      let width: number | undefined;
      try {
        width = textWidth(char);
      } catch (error) {
        if (!(error instanceof Unsupported)) throw error;
      }
      if (width === undefined) continue;
      narrow.push(code);
      expect(width, `U+${code.toString(16)}`).toBe(util.getStringWidth(char));
    }
    // Latin, Greek, Cyrillic and general punctuation are measured, not handed to prettier.
    expect(narrow.length).toBeGreaterThan(1500);
    // Together too (DEL counts only in pure ASCII text: prettier skips it as a control character elsewhere).
    const sample = narrow
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c))
      .join("");
    expect(textWidth(sample)).toBe(util.getStringWidth(sample));
    expect(textWidth("a\x7fb")).toBe(util.getStringWidth("a\x7fb"));
    expect(() => textWidth("\x7fé")).toThrow(Unsupported);
  });

  it("are not guessed for wide characters", () => {
    for (const text of ["中文", "🚀", "한국어", "e\u0301"])
      expect(() => textWidth(text)).toThrow(Unsupported);
  });
});

describe("the generate path", () => {
  // Static imports reachable from src/generate/index.ts (dynamic import() and createRequire are on demand).
  function staticImports(file: string, seen = new Set<string>()): Set<string> {
    if (seen.has(file)) return seen;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(
      /^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms,
    )) {
      const specifier = match[1]!;
      if (specifier.startsWith("."))
        staticImports(resolve(dirname(file), specifier.replace(/\.js$/, ".ts")), seen);
      else seen.add(specifier);
    }
    return seen;
  }

  it("loads no package: neither prettier, json-schema-to-typescript, handlebars, Ajv nor jsonc-parser", () => {
    // What `create-agent generate` imports: the manifest module (loadManifest) and the generators.
    const seen = new Set<string>();
    staticImports(join(import.meta.dirname, "../../src/manifest/index.ts"), seen);
    const loaded = [
      ...staticImports(join(import.meta.dirname, "../../src/generate/index.ts"), seen),
    ];
    const packages = loaded.filter((s) => !s.startsWith("/") && !s.startsWith("node:"));
    expect(packages).toEqual([]);
    expect(loaded.some((s) => s.endsWith("/generate/format.ts"))).toBe(false);
    expect(loaded.some((s) => s.endsWith("/generate/templates.ts"))).toBe(false);
  });
});
