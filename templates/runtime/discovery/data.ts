/**
 * What create-agent derives from agent.json for the discovery documents. src/generated/discovery.ts
 * exports one (regenerated with the rest of src/generated/), and the registry hands it to the app.
 * Part of your project: edit freely.
 */

/** A JSON object (parsed JSON: no undefined, functions or class instances). */
export type JsonObject = { [key: string]: unknown };

export interface DiscoveryData {
  /**
   * The OpenAPI 3.1 document of the whole service, without `servers`: the app adds its public URL
   * when it serves GET /openapi.json. src/generated/openapi.json holds the same document.
   */
  openapi: JsonObject;
  /** Per capability, in manifest order. */
  capabilities: Record<string, CapabilityDiscovery>;
}

export interface CapabilityDiscovery {
  /** Keywords for catalogues: agent.json `tags`, else the words of the capability's name. */
  tags: string[];
  /** Names in `openapi.components.schemas` of this capability's input and output object schemas. */
  schemas: { input: string; output: string };
  /** A valid input, from the manifest's examples, defaults and field types. */
  exampleInput: JsonObject;
  /** A valid output, from the same sources. */
  exampleOutput: JsonObject;
}

/** A capability's input or output schema, looked up in the OpenAPI document. */
export function componentSchema(data: DiscoveryData, name: string): JsonObject {
  const components = data.openapi.components as
    { schemas?: Record<string, JsonObject> } | undefined;
  const schema = components?.schemas?.[name];
  if (schema === undefined) throw new Error(`openapi.components.schemas has no ${name}`);
  return schema;
}
