import { compile } from "json-schema-to-typescript";
import type { AgentModel, JsonSchema } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";

/**
 * The input and output interfaces of every capability, e.g. SummarizeInput / SummarizeOutput.
 * Nested objects are inlined (only the two roots get names), so two capabilities can never collide.
 */
export async function generateTypes(model: AgentModel): Promise<string> {
  const parts = [GENERATED_HEADER, ""];
  for (const capability of model.capabilities) {
    parts.push(`// ${capability.name}`);
    parts.push(
      await toInterface(handlerView(capability.inputSchema), `${capability.typeName}Input`),
    );
    parts.push(await toInterface(capability.outputSchema, `${capability.typeName}Output`));
  }
  return parts.join("\n");
}

/**
 * One exported interface named `name` for `schema`. `maxItems: -1` types bounded arrays as plain arrays
 * (the default is a union of tuples up to maxItems).
 */
export async function toInterface(
  schema: JsonSchema,
  name: string,
  options: { maxItems?: number } = {},
): Promise<string> {
  // The title fixes the interface name; json-schema-to-typescript would otherwise derive one from any title.
  const code = await compile({ ...schema, title: name }, name, {
    bannerComment: "",
    format: false,
    declareExternallyReferenced: true,
    strictIndexSignatures: true,
    unknownAny: true,
    ...options,
  });
  // It also "normalizes" the name ("Get2faInput" -> "Get2FaInput"): keep the one the registry imports.
  return code.replace(/^(export (?:interface|type) )[A-Za-z_$][\w$]*/m, (_, head) => head + name);
}

/**
 * The input as the handler sees it. Ajv fills in `default` values before the handler runs, so a field with a
 * default is always present: it is typed as required, and the handler needs no `?? default` of its own.
 */
function handlerView(schema: JsonSchema): JsonSchema {
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
