import { describe, expect, it } from "vitest";
import { createLogger } from "../../templates/runtime/ops/logger.js";

function capture(level = "debug") {
  const lines: string[] = [];
  const logger = createLogger({ level, write: (line) => lines.push(line) });
  const last = (): Record<string, any> => JSON.parse(lines.at(-1)!);
  return { lines, logger, last };
}

const BREAKERS = /[\n\r\u2028\u2029\u0085]/;

describe("logger hardening", () => {
  it("writes exactly one line when message and fields hold U+2028, U+2029, U+0085 or newlines", () => {
    const { lines, logger, last } = capture();
    const nasty = "a\u2028b\u2029c\u0085d\ne\rf";
    logger
      .child({ base: nasty })
      .info(nasty, { field: nasty, nested: { list: [nasty] }, [nasty]: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(BREAKERS);
    const entry = last();
    expect(entry.msg).toBe(nasty);
    expect(entry.field).toBe(nasty);
    expect(entry.base).toBe(nasty);
    expect(entry.nested.list[0]).toBe(nasty);
    expect(entry[nasty]).toBe(1);
  });

  it("clips a 900 KB field, message, nested value and key", () => {
    const { lines, logger, last } = capture();
    const huge = "x".repeat(900_000);
    logger.warn(huge, { big: huge, deep: { list: [huge, huge] }, [huge]: "k" });
    expect(lines[0]!.length).toBeLessThan(20_000);
    const entry = last();
    expect(entry.msg).toMatch(/^x{2000}… \(898000 more characters\)$/);
    expect(entry.big).toMatch(/^x{2000}… \(898000 more characters\)$/);
    expect(entry.deep.list[0]).toMatch(/^x{2000}…/);
  });

  it("keeps a line bounded however many strings it holds", () => {
    const { lines, logger } = capture();
    const many = Array.from({ length: 40 }, () => "y".repeat(5_000));
    logger.info("many", { a: many, b: many, c: many });
    expect(lines[0]!.length).toBeLessThan(60_000);
  });

  it("does not throw on BigInt, circular, throwing getters or toJSON", () => {
    const { lines, logger, last } = capture();
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    const shared = { v: 1 };
    const getter = Object.defineProperty({}, "boom", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    const badJson = {
      toJSON: () => {
        throw new Error("nope");
      },
    };
    expect(() =>
      logger.error("odd values", {
        amount: 10n,
        circular,
        pair: [shared, shared],
        getter,
        badJson,
      }),
    ).not.toThrow();
    expect(lines).toHaveLength(1);
    const entry = last();
    expect(entry.amount).toBe("10");
    expect(entry.circular).toEqual({ name: "loop", self: "[Circular]" });
    expect(entry.pair).toEqual([{ v: 1 }, { v: 1 }]); // shared, not circular
    expect(entry.getter.boom).toContain("unreadable");
    expect(entry.badJson).toContain("unserializable");
  });

  it("logs Errors as name, message and stack", () => {
    const { logger, last } = capture();
    const err = new TypeError("bad thing", { cause: new Error("root") });
    logger.error("failed", { error: err });
    const entry = last();
    expect(entry.error.name).toBe("TypeError");
    expect(entry.error.message).toBe("bad thing");
    expect(entry.error.stack).toContain("bad thing");
    expect(entry.error.cause.message).toBe("root");
  });

  it("cuts deep and long structures, saying what was cut", () => {
    const { logger, last } = capture();
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    const long = Array.from({ length: 10_000 }, (_, i) => i);
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
    logger.info("shapes", { deep, long, wide, set: new Set([1, 2]), map: new Map([["a", 1]]) });
    const entry = last();
    expect(JSON.stringify(entry.deep)).toContain("too deep");
    expect(entry.long).toHaveLength(51);
    expect(entry.long[50]).toBe("[… 9950 more items]");
    expect(entry.wide["…"]).toBe("400 more keys");
    expect(entry.set).toEqual([1, 2]);
    expect(entry.map).toEqual([["a", 1]]);
  });

  it("keeps time, level and msg its own", () => {
    const { last, logger } = capture();
    logger.info("real", { level: "error", msg: "fake" });
    expect(last()).toMatchObject({
      level: "info",
      msg: "real",
      field_level: "error",
      field_msg: "fake",
    });
  });

  it("stays cheap on a large value", () => {
    const { logger } = capture();
    const big = { rows: Array.from({ length: 200_000 }, (_, i) => ({ i, s: "z".repeat(100) })) };
    const started = performance.now();
    for (let i = 0; i < 100; i++) logger.info("big", { big });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
