/** Validation of the manifest's top level, capabilities and pricing (field descriptors live in fields.ts). */
import { amountProblem } from "./amount.js";
import type { PathSegment } from "./errors.js";
import { validateFieldMap } from "./fields.js";
import { capabilityNameProblem, packageNameProblem, SEMVER_PATTERN, toTypeName } from "./names.js";
import { entries, type Entry, type Node, type Source } from "./source.js";
import { suggest } from "../suggest.js";

const TOP_LEVEL_KEYS = ["$schema", "name", "version", "description", "capabilities"] as const;
const CAPABILITY_KEYS = ["description", "tags", "pricing", "input_schema", "output_schema"] as const;
/** Catalogue keywords (A2A skill tags, x402 Bazaar): a few short words. */
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;
const PRICING_KEYS = ["model", "amount", "currency"] as const;

/** What to show after "missing required key ..." so the fix can be copied. */
const MISSING_HINTS: Record<string, string> = {
  name: `, e.g. "name": "my-agent"`,
  version: `, e.g. "version": "0.1.0"`,
  capabilities: `, e.g. "capabilities": { "summarize": { ... } }`,
  pricing: `, e.g. "pricing": { "model": "per_job", "amount": "0.01", "currency": "USDC" }`,
  input_schema: `, e.g. "input_schema": { "text": { "type": "string", "required": true } } (use {} for no input)`,
  output_schema: `, e.g. "output_schema": { "result": { "type": "string" } }`,
  model: ` (always "per_job")`,
  amount: `, e.g. "amount": "0.01"`,
  currency: ` (always "USDC")`,
};

export function validateManifest(src: Source, root: Node): void {
  const top = knownKeys(src, root, [], TOP_LEVEL_KEYS, ["name", "version", "capabilities"]);
  string(src, top.get("$schema"), ["$schema"]);
  const name = string(src, top.get("name"), ["name"]);
  if (name !== undefined) {
    const problem = packageNameProblem(name.value);
    if (problem !== undefined) src.report(name.node, ["name"], problem);
  }
  const version = string(src, top.get("version"), ["version"]);
  if (version !== undefined && !SEMVER_PATTERN.test(version.value)) {
    src.report(version.node, ["version"], `"${version.value}" is not a semantic version: use MAJOR.MINOR.PATCH, e.g. "1.0.0" (optionally with -prerelease or +build)`);
  }
  string(src, top.get("description"), ["description"]);
  const capabilities = top.get("capabilities");
  if (capabilities !== undefined) validateCapabilities(src, capabilities);
}

function validateCapabilities(src: Source, node: Node): void {
  const path = ["capabilities"];
  if (node.type !== "object") {
    src.report(node, path, `must be an object mapping capability names to capabilities, found ${src.describe(node)}`);
    return;
  }
  const list = entries(node);
  if (list.length === 0) src.report(node, path, `declare at least one capability, e.g. "summarize": { "pricing": ..., "input_schema": ..., "output_schema": ... }`);
  const byFolded = new Map<string, Entry>();
  const byTypeName = new Map<string, Entry>();
  for (const entry of list) {
    const problem = capabilityNameProblem(entry.key);
    if (problem !== undefined) src.report(entry.keyNode, [...path, entry.key], problem);
    else reportCollision(src, entry, byFolded, byTypeName);
    validateCapability(src, entry.value, [...path, entry.key]);
  }
}

/** Names that differ only in case clash as file names on macOS/Windows; names with one PascalCase form clash as types. */
function reportCollision(src: Source, entry: Entry, byFolded: Map<string, Entry>, byTypeName: Map<string, Entry>): void {
  const folded = entry.key.toLowerCase();
  const typeName = toTypeName(entry.key);
  const sameFile = byFolded.get(folded);
  const sameType = byTypeName.get(typeName);
  const where = (other: Entry) => `"${other.key}" (line ${src.position(other.keyNode.offset).line})`;
  if (sameFile !== undefined) {
    src.report(entry.keyNode, ["capabilities", entry.key], `capability names "${entry.key}" and ${where(sameFile)} differ only in letter case: their handler files would collide on macOS and Windows; rename one`);
  } else if (sameType !== undefined) {
    src.report(entry.keyNode, ["capabilities", entry.key], `capability names "${entry.key}" and ${where(sameType)} both become the TypeScript type name "${typeName}"; rename one`);
  }
  if (sameFile === undefined) byFolded.set(folded, entry);
  if (sameType === undefined) byTypeName.set(typeName, entry);
}

function validateCapability(src: Source, node: Node, path: PathSegment[]): void {
  if (node.type !== "object") {
    src.report(node, path, `must be an object with "pricing", "input_schema" and "output_schema", found ${src.describe(node)}`);
    return;
  }
  const keys = knownKeys(src, node, path, CAPABILITY_KEYS, ["pricing", "input_schema", "output_schema"]);
  string(src, keys.get("description"), [...path, "description"]);
  const tags = keys.get("tags");
  if (tags !== undefined) validateTags(src, tags, [...path, "tags"]);
  const pricing = keys.get("pricing");
  if (pricing !== undefined) validatePricing(src, pricing, [...path, "pricing"]);
  const input = keys.get("input_schema");
  if (input !== undefined) validateFieldMap(src, input, [...path, "input_schema"], "input", "input_schema");
  const output = keys.get("output_schema");
  if (output !== undefined) validateFieldMap(src, output, [...path, "output_schema"], "output", "output_schema");
}

/** `tags`: an array of distinct, non-empty strings, at most MAX_TAGS of at most MAX_TAG_LENGTH characters. */
function validateTags(src: Source, node: Node, path: PathSegment[]): void {
  if (node.type !== "array") {
    src.report(node, path, `must be an array of keywords, e.g. ["text", "summarization"], found ${src.describe(node)}`);
    return;
  }
  const items = node.children ?? [];
  if (items.length > MAX_TAGS) src.report(node, path, `has ${items.length} tags; use at most ${MAX_TAGS}`);
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const at = [...path, index];
    if (item.type !== "string") {
      src.report(item, at, `must be a string, found ${src.describe(item)}`);
      return;
    }
    const tag = String(item.value);
    if (tag.trim() === "") src.report(item, at, "is empty; write a keyword such as \"summarization\"");
    else if (tag.length > MAX_TAG_LENGTH) src.report(item, at, `is ${tag.length} characters long; use at most ${MAX_TAG_LENGTH}`);
    else if (seen.has(tag.toLowerCase())) src.report(item, at, `repeats the tag "${tag}"`);
    seen.add(tag.toLowerCase());
  });
}

function validatePricing(src: Source, node: Node, path: PathSegment[]): void {
  if (node.type !== "object") {
    src.report(node, path, `must be an object like { "model": "per_job", "amount": "0.01", "currency": "USDC" }, found ${src.describe(node)}`);
    return;
  }
  const keys = knownKeys(src, node, path, PRICING_KEYS, PRICING_KEYS);
  const model = string(src, keys.get("model"), [...path, "model"]);
  if (model !== undefined && model.value !== "per_job") {
    src.report(model.node, [...path, "model"], `pricing model "${model.value}" is not supported: only per_job pricing is supported`);
  }
  const amountNode = keys.get("amount");
  if (amountNode?.type === "number") {
    const written = src.sourceOf(amountNode);
    const example = /^\d+(\.\d+)?$/.test(written) ? written : "0.01";
    src.report(amountNode, [...path, "amount"], `must be a string, found a number (${written}); write it as a string, e.g. "${example}", so no precision is lost`);
  } else {
    const amount = string(src, amountNode, [...path, "amount"]);
    const problem = amount === undefined ? undefined : amountProblem(amount.value);
    if (amount !== undefined && problem !== undefined) src.report(amount.node, [...path, "amount"], problem);
  }
  const currency = string(src, keys.get("currency"), [...path, "currency"]);
  if (currency !== undefined && currency.value !== "USDC") {
    src.report(currency.node, [...path, "currency"], `currency "${currency.value}" is not supported: only "USDC" is supported`);
  }
}

/**
 * Reports unknown keys (with a suggestion) and missing required ones; returns the value nodes of known keys.
 * A missing key is reported at the enclosing object, an unknown key at the key itself.
 */
function knownKeys(src: Source, node: Node, path: PathSegment[], allowed: readonly string[], required: readonly string[]): Map<string, Node> {
  const found = new Map<string, Node>();
  const suggested = new Set<string>();
  for (const entry of entries(node)) {
    if (allowed.includes(entry.key)) found.set(entry.key, entry.value);
    else {
      const match = suggest(entry.key, allowed);
      if (match !== undefined) suggested.add(match);
      const hint = match !== undefined ? `; did you mean "${match}"?` : `; allowed keys: ${allowed.join(", ")}`;
      src.report(entry.keyNode, [...path, entry.key], `unknown key "${entry.key}"${hint}`);
    }
  }
  for (const key of required) {
    // A misspelled key already says "did you mean ..."; reporting the correct key as missing too would be noise.
    if (!found.has(key) && !suggested.has(key)) src.report(node, path, `missing required key "${key}"${MISSING_HINTS[key] ?? ""}`);
  }
  return found;
}

/** The string value of an optional key, reporting a problem when present but not a string. */
function string(src: Source, node: Node | undefined, path: PathSegment[]): { value: string; node: Node } | undefined {
  if (node === undefined) return undefined;
  if (node.type !== "string") {
    src.report(node, path, `must be a string, found ${src.describe(node)}`);
    return undefined;
  }
  return { value: String(node.value), node };
}
