/**
 * The logger's safety net (logger.ts): a JSON-safe, bounded copy of whatever is logged. Strings are
 * clipped, deep or huge structures are cut (saying what was cut), BigInts become strings, cycles
 * become "[Circular]", Errors become { name, message, stack }; it never throws.
 * Part of your project: edit freely.
 */
import { clip } from "./text.js";

/** Each string (message, field value, error stack...) is cut to this many characters. */
export const MAX_STRING = 2_000;
/** Object keys are cut to this many characters. */
export const MAX_KEY = 200;
/** Nesting deeper than this is replaced by a placeholder. */
export const MAX_DEPTH = 6;
/** Arrays (and Sets, Maps) show this many entries, then say how many more there were. */
export const MAX_ITEMS = 50;
/** Objects show this many keys, then say how many more there were. */
export const MAX_KEYS = 100;
/** At most this many values are written per line; the rest are replaced by a placeholder. */
export const MAX_NODES = 1_000;
/** Total characters of strings per line; once spent, further strings are reduced to their length. */
export const MAX_TOTAL_CHARS = 32_000;

export interface Budget {
  nodes: number;
  chars: number;
}

export function clipString(text: string, budget: Budget, max = MAX_STRING): string {
  const clipped = clip(text, Math.min(max, budget.chars));
  budget.chars = Math.max(0, budget.chars - clipped.length);
  return clipped;
}

function describeError(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: err.message, stack: err.stack };
  const extra = err as Error & { code?: unknown; cause?: unknown };
  if (typeof extra.code === "string" || typeof extra.code === "number") out.code = extra.code;
  if (extra.cause !== undefined) out.cause = extra.cause;
  return out;
}

/**
 * A JSON-safe copy of `value`: only plain objects, arrays, strings, finite-or-not numbers, booleans
 * and null (undefined is kept so JSON drops it as usual). Never throws.
 * `ancestors` holds the objects on the current path, so shared (non-circular) references still print.
 */
export function sanitize(
  value: unknown,
  depth: number,
  ancestors: Set<object>,
  budget: Budget,
): unknown {
  if (budget.nodes <= 0) return "[truncated: too many values]";
  budget.nodes -= 1;
  if (typeof value !== "object") return sanitizeScalar(value, budget);
  if (value === null) return null;
  if (ancestors.has(value)) return "[Circular]";
  try {
    return sanitizeObject(value, depth, ancestors, budget);
  } catch (err) {
    // A throwing getter, toJSON or Proxy trap: describe the failure instead of failing the log line.
    return clipString(
      `[unserializable: ${err instanceof Error ? err.message : String(err)}]`,
      budget,
      200,
    );
  }
}

/** Everything that is not an object: strings clipped, BigInts and symbols as text, functions named. */
function sanitizeScalar(value: unknown, budget: Budget): unknown {
  switch (typeof value) {
    case "string":
      return clipString(value, budget);
    case "bigint":
      return value.toString();
    case "symbol":
      return clipString(value.toString(), budget);
    case "function":
      return clipString(`[Function ${value.name || "anonymous"}]`, budget);
    default:
      return value; // number, boolean, undefined
  }
}

/** An object not on the current path: dates, buffers and too-deep ones as text, the rest walked. */
function sanitizeObject(
  obj: object,
  depth: number,
  ancestors: Set<object>,
  budget: Budget,
): unknown {
  if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
  if (ArrayBuffer.isView(obj)) return `[${obj.constructor.name} ${obj.byteLength} bytes]`;
  if (obj instanceof ArrayBuffer) return `[ArrayBuffer ${obj.byteLength} bytes]`;
  if (depth >= MAX_DEPTH) return Array.isArray(obj) ? "[Array: too deep]" : "[Object: too deep]";
  ancestors.add(obj);
  try {
    return sanitizeContents(obj, depth, ancestors, budget);
  } finally {
    ancestors.delete(obj);
  }
}

/** An object's contents: errors, arrays, sets, maps, toJSON() results and plain keys. */
function sanitizeContents(
  obj: object,
  depth: number,
  ancestors: Set<object>,
  budget: Budget,
): unknown {
  if (obj instanceof Error)
    return sanitizeEntries(Object.entries(describeError(obj)), 0, depth, ancestors, budget);
  if (Array.isArray(obj)) return sanitizeList(obj, obj.length, depth, ancestors, budget);
  if (obj instanceof Set)
    return sanitizeList([...take(obj, MAX_ITEMS)], obj.size, depth, ancestors, budget);
  if (obj instanceof Map)
    return sanitizeList([...take(obj.entries(), MAX_ITEMS)], obj.size, depth, ancestors, budget);
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    // What JSON.stringify would write (URL, Decimal...), made safe in turn.
    return sanitize(toJSON.call(obj), depth + 1, ancestors, budget);
  }
  const keys = Object.keys(obj);
  const shown = keys.length > MAX_KEYS ? keys.slice(0, MAX_KEYS) : keys;
  const entries: [string, unknown][] = [];
  for (const key of shown) {
    let item: unknown;
    try {
      item = (obj as Record<string, unknown>)[key];
    } catch (err) {
      item = `[unreadable: ${err instanceof Error ? err.message : String(err)}]`;
    }
    entries.push([key, item]);
  }
  return sanitizeEntries(entries, keys.length - shown.length, depth, ancestors, budget);
}

function* take<T>(items: Iterable<T>, count: number): Generator<T> {
  if (count <= 0) return;
  let n = 0;
  for (const item of items) {
    yield item;
    if (++n >= count) return;
  }
}

function sanitizeList(
  items: readonly unknown[],
  total: number,
  depth: number,
  ancestors: Set<object>,
  budget: Budget,
): unknown[] {
  const shown = Math.min(items.length, MAX_ITEMS);
  const out: unknown[] = [];
  for (let i = 0; i < shown; i++) {
    const item = sanitize(items[i], depth + 1, ancestors, budget);
    out.push(item === undefined ? null : item); // as JSON.stringify writes it
  }
  if (total > shown) out.push(`[… ${total - shown} more items]`);
  return out;
}

function sanitizeEntries(
  entries: [string, unknown][],
  more: number,
  depth: number,
  ancestors: Set<object>,
  budget: Budget,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    out[clip(key, MAX_KEY)] = sanitize(item, depth + 1, ancestors, budget);
  }
  if (more > 0) out["…"] = `${more} more keys`;
  return out;
}
