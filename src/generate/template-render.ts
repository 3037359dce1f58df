/**
 * The project templates' renderer: the part of Handlebars they use ({{path}}, {{{path}}}, {{#if path}} /
 * {{else}} / {{/if}}, {{#each path}} / {{/each}}), with the options scaffolding used Handlebars with
 * (`noEscape`, `strict`: a missing value is an error) and its whitespace rule (a block tag alone on a line
 * removes that line). Loading and compiling Handlebars took a fifth of scaffolding's time; tests check the
 * output equals Handlebars' for every template and fixture. Anything else in a template is refused.
 */

type Node =
  | { kind: "text"; text: string }
  | { kind: "value"; path: string }
  | { kind: "if"; path: string; then: Node[]; else: Node[] }
  | { kind: "each"; path: string; body: Node[] };

/** A tag: {{...}} or {{{...}}}, with its position. */
const TAG = /\{\{\{\s*([^}]*?)\s*\}\}\}|\{\{\s*([^}]*?)\s*\}\}/g;

/** Compiles a template once; the returned function renders it for a data object. */
export function compileTemplate(source: string, name = "template"): (data: object) => string {
  const nodes = parse(standalone(source), name);
  return (data) => render(nodes, [data], name);
}

/**
 * Handlebars' standalone rule for block tags: a line holding only whitespace and one {{#...}}, {{/...}}
 * or {{else}} loses its whitespace and line break.
 */
function standalone(source: string): string {
  return source.replace(
    /(^|\n)[ \t]*(\{\{\s*(?:#|\/|else\b)[^}]*\}\})[ \t]*(\r?\n|$)/g,
    (_match, start: string, tag: string) => `${start}${tag}`,
  );
}

function parse(source: string, name: string): Node[] {
  const root: Node[] = [];
  const stack: Array<{ node: Extract<Node, { kind: "if" | "each" }>; target: Node[] }> = [];
  let target = root;
  let last = 0;
  for (const match of source.matchAll(TAG)) {
    if (match.index > last) target.push({ kind: "text", text: source.slice(last, match.index) });
    last = match.index + match[0].length;
    const tag = (match[1] ?? match[2] ?? "").trim();
    const where = `${name}: {{${tag}}}`;
    let m: RegExpExecArray | null;
    if ((m = /^#(if|each)\s+(\w+(?:\.\w+)*)$/.exec(tag))) {
      const node: Extract<Node, { kind: "if" | "each" }> =
        m[1] === "if"
          ? { kind: "if", path: m[2]!, then: [], else: [] }
          : { kind: "each", path: m[2]!, body: [] };
      target.push(node);
      stack.push({ node, target });
      target = node.kind === "if" ? node.then : node.body;
    } else if (tag === "else") {
      const open = stack.at(-1);
      if (open?.node.kind !== "if") throw new Error(`${where} outside an {{#if}}`);
      target = open.node.else;
    } else if ((m = /^\/(if|each)$/.exec(tag))) {
      const open = stack.pop();
      if (!open || open.node.kind !== m[1]) throw new Error(`${where} closes nothing`);
      target = open.target;
    } else if (/^\w+(?:\.\w+)*$/.test(tag)) {
      target.push({ kind: "value", path: tag });
    } else throw new Error(`${where} is not supported by the template renderer`);
  }
  if (stack.length > 0) throw new Error(`${name}: {{#${stack.at(-1)!.node.kind}}} is never closed`);
  if (last < source.length) target.push({ kind: "text", text: source.slice(last) });
  return root;
}

/** A path's value in the innermost context (strict: missing is an error, as Handlebars' strict mode). */
function lookup(contexts: unknown[], path: string, name: string): unknown {
  let value: unknown = contexts.at(-1);
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null || !(part in value))
      throw new Error(`${name}: "${path}" not defined in the data`);
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Handlebars' truthiness for #if: false, undefined, null, "", 0 and [] are false. */
const truthy = (v: unknown): boolean =>
  Array.isArray(v)
    ? v.length > 0
    : v !== false && v !== undefined && v !== null && v !== "" && v !== 0;

function render(nodes: Node[], contexts: unknown[], name: string): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else if (node.kind === "value") {
      const value = lookup(contexts, node.path, name);
      out += value === null || value === undefined ? "" : String(value);
    } else if (node.kind === "if")
      out += render(
        truthy(lookup(contexts, node.path, name)) ? node.then : node.else,
        contexts,
        name,
      );
    else {
      const list = lookup(contexts, node.path, name);
      if (!Array.isArray(list)) throw new Error(`${name}: {{#each ${node.path}}} needs a list`);
      for (const item of list) out += render(node.body, [...contexts, item], name);
    }
  }
  return out;
}
