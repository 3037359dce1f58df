import { describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import {
  characterCount,
  clip,
  escapeLineBreakers,
  oneLine,
  quote,
} from "../../templates/runtime/ops/text.js";

// The oracle: Ajv, which checks inputs' minLength/maxLength, finds exactly that many characters.
const exactLength = (n: number) =>
  new Ajv().compile({ type: "string", minLength: n, maxLength: n });

describe("clip", () => {
  it("leaves short text alone", () => {
    expect(clip("hello", 5)).toBe("hello");
    expect(clip("", 0)).toBe("");
  });

  it("cuts long text and says how much was cut", () => {
    expect(clip("hello world", 5)).toBe("hello… (6 more characters)");
    expect(clip("abc", 0)).toBe("… (3 more characters)");
  });

  it("never splits a surrogate pair", () => {
    const text = "ab😀cd"; // 😀 is two UTF-16 code units at 2 and 3
    expect(clip(text, 3)).toBe("ab… (4 more characters)");
    expect(clip(text, 4)).toBe("ab😀… (2 more characters)");
    const kept = clip("😀".repeat(10), 5).split("…")[0]!;
    expect(kept).toBe("😀😀");
    expect(kept.charCodeAt(kept.length - 1)).toBe("😀".charCodeAt(1)); // ends on a low surrogate
  });

  it("bounds a 900 KB string", () => {
    const out = clip("x".repeat(900_000), 100);
    expect(out.length).toBeLessThan(130);
    expect(out).toContain("899900 more characters");
  });
});

describe("quote", () => {
  it("quotes strings and JSON-encodes other values", () => {
    expect(quote("x")).toBe('"x"');
    expect(quote(5)).toBe("5");
    expect(quote(null)).toBe("null");
    expect(quote({ a: [1, "b"] })).toBe('{"a":[1,"b"]}');
    expect(quote(undefined)).toBe("undefined");
    expect(quote(12n)).toBe("12n");
  });

  it("clips to max, 120 by default", () => {
    expect(quote("y".repeat(1000)).startsWith('"yyy')).toBe(true);
    expect(quote("y".repeat(1000)).length).toBeLessThan(150);
    expect(quote("y".repeat(900_000), 80).length).toBeLessThan(110);
  });

  it("stays on one line and never throws", () => {
    const out = quote("a\nb\r\u2028c\u2029d\u0085e");
    expect(out).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
    expect(JSON.parse(out)).toBe("a\nb\r\u2028c\u2029d\u0085e");
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => quote(circular)).not.toThrow();
    expect(() => quote({ n: 1n })).not.toThrow();
  });
});

describe("oneLine", () => {
  it("replaces every kind of line break with a space", () => {
    expect(oneLine("a\nb\r\nc\rd\u2028e\u2029f\u0085g")).toBe("a b c d e f g");
    expect(oneLine("plain")).toBe("plain");
  });
});

describe("escapeLineBreakers", () => {
  it("escapes U+2028, U+2029 and C1 controls so JSON stays one parseable line", () => {
    const json = escapeLineBreakers(JSON.stringify({ s: "\u2028\u2029\u0085" }));
    expect(json).toBe('{"s":"\\u2028\\u2029\\u0085"}');
    expect(JSON.parse(json)).toEqual({ s: "\u2028\u2029\u0085" });
  });
});

describe("characterCount", () => {
  it("counts code points as Ajv's maxLength does: an emoji is one character", () => {
    const samples = [
      "",
      "job-1",
      "😀",
      "😀".repeat(200),
      "a😀b€c",
      "\ud83d", // a lone high surrogate
      "\ude00x", // a lone low surrogate
      "\ud83d\ud83d\ude00", // high, then a pair
      "é̀", // a letter and combining marks: three code points
    ];
    for (const text of samples) {
      expect(exactLength(characterCount(text))(text), JSON.stringify(text)).toBe(true);
      expect(exactLength(characterCount(text) + 1)(text)).toBe(false);
    }
  });

  it("stops counting past the bound, and says atMost + 1", () => {
    expect(characterCount("😀".repeat(300), 256)).toBe(257);
    expect(characterCount("x".repeat(900_000), 256)).toBe(257);
    expect(characterCount("😀".repeat(256), 256)).toBe(256);
    expect(characterCount("😀".repeat(256) + "x", 256)).toBe(257);
  });
});
