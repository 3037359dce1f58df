import { describe, expect, it, vi } from "vitest";
import { afterLogs, createLogger } from "../../templates/runtime/ops/logger.js";

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

  it("reads only the part of a large value it writes (cheap whatever the size)", () => {
    const { logger, last } = capture();
    // Every element read of a 200,000-row array is counted: logging it must not walk it.
    let reads = 0;
    const rows = new Proxy(
      Array.from({ length: 200_000 }, (_, i) => ({ i, s: "z".repeat(100) })),
      {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver);
        },
      },
    );
    for (let i = 0; i < 100; i++) logger.info("big", { big: { rows } });
    expect(reads).toBeLessThanOrEqual(100 * 50);
    const shown = last().big.rows;
    expect(shown).toHaveLength(51);
    expect(shown[49]).toEqual({ i: 49, s: "z".repeat(100) });
    expect(shown[50]).toBe("[… 199950 more items]");
  });
});

describe("logger fast path (flat fields) writes what the full path would", () => {
  it("keeps field order, later values winning, reserved names renamed, undefined dropped", () => {
    const { last, lines, logger } = capture();
    logger.child({ request_id: "r1", job_id: "first", time: "t" }).info("job finished", {
      job_id: "second",
      n: 1,
      ok: true,
      nan: NaN,
      none: null,
      gone: undefined,
    });
    expect(lines[0]).toMatch(
      /^\{"time":"[^"]+","level":"info","msg":"job finished","request_id":"r1","job_id":"second","field_time":"t","n":1,"ok":true,"nan":null,"none":null\}$/,
    );
    expect(last().job_id).toBe("second");
  });

  it("escapes line breakers and falls back to the full path for long strings and many keys", () => {
    const { last, lines, logger } = capture();
    logger.info("a\u2028b", { v: "c\u0085d" });
    expect(lines[0]).not.toMatch(BREAKERS);
    expect(last()).toMatchObject({ msg: "a\u2028b", v: "c\u0085d" });
    logger.info("long", { v: "x".repeat(2_001) });
    expect(last().v).toMatch(/^x{2000}… \(1 more characters\)$/);
    logger.info("wide", Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])));
    expect(last()["…"]).toBe("1 more keys");
  });

  it("never throws on a throwing getter among flat fields", () => {
    const { last, logger } = capture();
    const fields = Object.defineProperty({ a: 1 }, "boom", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    expect(() => logger.info("getter", fields)).not.toThrow();
    expect(last()).toMatchObject({ msg: "getter", log_error: "no" });
  });
});

describe("logger fast path agrees with the full path", () => {
  it("on many mixes of flat fields (compared with a line forced through the full path)", () => {
    const { lines, logger } = capture();
    const samples: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{}, {}],
      [{ request_id: "r" }, { job_id: "j", capability: "c", status: 200, ms: 3 }],
      [
        { job_id: "a", capability: "c" },
        { job_id: "b", extra: null, nan: NaN, inf: -Infinity },
      ],
      [
        { time: "t", msg: "m" },
        { level: "l", ok: false, gone: undefined },
      ],
      [{ "odd key \u2028": "v\u0085" }, { "1": "index", b: "x" }],
      [{ field_time: "x" }, { time: 1 }],
      [{ a: "é✓" }, { z: '\n\r\t"\\' }],
    ];
    for (const [base, fields] of samples) {
      logger.child(base).info("m", fields);
      // A nested empty object sends the same entry through formatLine; then it is taken out again.
      logger.child(base).info("m", { ...fields, zz_forced: {} });
      const fast = JSON.parse(lines.at(-2)!);
      const full = JSON.parse(lines.at(-1)!);
      delete full.zz_forced;
      delete fast.time;
      delete full.time;
      expect(JSON.stringify(fast)).toBe(JSON.stringify(full));
      expect(lines.at(-2)).not.toMatch(BREAKERS);
    }
  });
});

describe("the default output (stdout, stderr)", () => {
  it("writes a turn's stdout lines with one write, in order, before a stderr line and before the answers waiting for them", async () => {
    const writes: Array<[stream: string, text: string]> = [];
    const spy = (stream: "stdout" | "stderr") =>
      vi.spyOn(process[stream], "write").mockImplementation((chunk) => {
        writes.push([stream, String(chunk)]);
        return true;
      });
    const stdout = spy("stdout");
    const stderr = spy("stderr");
    const messages = (text: string) =>
      text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line).msg);
    const seen = () => writes.map(([stream, text]) => [stream, messages(text)]);
    try {
      afterLogs(() => writes.push(["answer", "{}"])); // nothing waiting: sent at once
      expect(writes).toEqual([["answer", "{}"]]);
      writes.length = 0;

      const logger = createLogger({ level: "info" });
      logger.info("one");
      afterLogs(() => writes.push(["answer", '{"msg":"answer one"}']));
      logger.info("two");
      expect(writes).toEqual([]); // not yet: at the end of this turn of the event loop
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen()).toEqual([
        ["stdout", ["one", "two"]],
        ["answer", ["answer one"]],
      ]);

      logger.info("three");
      logger.error("four"); // stdout's waiting line goes first: the order is kept
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen().slice(2)).toEqual([
        ["stdout", ["three"]],
        ["stderr", ["four"]],
      ]);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
  });
});
