/**
 * The form of one capability, as HTML built from its input schema (the field map GET /about serves): a
 * control per field by its type (text, number, checkbox, a select for an enum, checkboxes or one item a
 * line for a list, JSON for a free-form object or list), required marks, defaults, descriptions as help,
 * and an empty error slot beside each field. The browser script (script.ts) reads the same schema to check
 * and collect the values; without JavaScript the form still shows every field. Part of your project.
 */
import { isObject } from "../ops/json-object.js";
import type { FieldDescriptor } from "../types.js";

/** Text made safe inside HTML elements and double-quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

type Schema = Record<string, unknown>;

/** How a field is entered, by its schema: the script reads data-kind to collect its value. */
export type FieldKind =
  "text" | "number" | "integer" | "boolean" | "enum" | "choices" | "lines" | "json" | "group";

export function fieldKind(schema: Schema): FieldKind {
  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) return "enum";
  if (type === "string") return "text";
  if (type === "number") return "number";
  if (type === "integer") return "integer";
  if (type === "boolean") return "boolean";
  if (type === "object" && isObject(schema.properties) && Object.keys(schema.properties).length > 0)
    return "group";
  if (type === "array" && isObject(schema.items)) {
    const items = schema.items;
    if (Array.isArray(items.enum) && items.enum.every((v) => typeof v === "string"))
      return "choices";
    if (items.type === "string" || items.type === "number" || items.type === "integer")
      return "lines";
  }
  return "json";
}

/** A DOM id for a field of a capability: only letters, digits, - and _. */
export function fieldId(capability: string, path: readonly string[]): string {
  const part = (s: string) =>
    s.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`);
  return `f-${part(capability)}-${path.map(part).join("-")}`;
}

/** One line saying what the rules of a field are (shown as help beside it). */
function rules(schema: Schema, kind: FieldKind): string {
  const parts: string[] = [];
  const n = (k: string) => (typeof schema[k] === "number" ? String(schema[k]) : undefined);
  if (kind === "integer") parts.push("a whole number");
  if (n("minimum")) parts.push(`at least ${n("minimum")}`);
  if (n("exclusiveMinimum")) parts.push(`more than ${n("exclusiveMinimum")}`);
  if (n("maximum")) parts.push(`at most ${n("maximum")}`);
  if (n("exclusiveMaximum")) parts.push(`less than ${n("exclusiveMaximum")}`);
  const chars = (k: string) => `${n(k)} character${schema[k] === 1 ? "" : "s"}`;
  if (n("minLength")) parts.push(`at least ${chars("minLength")}`);
  if (n("maxLength")) parts.push(`at most ${chars("maxLength")}`);
  if (typeof schema.pattern === "string") parts.push(`matching ${schema.pattern}`);
  if (typeof schema.format === "string") parts.push(`format ${schema.format}`);
  if (kind === "lines") parts.push("one item a line");
  if (kind === "json") parts.push(`JSON ${schema.type === "array" ? "array" : "value"}`);
  if (n("minItems")) parts.push(`at least ${n("minItems")} items`);
  if (n("maxItems")) parts.push(`at most ${n("maxItems")} items`);
  if (Array.isArray(schema.examples) && schema.examples.length > 0)
    parts.push(`e.g. ${JSON.stringify(schema.examples[0])}`);
  return parts.join(", ");
}

function describedBy(id: string, help: boolean): string {
  return help ? `${id}-help ${id}-error` : `${id}-error`;
}

function requiredMark(required: boolean): string {
  return required ? ` <span class="req">(required)</span>` : "";
}

/** The HTML of one field (recursively for an object with properties). */
export function renderField(
  capability: string,
  path: readonly string[],
  schema: Schema,
  required: boolean,
): string {
  const id = fieldId(capability, path);
  const name = path[path.length - 1] ?? "";
  const kind = fieldKind(schema);
  const description = typeof schema.description === "string" ? schema.description : "";
  const rule = rules(schema, kind);
  const helpText = [description, rule].filter(Boolean).join(" — ");
  const help = helpText ? `<p class="help" id="${id}-help">${escapeHtml(helpText)}</p>` : "";
  const error = `<p class="error" id="${id}-error" hidden></p>`;
  const data = `data-path="${escapeHtml(JSON.stringify(path))}" data-kind="${kind}"`;
  const aria = `aria-describedby="${describedBy(id, Boolean(help))}"${required ? ` aria-required="true"` : ""}`;
  const def = schema.default;
  const defaultText =
    def === undefined ? "" : typeof def === "string" ? def : JSON.stringify(def, null, 2);

  if (kind === "group") {
    const props = schema.properties as Record<string, Schema>;
    const requiredList = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const inner = Object.entries(props)
      .map(([key, sub]) =>
        renderField(
          capability,
          [...path, key],
          sub,
          sub.required === true || requiredList.includes(key),
        ),
      )
      .join("");
    return `<fieldset class="field group" id="${id}" ${data}${required ? ` data-required="true"` : ""}><legend>${escapeHtml(name)}${requiredMark(required)}</legend>${help}${inner}${error}</fieldset>`;
  }
  if (kind === "choices") {
    const items = (schema.items as Schema).enum as string[];
    const chosen = Array.isArray(def) ? def : [];
    const boxes = items
      .map(
        (v, i) =>
          `<label class="choice"><input type="checkbox" id="${id}-${i}" value="${escapeHtml(v)}"${chosen.includes(v) ? " checked" : ""}> ${escapeHtml(v)}</label>`,
      )
      .join("");
    return `<fieldset class="field" id="${id}" ${data} ${aria}><legend>${escapeHtml(name)}${requiredMark(required)}</legend>${help}<div class="choices">${boxes}</div>${error}</fieldset>`;
  }
  if (kind === "boolean") {
    return `<div class="field check"><input type="checkbox" id="${id}" ${data} ${aria}${def === true ? " checked" : ""}><label for="${id}">${escapeHtml(name)}${requiredMark(required)}</label>${help}${error}</div>`;
  }
  const label = `<label for="${id}">${escapeHtml(name)}${requiredMark(required)}</label>`;
  const req = required ? " required" : "";
  const control = renderControl(schema, kind, { id, data, aria, req }, defaultText);
  return `<div class="field">${label}${help}${control}${error}</div>`;
}

/** The control of a one-value field: a select, number input, textarea or text input. */
function renderControl(
  schema: Schema,
  kind: ReturnType<typeof fieldKind>,
  { id, data, aria, req }: { id: string; data: string; aria: string; req: string },
  defaultText: string,
): string {
  const def = schema.default;
  if (kind === "enum") {
    const options = (schema.enum as string[])
      .map((v) => `<option${v === def ? " selected" : ""}>${escapeHtml(v)}</option>`)
      .join("");
    const blank = req !== "" && def !== undefined ? "" : `<option value="">(none)</option>`;
    return `<select id="${id}" ${data} ${aria}${req}>${blank}${options}</select>`;
  } else if (kind === "number" || kind === "integer") {
    const attr = (k: string, html: string) =>
      typeof schema[k] === "number" ? ` ${html}="${String(schema[k])}"` : "";
    return `<input type="number" id="${id}" ${data} ${aria}${req} step="${kind === "integer" ? "1" : "any"}"${attr("minimum", "min")}${attr("maximum", "max")} value="${escapeHtml(defaultText)}">`;
  } else if (kind === "lines" || kind === "json") {
    const text = kind === "lines" && Array.isArray(def) ? def.map(String).join("\n") : defaultText;
    return `<textarea id="${id}" ${data} ${aria}${req} rows="${kind === "json" ? 4 : 3}" spellcheck="false">${escapeHtml(text)}</textarea>`;
  } else {
    // Free text gets room; a short, patterned or formatted value one line.
    const long =
      (typeof schema.maxLength !== "number" || schema.maxLength > 200) &&
      schema.pattern === undefined &&
      schema.format === undefined;
    return long
      ? `<textarea id="${id}" ${data} ${aria}${req} rows="3">${escapeHtml(defaultText)}</textarea>`
      : `<input type="text" id="${id}" ${data} ${aria}${req} value="${escapeHtml(defaultText)}">`;
  }
}

/** Every field of a capability's input, in declaration order. */
export function renderFields(capability: string, input: Record<string, FieldDescriptor>): string {
  return Object.entries(input)
    .map(([name, field]) => renderField(capability, [name], field, field.required === true))
    .join("");
}
