import { describe, expect, it } from "vitest";
import { toAtomicAmount } from "../../src/manifest/index.js";
import { amountProblem, expandExponent } from "../../src/manifest/amount.js";

describe("toAtomicAmount", () => {
  it.each([
    ["0.01", "10000"],
    ["1", "1000000"],
    ["0.000001", "1"],
    ["12.5", "12500000"],
    ["1000000", "1000000000000"],
    ["0.1", "100000"],
    ["0.123456", "123456"],
    ["0.250000", "250000"],
    ["007.5", "7500000"],
    ["99999999999999999999.999999", "99999999999999999999999999"],
  ])("%s -> %s", (amount, atomic) => expect(toAtomicAmount(amount)).toBe(atomic));

  it.each(["0", "0.0", "-1", "abc", "1e-3", "0.0000001", "", " 1", ".5", "1.", "1,5", "+1", "0x10"])("throws on %j", (amount) =>
    expect(() => toAtomicAmount(amount)).toThrow(),
  );
});

describe("amountProblem", () => {
  it("explains each kind of mistake differently", () => {
    expect(amountProblem("-0.5")).toMatch(/negative/);
    expect(amountProblem("1e-3")).toMatch(/exponent.*"0\.001"/);
    expect(amountProblem("abc")).toMatch(/not a decimal number/);
    expect(amountProblem("0.0000001")).toMatch(/7 decimal places/);
    expect(amountProblem("0.000")).toMatch(/zero/);
    expect(amountProblem("")).toMatch(/empty/);
  });
});

describe("expandExponent", () => {
  it.each([
    ["1e-3", "0.001"],
    ["2.5E2", "250"],
    ["1.5e1", "15"],
    ["5e0", "5"],
    ["-1e-2", "-0.01"],
  ])("%s -> %s", (text, plain) => expect(expandExponent(text)).toBe(plain));
});
