/**
 * The components of the OpenAPI document (openapi.ts): each capability's input, output, job request and
 * job result schemas, and the service's shared schemas (the protocol's fields, GET /health and GET /about,
 * the error body); the x402 ones are in openapi-x402.ts.
 */
import type { AgentModel, CapabilityModel } from "../manifest/model.js";
import { FIELD_TYPES } from "../manifest/model.js";
import { DESCRIPTOR_KEYWORDS, type DescriptorKeyword } from "../manifest/keywords.js";
import {
  ERROR_TYPES,
  type Json,
  MAX_DEADLINE_AHEAD_SECONDS,
  MAX_JOB_ID_LENGTH,
  priceText,
  ref,
  SERVICE_VERSION,
} from "./openapi-parts.js";
import { x402Schemas } from "./openapi-x402.js";

export function componentSchemas(model: AgentModel): Json {
  const schemas: Json = {};
  for (const c of model.capabilities) {
    schemas[`${c.typeName}Input`] = c.inputSchema;
    schemas[`${c.typeName}Output`] = c.outputSchema;
    schemas[`${c.typeName}JobRequest`] = jobRequestSchema(c);
    schemas[`${c.typeName}JobResult`] = jobResultSchema(c);
  }
  return { ...schemas, ...sharedSchemas(model) };
}

function jobRequestSchema(c: CapabilityModel): Json {
  const what = c.declaration.description ? `: ${c.declaration.description}` : ".";
  return {
    title: `${c.name} job request`,
    description: `A job for capability "${c.name}"${what}\n\nPrice: ${priceText(c)}.`,
    type: "object",
    required: ["service_version", "job_id", "task", "deadline"],
    properties: {
      service_version: ref("ServiceVersion"),
      job_id: ref("JobId"),
      task: {
        type: "object",
        required: ["capability", "input"],
        properties: {
          capability: { const: c.name },
          input: ref(`${c.typeName}Input`),
        },
      },
      deadline: ref("Deadline"),
    },
  };
}

function jobResultSchema(c: CapabilityModel): Json {
  return {
    title: `${c.name} job result`,
    description: `A completed "${c.name}" job.`,
    type: "object",
    required: ["service_version", "job_id", "status", "output", "completed_at"],
    properties: {
      service_version: ref("ServiceVersion"),
      job_id: ref("JobId"),
      status: { const: "completed" },
      output: ref(`${c.typeName}Output`),
      completed_at: {
        type: "integer",
        minimum: 0,
        description: "When the job completed: Unix timestamp in seconds.",
      },
    },
    additionalProperties: false,
  };
}

/** One field descriptor of GET /about (agent.json `input_schema` / `output_schema` values). */
function fieldDescriptorSchema(): Json {
  const count = { type: "integer", minimum: 0 };
  const keywords: Record<DescriptorKeyword, Json> = {
    type: { enum: [...FIELD_TYPES] },
    required: {
      type: "boolean",
      description:
        "Inputs are optional unless `required: true`; outputs are required unless `required: false`.",
    },
    description: { type: "string" },
    enum: { type: "array", items: { type: ["string", "number", "boolean"] } },
    default: {},
    examples: { type: "array", items: {} },
    minimum: { type: "number" },
    maximum: { type: "number" },
    minLength: count,
    maxLength: count,
    pattern: { type: "string" },
    format: { type: "string" },
    items: ref("FieldDescriptor"),
    minItems: count,
    maxItems: count,
    properties: { type: "object", additionalProperties: ref("FieldDescriptor") },
  };
  return closedObject(
    "A field of a capability's input or output: its JSON type, whether it is required, and the JSON Schema keywords that constrain it.",
    ["type"],
    Object.fromEntries(DESCRIPTOR_KEYWORDS.map((k) => [k, keywords[k]])),
  );
}

/**
 * An object schema with exactly the listed properties (additionalProperties: false), its keys in the
 * order the documents write them.
 */
function closedObject(description: string, required: string[], properties: Json): Json {
  return { type: "object", description, required, properties, additionalProperties: false };
}

/** The schemas every document has, in the document's order; the x402 ones last. */
function sharedSchemas(model: AgentModel): Json {
  return {
    ...protocolSchemas(),
    ...aboutSchemas(model),
    FieldDescriptor: fieldDescriptorSchema(),
    ErrorBody: closedObject(
      "Every failure except a missing payment (spec 2.5).",
      ["status", "error_type", "error"],
      {
        status: { const: "failed" },
        error_type: { enum: [...ERROR_TYPES] },
        error: { type: "string", description: "Human-readable message." },
      },
    ),
    ...x402Schemas(),
  };
}

/** The job protocol's fields, and GET /health's record. */
function protocolSchemas(): Json {
  return {
    ServiceVersion: {
      type: "string",
      const: SERVICE_VERSION,
      description: "Protocol version.",
    },
    JobId: {
      type: "string",
      minLength: 1,
      maxLength: MAX_JOB_ID_LENGTH,
      description: "The caller's job identifier, echoed in the result.",
    },
    Deadline: {
      type: "number",
      exclusiveMinimum: 0,
      description: `Unix timestamp in seconds by which the handler must have returned; at most ${MAX_DEADLINE_AHEAD_SECONDS / 86_400} days ahead by default (MAX_DEADLINE_SECONDS). Past on arrival, or reached while the handler runs: 408.`,
    },
    HealthRecord: closedObject("GET /health (spec 2.1).", ["name", "version", "status"], {
      name: { type: "string", description: "Agent name." },
      version: { type: "string", description: "Agent version." },
      status: { enum: ["ok", "degraded"] },
      problems: {
        type: "array",
        items: { type: "string" },
        description: "Why the service is degraded (only then).",
      },
      networks: {
        type: "object",
        description:
          "With several networks offered (X402_NETWORKS): each network's settlement route, by CAIP-2 id (e.g. `eip155:84532`), checked as the service's own.",
        additionalProperties: {
          type: "object",
          required: ["status"],
          properties: {
            status: { enum: ["ok", "degraded"] },
            problems: { type: "array", items: { type: "string" } },
          },
          additionalProperties: false,
        },
      },
    }),
  };
}

/** GET /about: the declaration, one capability's entry, its pricing. */
function aboutSchemas(model: AgentModel): Json {
  const names = model.capabilities.map((c) => c.name);
  return {
    CapabilityDeclaration: closedObject(
      "GET /about (spec 2.2).",
      ["service_version", "name", "capabilities"],
      {
        service_version: ref("ServiceVersion"),
        name: { type: "string", const: model.name, description: "Agent name." },
        capabilities: closedObject(
          "Every capability, by name.",
          names,
          Object.fromEntries(names.map((n) => [n, ref("CapabilityEntry")])),
        ),
      },
    ),
    CapabilityEntry: closedObject(
      "One capability as declared in agent.json (without its catalogue tags).",
      ["pricing", "input_schema", "output_schema"],
      {
        description: { type: "string" },
        pricing: ref("Pricing"),
        input_schema: {
          type: "object",
          description: "Input fields by name.",
          additionalProperties: ref("FieldDescriptor"),
        },
        output_schema: {
          type: "object",
          description: "Output fields by name.",
          additionalProperties: ref("FieldDescriptor"),
        },
      },
    ),
    Pricing: {
      type: "object",
      required: ["model", "amount", "currency"],
      properties: {
        model: { const: "per_job" },
        amount: {
          type: "string",
          pattern: "^[0-9]+(\\.[0-9]{1,6})?$",
          description: 'Price per job, a decimal string in USDC (e.g. "0.01").',
        },
        currency: { const: "USDC" },
      },
      additionalProperties: false,
    },
  };
}
