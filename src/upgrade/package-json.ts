import { isDeepStrictEqual } from "node:util";
import type { MergeLabels } from "./merge3.js";
import { isObject } from "../json-object.js";

/** A dependency whose version `upgrade` changes (from: before, to: after; undefined: absent). */
export interface DependencyChange {
  section: string;
  name: string;
  from?: string;
  to?: string;
}

export interface PackageJsonMerge {
  text: string;
  /** Conflict blocks written into `text` (values both sides changed differently). */
  conflicts: number;
  /** What changes in dependencies, devDependencies...: say so, and to reinstall. */
  dependencyChanges: DependencyChange[];
  /** Pinned dependencies you had changed, moved to create-agent's new pin anyway (said in the report). */
  overridden: string[];
}

const DEPENDENCY_SECTIONS = new Set([
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
]);

type Json = unknown;
type JsonObject = Record<string, Json>;
const same = (a: Json, b: Json): boolean => isDeepStrictEqual(a, b);

/**
 * Three-way merge of package.json, key by key rather than line by line (a dependency the user added next
 * to one create-agent bumps is not a conflict):
 * - a key only one side changed takes that side's value (added, changed or removed);
 * - dependencies create-agent pins move to its new versions, even where you had changed one (listed in
 *   `overridden`); dependencies you added stay;
 * - any other value both sides changed differently keeps both in git-style conflict markers, at the
 *   property's line, and counts as a conflict.
 * The result keeps your key order (new keys after yours; dependency sections stay sorted if they were)
 * and your indentation.
 */
export function mergePackageJson(
  baseText: string,
  oursText: string,
  theirsText: string,
  labels: MergeLabels,
): PackageJsonMerge {
  const base = parse(baseText, labels.base);
  const ours = parse(oursText, "yours");
  const theirs = parse(theirsText, labels.theirs);
  const clashes: Array<{ ours: Json; base: Json; theirs: Json }> = [];
  const overridden: string[] = [];

  const merge = (path: string[], b: Json, o: Json, t: Json): Json => {
    if (same(o, t)) return o;
    if (same(b, o)) return t;
    if (same(b, t)) return o;
    if (isObject(o) && isObject(t)) {
      const baseObject = isObject(b) ? b : {};
      const keys = [...Object.keys(o), ...Object.keys(t).filter((k) => !(k in o))];
      if (DEPENDENCY_SECTIONS.has(path[0] ?? "") && path.length === 1 && isSorted(Object.keys(o)))
        keys.sort();
      const out: JsonObject = {};
      for (const key of keys) {
        const value = merge([...path, key], baseObject[key], o[key], t[key]);
        if (value !== undefined) out[key] = value;
      }
      return out;
    }
    // Both changed it, differently.
    if (path.length === 2 && DEPENDENCY_SECTIONS.has(path[0]!)) {
      overridden.push(
        `${path[1]}: yours ${o === undefined ? "removed" : JSON.stringify(o)}, now ${t === undefined ? "removed" : JSON.stringify(t)} (${path[0]})`,
      );
      return t;
    }
    clashes.push({ ours: o, base: b, theirs: t });
    return `${CLASH}${clashes.length - 1}`;
  };

  const merged = merge([], base, ours, theirs);
  const indent = /^\{\r?\n([ \t]+)"/.exec(oursText)?.[1] ?? "  ";
  let text = JSON.stringify(merged, null, indent);
  text = text.replace(
    new RegExp(`^([ \\t]*)(.*)"${CLASH_IN_JSON}(\\d+)"(,?)$`, "gm"),
    (_line, pad: string, key: string, index: string, comma: string) => {
      const clash = clashes[Number(index)]!;
      const variant = (value: Json) =>
        value === undefined
          ? ""
          : `${pad}${key}${JSON.stringify(value, null, indent).replaceAll("\n", `\n${pad}`)}${comma}\n`;
      return (
        `<<<<<<< ${labels.ours}\n${variant(clash.ours)}` +
        `||||||| ${labels.base}\n${variant(clash.base)}` +
        `=======\n${variant(clash.theirs)}` +
        `>>>>>>> ${labels.theirs}`
      );
    },
  );
  if (oursText.endsWith("\n")) text += "\n";
  // Its line endings as they were (a CRLF checkout stays CRLF, as the files merged beside it).
  if (oursText.includes("\r\n")) text = text.replaceAll("\n", "\r\n");

  return {
    text,
    conflicts: clashes.length,
    dependencyChanges: dependencyChanges(ours, merged),
    overridden,
  };
}

/** Stands in for a clashing value until its conflict block is written (no JSON string holds a NUL). */
const CLASH = "\u0000create-agent-clash-";
/** CLASH as JSON.stringify writes it ("\\u0000..."), escaped for a RegExp. */
const CLASH_IN_JSON = JSON.stringify(CLASH).slice(1, -1).replaceAll("\\", "\\\\");

function dependencyChanges(before: Json, after: Json): DependencyChange[] {
  const changes: DependencyChange[] = [];
  for (const section of DEPENDENCY_SECTIONS) {
    const from = isObject(before) && isObject(before[section]) ? before[section] : {};
    const to = isObject(after) && isObject(after[section]) ? after[section] : {};
    for (const name of new Set([...Object.keys(from), ...Object.keys(to)])) {
      if (same(from[name], to[name])) continue;
      changes.push({
        section,
        name,
        ...(typeof from[name] === "string" && { from: from[name] }),
        ...(typeof to[name] === "string" && { to: to[name] }),
      });
    }
  }
  return changes;
}

function isSorted(keys: string[]): boolean {
  return keys.every((key, i) => i === 0 || keys[i - 1]! <= key);
}

function parse(text: string, which: string): JsonObject {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `package.json (${which}) is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(value)) throw new Error(`package.json (${which}) is not a JSON object`);
  return value;
}
