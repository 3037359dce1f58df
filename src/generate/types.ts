import type { AgentModel, JsonSchema } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { printInterface } from "./print/ts.js";
import type { SourceFile } from "./source-file.js";
import { interfaceText, type TypeTextOptions } from "./type-text.js";

/**
 * The input and output interfaces of every capability, e.g. SummarizeInput / SummarizeOutput.
 * Nested objects are inlined (only the two roots get names), so two capabilities can never collide.
 * The text is json-schema-to-typescript's (type-text.ts writes it without that package; inputs with its
 * default maxItems 20, outputs with -1), laid out as prettier would lay it out (print/ts.ts).
 */
export function generateTypes(model: AgentModel): SourceFile {
  const interfaces = model.capabilities.map((c) => ({
    name: c.name,
    input: interfaceText(handlerView(c.inputSchema), `${c.typeName}Input`),
    // A handler builds its output: a bounded array is a plain array (a union of tuples would reject
    // `list.slice(0, 3)`); the output validator still holds it to maxItems before anything is charged.
    output: interfaceText(c.outputSchema, `${c.typeName}Output`, { maxItems: -1 }),
  }));
  return {
    source: () => {
      const parts = [GENERATED_HEADER, ""];
      for (const i of interfaces) parts.push(`// ${i.name}`, i.input, i.output);
      return parts.join("\n");
    },
    print: () => {
      const out = [GENERATED_HEADER];
      for (const i of interfaces) {
        out.push("", `// ${i.name}`, printInterface(i.input), "", printInterface(i.output));
      }
      return `${out.join("\n")}\n`;
    },
  };
}

/**
 * One exported interface named `name` for `schema`, exactly as json-schema-to-typescript 16 compiles it
 * (unformatted, no banner). `maxItems: -1` types bounded arrays as plain arrays (the default is a union of
 * tuples up to 20 items).
 */
export async function toInterface(
  schema: JsonSchema,
  name: string,
  options: TypeTextOptions = {},
): Promise<string> {
  return interfaceText(schema, name, options);
}

/**
 * The input as the handler sees it. Ajv fills in `default` values before the handler runs, so a field with a
 * default is always present: it is typed as required, and the handler needs no `?? default` of its own.
 */
export function handlerView(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const next: Record<string, JsonSchema> = {};
    for (const [key, value] of Object.entries(properties)) {
      if (value.default !== undefined) required.add(key);
      next[key] = handlerView(value);
    }
    out.properties = next;
    out.required = Object.keys(properties).filter((key) => required.has(key));
  }
  if (schema.items && typeof schema.items === "object")
    out.items = handlerView(schema.items as JsonSchema);
  return out;
}
