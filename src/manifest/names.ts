/**
 * Naming rules and case conversions. Capability names become file names (src/capabilities/<name>.ts),
 * object keys looked up at runtime and TypeScript type names, so each rule below prevents a concrete breakage.
 */

export const CAPABILITY_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_FIELD_NAME_LENGTH = 64;

/** Object.prototype members: a capability named like one would be "found" on any plain-object lookup. */
export const RESERVED_PROPERTY_NAMES = [
  "__proto__",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
  "constructor",
  "hasOwnProperty",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "prototype",
  "toLocaleString",
  "toString",
  "valueOf",
] as const;

/** Device names that Windows refuses as file names, with any extension. */
export const WINDOWS_RESERVED_NAMES = [
  "con",
  "prn",
  "aux",
  "nul",
  ...Array.from({ length: 9 }, (_, i) => `com${i + 1}`),
  ...Array.from({ length: 9 }, (_, i) => `lpt${i + 1}`),
] as const;

/** Field names that would hit the prototype when the runtime reads `input[name]`. */
export const RESERVED_FIELD_NAMES = ["__proto__", "constructor", "prototype"] as const;

/** Why a capability name is unusable, or undefined when it is fine. */
export function capabilityNameProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (name === "") return "capability name must not be empty";
  if ((RESERVED_PROPERTY_NAMES as readonly string[]).some((r) => r.toLowerCase() === lower)) {
    return `capability name "${name}" is reserved: it is a built-in JavaScript property name, which breaks lookups by name; choose another name`;
  }
  if ((WINDOWS_RESERVED_NAMES as readonly string[]).includes(lower)) {
    return `capability name "${name}" is a reserved device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9), so its handler file could not be created there; choose another name`;
  }
  if (name.length > 64) return `capability name "${name}" is too long (${name.length} characters); use at most 64`;
  if (CAPABILITY_NAME_PATTERN.test(name)) return undefined;
  const why = /[/\\]|\.\./.test(name)
    ? "a name with path characters could write its handler file outside the project"
    : "it becomes a file name and a TypeScript type name";
  if (/[^A-Za-z0-9_-]/.test(name)) {
    return `capability name "${name}" contains ${describeChars(name, /[A-Za-z0-9_-]/)}: use only letters, digits, "_" and "-" (${why})`;
  }
  return `capability name "${name}" must start with a letter (${why})`;
}

/** Why a field name is unusable, or undefined when it is fine. */
export function fieldNameProblem(name: string): string | undefined {
  if ((RESERVED_FIELD_NAMES as readonly string[]).includes(name)) {
    return `field name "${name}" is reserved: it would read the JavaScript prototype instead of the field; choose another name`;
  }
  if (name.length > MAX_FIELD_NAME_LENGTH) {
    return `field name "${name.slice(0, 20)}..." is too long (${name.length} characters); use at most ${MAX_FIELD_NAME_LENGTH}`;
  }
  if (FIELD_NAME_PATTERN.test(name)) return undefined;
  const hint = `use letters, digits and "_" only, not starting with a digit, so it is a plain TypeScript property`;
  const fixed = name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(?=[0-9])/, "_");
  const example = fixed !== "" && FIELD_NAME_PATTERN.test(fixed) ? ` (e.g. "${fixed}")` : "";
  if (name === "") return `field name must not be empty`;
  if (/^[0-9]/.test(name) && /^[A-Za-z0-9_]*$/.test(name)) {
    return `field name "${name}" starts with a digit: ${hint}${example}`;
  }
  return `field name "${name}" contains ${describeChars(name, /[A-Za-z0-9_]/)}: ${hint}${example}`;
}

/** `"." and "/"` / `a space` — the distinct characters of `text` not matching `allowed`. */
function describeChars(text: string, allowed: RegExp): string {
  const bad = [...new Set([...text].filter((c) => !allowed.test(c)))];
  const words = bad.map((c) => (c === " " ? "a space" : /\s/.test(c) ? JSON.stringify(c) : `"${c}"`));
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

/** Splits on anything that is not a letter or digit: "extract-entities" / "extract_entities" -> ["extract", "entities"]. */
function words(name: string): string[] {
  return name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
}

/**
 * PascalCase type name. Only the first letter of each word is upper-cased and the rest is kept as written,
 * so "getURL" -> "GetURL" and "fooBar" -> "FooBar" (which is why "foo-bar" and "fooBar" collide).
 */
export function toTypeName(name: string): string {
  return words(name)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/**
 * camelCase identifier: the type name with its leading capital run lowered, keeping the capital that starts
 * the next word: "ExtractEntities" -> "extractEntities", "GetURL" -> "getURL", "URLParser" -> "urlParser".
 */
export function toIdentifier(name: string): string {
  const pascal = toTypeName(name);
  const run = /^[A-Z]+/.exec(pascal)?.[0] ?? "";
  if (run.length <= 1) return pascal.charAt(0).toLowerCase() + pascal.slice(1);
  const rest = pascal.slice(run.length);
  // "URLParser": the run is "URLP" and "P" begins "Parser"; "GetURL"'s run "G" is handled above.
  const keep = /^[a-z]/.test(rest) ? 1 : 0;
  return run.slice(0, run.length - keep).toLowerCase() + run.slice(run.length - keep) + rest;
}

/** npm package name rules: lowercase, URL-safe, optionally scoped, at most 214 characters. */
export const PACKAGE_NAME_PATTERN = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

export function packageNameProblem(name: string): string | undefined {
  if (name.length > 214) return `package name is too long (${name.length} characters); npm allows at most 214`;
  if (PACKAGE_NAME_PATTERN.test(name)) return undefined;
  const example = name
    .toLowerCase()
    .replace(/[^a-z0-9._@/-]+/g, "-")
    .replace(/^[-._]+|[-._]+$/g, "");
  const hint = PACKAGE_NAME_PATTERN.test(example) ? ` (e.g. "${example}")` : "";
  return `"${name}" is not a valid npm package name: use lowercase letters, digits, "-", "." and "_", starting with a letter or digit, optionally scoped as "@scope/name"${hint}`;
}

/** semver.org's MAJOR.MINOR.PATCH with optional -prerelease and +build. */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
