/**
 * The one test the runtime applies to a parsed body, header or payload before reading its fields.
 * Part of your project: edit freely.
 */

/** A JSON object (not an array, not null): what `JSON.parse` gives for `{...}`. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
