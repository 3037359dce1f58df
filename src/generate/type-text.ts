/**
 * TypeScript interfaces from the JSON Schemas of src/manifest/json-schema.ts, as json-schema-to-typescript
 * 16.0.0 writes them (unformatted) with the options this project always used (bannerComment "",
 * declareExternallyReferenced, strictIndexSignatures, unknownAny, maxItems 20 or -1). Only the schema
 * subset our manifests produce is covered: type string/number/integer/boolean/array/object, enum,
 * properties/required/additionalProperties: false, free-form objects, items, minItems/maxItems and
 * description (other keywords do not change the types). A test compares this text with
 * json-schema-to-typescript's own for every manifest fixture and generated stress manifests.
 */
import type { JsonSchema } from "../manifest/model.js";

export interface TypeTextOptions {
  /** json-schema-to-typescript's maxItems: bounded arrays up to this size become unions of tuples; -1: never. */
  maxItems?: number;
}

/** The text json-schema-to-typescript's compile() returns for `schema` titled `name`, without a banner. */
export function interfaceText(
  schema: JsonSchema,
  name: string,
  options: TypeTextOptions = {},
): string {
  const maxItems = options.maxItems ?? 20;
  const root = typeOf(schema, [], maxItems);
  const comment = root.comment !== undefined ? `${blockComment(root.comment)}\n` : "";
  return `${comment}export interface ${name} ${root.text}\n`;
}

type AstKind =
  "string" | "number" | "boolean" | "union" | "array" | "tuple" | "interface" | "unknown";

interface TypeAst {
  kind: AstKind;
  text: string;
  /** The schema's description after normalization (JSDoc text), if any. */
  comment?: string;
  /** Arrays and tuples: the element types (for the "Items:" comment). */
  members?: TypeAst[];
}

/** A link of json-schema-to-typescript's parent chain: a schema, or a `properties` map. */
interface Parent {
  node: Record<string, unknown>;
  /** For array schemas, maxItems after normalization. */
  maxItems?: unknown;
  minItems?: unknown;
}

function isArrayType(node: Record<string, unknown>): boolean {
  return node.items !== undefined || node.type === "array";
}

function appendToDescription(description: string | undefined, values: string[]): string {
  return description ? `${description}\n\n${values.join("\n")}` : values.join("\n");
}

function typeOf(schema: JsonSchema, parents: Parent[], maxItemsOption: number): TypeAst {
  let comment =
    typeof schema.description === "string" ? schema.description.replace(/\*\//g, "* /") : undefined;
  if (Array.isArray(schema.enum) && schema.type !== "array" && schema.type !== "object") {
    const members = [...new Set(schema.enum.map((v) => JSON.stringify(v)))];
    const text = members.length === 1 ? members[0]! : `(${members.join(" | ")})`;
    return { kind: "union", text, comment: nonEmpty(comment) };
  }
  switch (schema.type) {
    case "string":
      return { kind: "string", text: "string", comment: nonEmpty(comment) };
    case "number":
    case "integer":
      return { kind: "number", text: "number", comment: nonEmpty(comment) };
    case "boolean":
      return { kind: "boolean", text: "boolean", comment: nonEmpty(comment) };
    case "array":
      return arrayType(schema, comment, parents, maxItemsOption);
    case "object":
      return objectType(schema, comment, parents, maxItemsOption);
    default:
      throw new Error(`unsupported schema type ${JSON.stringify(schema.type)}`);
  }
}

function nonEmpty(comment: string | undefined): string | undefined {
  return comment === undefined || comment === "" ? undefined : comment;
}

function objectType(
  schema: JsonSchema,
  comment: string | undefined,
  parents: Parent[],
  maxItemsOption: number,
): TypeAst {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  const lines: string[] = [];
  if (properties === undefined) {
    // Free-form: json-schema-to-typescript's default additionalProperties (true) becomes an index signature.
    lines.push("[k: string]: unknown | undefined");
  } else {
    const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
    const self: Parent = { node: schema };
    // json-schema-to-typescript's parent of a property is the `properties` map itself.
    const map: Parent = {
      node: properties,
      maxItems: properties.maxItems,
      minItems: properties.minItems,
    };
    for (const key of Object.keys(properties)) {
      const property = properties[key]!;
      const ast = typeOf(property, [...parents, self, map], maxItemsOption);
      const isRequired = property.required === true || required.includes(key);
      const withItems = itemsComment(ast);
      const text = `${escapeKeyName(key)}${isRequired ? "" : "?"}: ${ast.text}`;
      lines.push(withItems !== undefined ? `${blockComment(withItems)}\n${text}` : text);
    }
  }
  return { kind: "interface", text: `{\n${lines.join("\n")}\n}`, comment: nonEmpty(comment) };
}

function arrayType(
  schema: JsonSchema,
  description: string | undefined,
  parents: Parent[],
  maxItemsOption: number,
): TypeAst {
  const bounds: string[] = [];
  if ("minItems" in schema) bounds.push(`@minItems ${String(schema.minItems)}`);
  if ("maxItems" in schema) bounds.push(`@maxItems ${String(schema.maxItems)}`);
  const comment = bounds.length > 0 ? appendToDescription(description, bounds) : description;

  let maxItems: unknown = maxItemsOption === -1 ? undefined : schema.maxItems;
  const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
  if (maxItems !== undefined) {
    // "Remove maxItems if it is big enough to likely cause OOMs", with the enclosing bounded arrays.
    let multiplier = 1;
    let child: Record<string, unknown> = schema;
    for (let i = parents.length - 1; i >= 0; i--) {
      const parent = parents[i]!;
      if (!(isArrayType(parent.node) && parent.node.items === child)) break;
      multiplier *=
        typeof parent.maxItems === "number"
          ? parent.maxItems
          : (parent.minItems as number | undefined) || 1;
      child = parent.node;
    }
    if (((maxItems as number) - minItems) * multiplier > maxItemsOption) maxItems = undefined;
  }
  const self: Parent = { node: schema, maxItems, minItems };
  const items = schema.items as JsonSchema;
  const item = typeOf(items, [...parents, self], maxItemsOption);
  const hasMax = typeof maxItems === "number" && maxItems >= 0;
  if (!hasMax && minItems <= 0) {
    const text = item.text.endsWith('"') ? `(${item.text})[]` : `${item.text}[]`;
    return { kind: "array", text, comment: nonEmpty(comment), members: [item] };
  }
  // A tuple of length maxItems (or minItems, then a spread of the rest).
  const length = ((maxItems as number) || minItems || 0) as number;
  const params = Array.from({ length }, () => item.text);
  const spread = hasMax ? undefined : item;
  const members = spread ? [...params.map(() => item), spread] : params.map(() => item);
  const addSpread = (list: string[]) => (spread ? [...list, `...(${spread.text})[]`] : list);
  const tuple = (list: string[]) => `[${list.join(", ")}]`;
  let text: string;
  if (params.length > minItems) {
    const union: string[] = [];
    const cumulative = params.slice(0, minItems);
    union.push(tuple(cumulative));
    for (let i = minItems; i < params.length; i++) {
      cumulative.push(params[i]!);
      union.push(tuple(i === params.length - 1 ? addSpread(cumulative) : cumulative));
    }
    text = union.join("|");
  } else {
    text = tuple(addSpread(params));
  }
  return { kind: "tuple", text, comment: nonEmpty(comment), members };
}

/** A property's comment: its own, plus "Items: <description>" of its array's items (generator.ts). */
function itemsComment(ast: TypeAst): string | undefined {
  if ((ast.kind !== "array" && ast.kind !== "tuple") || ast.members === undefined)
    return ast.comment;
  const comments = new Set(
    ast.members.map((m) => (m.kind === "array" || m.kind === "tuple" ? undefined : m.comment)),
  );
  const [first] = comments;
  if (comments.size !== 1 || !first || /(^|\s)@\w/.test(first)) return ast.comment;
  const items = `Items: ${first}`;
  return ast.comment ? `${ast.comment}\n\n${items}` : items;
}

function blockComment(comment: string): string {
  return ["/**", ...comment.split("\n").map((line) => ` * ${line}`), " */"].join("\n");
}

function escapeKeyName(key: string): string {
  if (key.length && /[A-Za-z_$]/.test(key.charAt(0)) && /^[\w$]+$/.test(key)) return key;
  return JSON.stringify(key);
}
