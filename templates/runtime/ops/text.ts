/**
 * Small helpers for bounding what the service echoes back (in error messages) or writes to its logs,
 * so a 900 KB field name or value is never repeated whole. Part of your project: edit freely.
 */

/**
 * `text` unchanged when it has at most `max` characters (UTF-16 code units); otherwise its first
 * `max` characters, never splitting a surrogate pair, followed by `… (N more characters)`.
 */
export function clip(text: string, max: number): string {
  const limit = Math.max(0, Math.floor(max));
  if (text.length <= limit) return text;
  let end = limit;
  // Do not keep the high half of a surrogate pair without its low half.
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)))
    end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/**
 * How many characters `text` has as JSON Schema's minLength/maxLength (and Ajv) count them: Unicode
 * code points, so an emoji is one character, not two UTF-16 units. Counting stops once it passes
 * `atMost` (the answer is then `atMost + 1`), so a huge string costs no more than the bound.
 */
export function characterCount(text: string, atMost = Infinity): number {
  // A code point is one or two UTF-16 units: more than twice the bound in units is over it.
  if (text.length > 2 * atMost) return atMost + 1;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    if (++count > atMost) return count;
    // A high surrogate followed by a low one is one code point (Ajv's ucs2length counts the same way).
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) i++;
  }
  return count;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Characters JSON.stringify leaves raw that still break or disturb a line: U+2028 and U+2029
 * (line and paragraph separators), DEL and the C1 controls (U+0085 "next line" among them).
 */
const RAW_LINE_BREAKERS = /[\u007f-\u009f\u2028\u2029]/g;

/** Escapes what JSON.stringify leaves raw but breaks lines, as `\u2028` etc.; the JSON still parses to the same value. */
export function escapeLineBreakers(json: string): string {
  return json.replace(
    RAW_LINE_BREAKERS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * The value as JSON (strings quoted and escaped), on one line, clipped to `max` characters:
 * for echoing a caller's value inside a message, e.g. `unknown field "x"`.
 * Values JSON cannot represent are described instead (`undefined`, `12n`, `[Circular]`...).
 */
export function quote(value: unknown, max = 120): string {
  let json: string | undefined;
  if (typeof value === "bigint") json = `${value}n`;
  else if (typeof value === "symbol") json = value.toString();
  else if (typeof value === "function") json = `[Function ${value.name || "anonymous"}]`;
  else {
    try {
      json = JSON.stringify(value);
    } catch {
      json = "[unserializable value]"; // circular, or a BigInt nested somewhere
    }
  }
  return clip(escapeLineBreakers(json ?? String(value)), max);
}

/** Line breaks (\r\n, \r, \n, U+2028, U+2029, U+0085) replaced by single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, " ");
}
