/**
 * The shapes of `agent.json` (as written by users) and of the normalized model every generator reads.
 * Data flows one way: agent.json text -> AgentManifest (validated) -> AgentModel -> generated files.
 */

export const FIELD_TYPES = ["string", "number", "integer", "boolean", "array", "object"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** A field descriptor in `input_schema` / `output_schema` (spec 2.2, extended with JSON Schema keywords). */
export interface FieldDescriptor {
  type: FieldType;
  /** Input fields are optional unless `required: true`; output fields are required unless `required: false`. */
  required?: boolean;
  description?: string;
  enum?: Array<string | number | boolean>;
  default?: unknown;
  examples?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  /** Arrays: the descriptor of each item (`required` is meaningless there). */
  items?: FieldDescriptor;
  minItems?: number;
  maxItems?: number;
  /** Objects: nested fields. An object with `properties` is closed (no other keys); without, it is free-form. */
  properties?: Record<string, FieldDescriptor>;
}

export interface Pricing {
  model: "per_job";
  /** Positive decimal string with at most 6 decimals (USDC), e.g. "0.01". */
  amount: string;
  currency: "USDC";
}

/** One entry of `capabilities`: exactly the capability entry that GET /about returns. */
export interface CapabilityManifest {
  description?: string;
  /** Catalogue keywords (A2A agent card skill tags, x402 Bazaar). Not part of GET /about. */
  tags?: string[];
  pricing: Pricing;
  input_schema: Record<string, FieldDescriptor>;
  output_schema: Record<string, FieldDescriptor>;
}

export interface AgentManifest {
  $schema?: string;
  name: string;
  version: string;
  description?: string;
  capabilities: Record<string, CapabilityManifest>;
}

/** A JSON Schema object (draft-07 subset that Ajv and json-schema-to-typescript both read). */
export type JsonSchema = { [key: string]: unknown };

export interface CapabilityModel {
  /** The name as declared in agent.json, e.g. "extract-entities". Also the handler file name. */
  name: string;
  /** PascalCase base for type names, e.g. "ExtractEntities" -> ExtractEntitiesInput / ExtractEntitiesOutput. */
  typeName: string;
  /** camelCase JS identifier, e.g. "extractEntities" (never a reserved word: callers add suffixes). */
  identifier: string;
  /** The manifest entry without `tags`: exactly what GET /about declares for this capability. */
  declaration: CapabilityManifest;
  /** Catalogue keywords: the manifest's `tags`, else the words of the name ("extract-entities" -> extract, entities). */
  tags: string[];
  /** Price in USDC atomic units (6 decimals) as a decimal string: "0.01" -> "10000". */
  priceAtomic: string;
  /** JSON Schema of the input: closed object, `required` from `required: true`. */
  inputSchema: JsonSchema;
  /** JSON Schema of the output: closed object, every field required unless `required: false`. */
  outputSchema: JsonSchema;
}

export interface AgentModel {
  name: string;
  version: string;
  description: string;
  /** In manifest order. */
  capabilities: CapabilityModel[];
  /** The validated manifest as read (for re-serialisation and /about). */
  manifest: AgentManifest;
}
