// Discovery data for the agents helpers.ts makes (makeAgent: echo, cheap, slow, bad_output, throws), built by
// hand the way src/generated/discovery.ts holds it: a small but valid OpenAPI 3.1 document whose
// components.schemas has each capability's input and output schema (the very schemas the agent's
// validators compiled), plus per capability its tags, schema names and an example input and output,
// and the generator's own POST /mcp.
import type {
  CapabilityDiscovery,
  DiscoveryData,
  JsonObject,
} from "../../templates/runtime/discovery/data.js";
import { MCP_PATH, MCP_SCHEMAS, mcpPathItem } from "../../src/generate/openapi-mcp.js";
import type { AgentDefinition } from "../../templates/runtime/types.js";
import { ECHO_INPUT_SCHEMA } from "./helpers.js";

const textOutput = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: { text: { type: "string" } },
};

const echoInput = ECHO_INPUT_SCHEMA;

const slowInput = {
  type: "object",
  additionalProperties: false,
  required: ["ms"],
  properties: { ms: { type: "integer" }, ignoreSignal: { type: "boolean", default: false } },
};

interface Known {
  input: JsonObject;
  output: JsonObject;
  tags: string[];
  exampleInput: JsonObject;
  exampleOutput: JsonObject;
}

/** A capability answering textOutput, of `input` (echo's by default). */
const known = (
  tags: string[],
  exampleInput: JsonObject,
  exampleOutput: JsonObject,
  input: JsonObject = echoInput,
): Known => ({ input, output: textOutput, tags, exampleInput, exampleOutput });

const KNOWN: Record<string, Known> = {
  echo: known(["text", "echo"], { text: "hi", times: 2, mode: "fast" }, { text: "hihi" }),
  cheap: known(["cheap"], { text: "hi" }, { text: "hi" }),
  slow: known(["slow"], { ms: 5 }, { text: "done" }, slowInput),
  bad_output: known(["bad", "output"], { text: "hi" }, { text: "hi" }),
  throws: known(["throws"], { text: "validation" }, { text: "never" }),
};

/** "bad_output" -> "BadOutput" */
const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** The discovery data for `agent`'s capabilities (each must be one makeAgent() defines). */
export function discoveryFor(agent: AgentDefinition): DiscoveryData {
  const names = Object.keys(agent.capabilities);
  const schemas: Record<string, JsonObject> = {};
  const capabilities: Record<string, CapabilityDiscovery> = {};
  const jobs: JsonObject[] = [];
  const results: JsonObject[] = [];
  for (const name of names) {
    const known = KNOWN[name];
    if (!known) throw new Error(`discoveryFor: no fixture for capability ${name}`);
    const type = pascal(name);
    schemas[`${type}Input`] = structuredClone(known.input);
    schemas[`${type}Output`] = structuredClone(known.output);
    capabilities[name] = {
      tags: known.tags,
      schemas: { input: `${type}Input`, output: `${type}Output` },
      exampleInput: known.exampleInput,
      exampleOutput: known.exampleOutput,
    };
    jobs.push({
      type: "object",
      title: `${type}Job`,
      required: ["service_version", "job_id", "task", "deadline"],
      properties: {
        service_version: { const: "1.0" },
        job_id: { type: "string", minLength: 1, maxLength: 256 },
        task: {
          type: "object",
          required: ["capability", "input"],
          properties: { capability: { const: name }, input: ref(`${type}Input`) },
        },
        deadline: { type: "number", description: "Unix timestamp in seconds" },
      },
    });
    results.push(ref(`${type}Output`));
  }
  schemas.ErrorBody = {
    type: "object",
    required: ["status", "error_type", "error"],
    properties: {
      status: { const: "failed" },
      error_type: { enum: ["validation", "payment", "deadline", "capability", "internal"] },
      error: { type: "string" },
    },
  };
  schemas.PaymentRequired = {
    type: "object",
    required: ["x402Version", "accepts"],
    properties: {
      x402Version: { type: "integer" },
      accepts: {
        type: "array",
        items: {
          type: "object",
          required: ["scheme", "maxAmountRequired"],
          properties: { scheme: { const: "exact" }, maxAmountRequired: { type: "string" } },
        },
      },
    },
  };
  const error = json(ref("ErrorBody"), "Failed job (spec 2.5)");

  const openapi: JsonObject = {
    openapi: "3.1.0",
    info: { title: agent.name, version: agent.version, description: agent.description ?? "" },
    paths: {
      "/health": {
        get: {
          operationId: "getHealth",
          responses: {
            "200": json(
              {
                type: "object",
                required: ["name", "version", "status"],
                properties: {
                  name: { type: "string" },
                  version: { type: "string" },
                  status: { type: "string" },
                },
              },
              "Health record",
            ),
          },
        },
      },
      "/about": {
        get: {
          operationId: "getAbout",
          responses: { "200": json({ type: "object" }, "Capability declaration") },
        },
      },
      "/execute": {
        post: {
          operationId: "execute",
          security: [{ "PAYMENT-SIGNATURE": [] }, { "X-PAYMENT": [] }],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { oneOf: jobs } } },
          },
          responses: {
            "200": json(
              {
                type: "object",
                required: ["service_version", "job_id", "status", "output", "completed_at"],
                properties: {
                  service_version: { const: "1.0" },
                  job_id: { type: "string" },
                  status: { const: "completed" },
                  output: { oneOf: results },
                  completed_at: { type: "number" },
                },
              },
              "Job result (spec 2.4)",
            ),
            "400": error,
            "402": {
              description: "Payment required (x402), or the payment is invalid",
              headers: { "PAYMENT-REQUIRED": { schema: { type: "string" } } },
              content: {
                "application/json": {
                  schema: { oneOf: [ref("PaymentRequired"), ref("ErrorBody")] },
                },
              },
            },
            "408": error,
            "500": error,
            "503": error,
          },
        },
      },
      // POST /mcp exactly as the generator writes it (the runtime drops it when MCP=off).
      [MCP_PATH]: mcpPathItem(64),
    },
    components: {
      schemas: { ...schemas, ...MCP_SCHEMAS },
      securitySchemes: {
        "PAYMENT-SIGNATURE": { type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE" },
        "X-PAYMENT": { type: "apiKey", in: "header", name: "X-PAYMENT" },
      },
    },
  };
  return { openapi, capabilities };
}

/** `agent` with its discovery data attached. */
export function withDiscovery<T extends AgentDefinition>(agent: T): T {
  agent.discovery = discoveryFor(agent);
  return agent;
}

/** Keeps only the named capabilities of `agent` (in place), e.g. a one-capability agent. */
export function only<T extends AgentDefinition>(agent: T, ...names: string[]): T {
  for (const name of Object.keys(agent.capabilities))
    if (!names.includes(name)) delete agent.capabilities[name];
  return agent;
}
