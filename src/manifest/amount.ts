/**
 * Prices are decimal strings in USDC, which has 6 decimals on-chain. Amounts never go through floating point:
 * "0.1" + "0.2" style rounding would change what the caller is charged.
 */

export const USDC_DECIMALS = 6;
const DECIMAL = /^\d+(\.\d+)?$/;

/** Why an amount string is unusable, or undefined when it is a positive decimal with at most 6 decimals. */
export function amountProblem(amount: string): string | undefined {
  if (amount.trim() === "") return `amount is empty; write a positive decimal such as "0.01"`;
  if (amount.startsWith("-") && DECIMAL.test(amount.slice(1))) {
    return `amount "${amount}" is negative; the price per job must be greater than 0`;
  }
  if (/^[+-]?(\d+\.?\d*|\.\d+)[eE][+-]?\d+$/.test(amount)) {
    const plain = expandExponent(amount);
    const example = plain !== undefined && DECIMAL.test(plain) ? `"${plain}"` : `"0.001"`;
    return `amount "${amount}" uses exponent notation; write a plain decimal instead, e.g. ${example}`;
  }
  if (!DECIMAL.test(amount)) {
    return `amount "${amount}" is not a decimal number; write digits with an optional "." and decimals, e.g. "0.01"`;
  }
  const decimals = amount.split(".")[1]?.length ?? 0;
  if (decimals > USDC_DECIMALS) {
    return `amount "${amount}" has ${decimals} decimal places; USDC has ${USDC_DECIMALS}, so use at most ${USDC_DECIMALS} (the smallest price is "0.000001")`;
  }
  if (!/[1-9]/.test(amount)) return `amount "${amount}" is zero; the price per job must be greater than 0`;
  return undefined;
}

/** "0.01" -> "10000" (USDC atomic units, 10^-6). Throws on anything amountProblem rejects. */
export function toAtomicAmount(amount: string): string {
  const problem = amountProblem(amount);
  if (problem !== undefined) throw new Error(problem);
  const [whole = "0", fraction = ""] = amount.split(".");
  return BigInt(whole + fraction.padEnd(USDC_DECIMALS, "0")).toString();
}

/** "1e-3" -> "0.001", "2.5E2" -> "250": used only to suggest the plain spelling of a number. */
export function expandExponent(text: string): string | undefined {
  const match = /^([+-]?)(\d*)\.?(\d*)[eE]([+-]?\d+)$/.exec(text);
  if (match === null) return undefined;
  const [, sign = "", whole = "", fraction = "", exponentText = "0"] = match;
  const exponent = Number(exponentText);
  if (Math.abs(exponent) > 30) return undefined;
  const digits = whole + fraction;
  const point = whole.length + exponent;
  let result: string;
  if (point <= 0) result = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) result = digits + "0".repeat(point - digits.length);
  else result = `${digits.slice(0, point)}.${digits.slice(point)}`;
  result = result.replace(/^0+(?=\d)/, "");
  if (result.includes(".")) result = result.replace(/0+$/, "").replace(/\.$/, "");
  return sign === "-" ? `-${result}` : result;
}
