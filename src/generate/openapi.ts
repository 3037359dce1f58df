/**
 * The OpenAPI 3.1 document of the whole service (GET /health, GET /about, POST /execute, POST /mcp in
 * openapi-mcp.ts), derived from the model only: the same manifest gives the same document, byte for
 * byte. It has no `servers`: the app adds its own URL when it serves the document.
 *
 * The capability schemas are draft-07 but use only keywords that mean the same in OpenAPI 3.1's JSON Schema
 * 2020-12 dialect (type, properties, required, additionalProperties, items as one schema, enum, default,
 * examples, bounds, pattern, format), so they are embedded as they are.
 */
import type { AgentModel, CapabilityModel } from "../manifest/model.js";
import { MCP_PATH, MCP_SCHEMAS, mcpPathItem } from "./openapi-mcp.js";
import { executeOperation } from "./openapi-execute.js";
import {
  JOB_SCHEMAS,
  JOB_TOKEN_SCHEME,
  JOBS_PATH,
  jobsPathItem,
  jobTokenScheme,
  withAsync,
} from "./openapi-jobs.js";
import {
  DISCOVERY_PATHS,
  errorSchema,
  FREE,
  headerRef,
  type Json,
  jsonContent,
  MAX_NESTING_DEPTH,
  priceText,
  ref,
  SERVICE_VERSION,
} from "./openapi-parts.js";
import { componentSchemas } from "./openapi-schemas.js";
import { componentHeaders, securitySchemes } from "./openapi-x402.js";
import { checkedSample } from "./sample-values.js";

export {
  DISCOVERY_PATHS,
  GENERIC_INTERNAL_MESSAGE,
  MAX_DEADLINE_AHEAD_SECONDS,
  MAX_JOB_ID_LENGTH,
  MAX_NESTING_DEPTH,
  PAYMENT_REQUIRED_MESSAGE,
  priceText,
  SERVICE_VERSION,
} from "./openapi-parts.js";

/** Example input and output of one capability, made by the sampler (sample-values.ts). */
export interface CapabilitySamples {
  input: Json;
  output: Json;
}

/**
 * The example input (the same minimal sample as src/generated/samples.ts) and a complete example output of
 * every capability, with the sampler's problems (a schema it cannot satisfy: give that field `examples`):
 * all of them in capability order, and the input and the output ones apart.
 */
export function capabilitySamples(model: AgentModel): {
  samples: Map<string, CapabilitySamples>;
  problems: string[];
  inputProblems: string[];
  outputProblems: string[];
} {
  const samples = new Map<string, CapabilitySamples>();
  const problems: string[] = [];
  const inputProblems: string[] = [];
  const outputProblems: string[] = [];
  for (const c of model.capabilities) {
    const input = checkedSample(c.inputSchema, true);
    const output = checkedSample(c.outputSchema, false);
    const inputs = input.problems.map((p) => `${c.name}: sample input ${p}`);
    const outputs = output.problems.map((p) => `${c.name}: sample output ${p}`);
    problems.push(...inputs, ...outputs);
    inputProblems.push(...inputs);
    outputProblems.push(...outputs);
    samples.set(c.name, { input: asObject(input.value), output: asObject(output.value) });
  }
  return { samples, problems, inputProblems, outputProblems };
}

function asObject(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Json)
    : {};
}

/** The OpenAPI 3.1.0 document of the service, without `servers`. Keys are in a fixed order. */
export function buildOpenApi(
  model: AgentModel,
  samples: Map<string, CapabilitySamples> = capabilitySamples(model).samples,
): Json {
  const sampleOf = (c: CapabilityModel): CapabilitySamples =>
    samples.get(c.name) ?? { input: {}, output: {} };
  return {
    openapi: "3.1.0",
    info: {
      title: model.name,
      version: model.version,
      description: infoDescription(model),
    },
    tags: [
      { name: "service", description: "Health check and capability declaration (free)." },
      {
        name: "jobs",
        description: "Paid jobs: one capability run per request, paid in USDC through x402.",
      },
      {
        name: "discovery",
        description:
          "Documents that describe the service to clients, agent directories and LLMs (free).",
      },
    ],
    paths: {
      "/health": { get: healthOperation(model) },
      "/about": { get: aboutOperation(model) },
      "/execute": { post: withAsync(executeOperation(model, sampleOf)) },
      // Served unless MCP=off (the runtime then removes it from the document it serves).
      [MCP_PATH]: mcpPathItem(MAX_NESTING_DEPTH),
      // Served with the `queue` feature (the runtime removes it otherwise).
      [JOBS_PATH]: jobsPathItem(
        model.capabilities.length > 0
          ? { anyOf: model.capabilities.map((c) => ref(`${c.typeName}JobResult`)) }
          : { not: {} },
      ),
      ...discoveryPaths(),
    },
    components: {
      schemas: { ...componentSchemas(model), ...MCP_SCHEMAS, ...JOB_SCHEMAS },
      headers: componentHeaders(),
      securitySchemes: { ...securitySchemes(), [JOB_TOKEN_SCHEME]: jobTokenScheme() },
    },
  };
}

function infoDescription(model: AgentModel): string {
  const lines: string[] = [];
  if (model.description) lines.push(model.description, "");
  lines.push(
    "A pay-per-job agent service. `POST /execute` runs one job of one capability, paid in USDC through " +
      'the x402 protocol (scheme "exact"): a request without a payment header is answered 402 with the ' +
      "payment requirements, and a job is charged only when it succeeded. Every failure is a JSON error " +
      'body with `status: "failed"` and an `error_type`. `GET /health`, `GET /about` and the discovery ' +
      "documents (`GET /openapi.json`, `GET /.well-known/agent-card.json`, `GET /llms.txt`) are free.",
    "",
    "Capabilities:",
    "",
  );
  for (const c of model.capabilities) {
    const what = c.declaration.description ? `: ${c.declaration.description}` : "";
    lines.push(`- \`${c.name}\` (${priceText(c)})${what}`);
  }
  lines.push(
    "",
    "Unknown paths are answered 404, and a known path with another method 405 (with `Allow`), both " +
      "with a validation error body. Every answer carries an `X-Request-Id` header (the caller's own, " +
      "when it sent a sane one); quote it when reporting a problem.",
  );
  return lines.join("\n");
}

function healthOperation(model: AgentModel): Json {
  const record = (status: string, problems?: string[]) => ({
    name: model.name,
    version: model.version,
    status,
    ...(problems ? { problems } : {}),
  });
  return {
    tags: ["service"],
    operationId: "getHealth",
    summary: "Health check",
    security: FREE,
    description:
      'Whether the service can take jobs. While it shuts down, or (outside dev mode) while its payment ledger or a network\'s settlement route is unreachable, the answer is 503 with `status: "degraded"` and the `problems`.',
    responses: {
      "200": {
        description: "Healthy.",
        headers: { "X-Request-Id": headerRef("X-Request-Id") },
        content: jsonContent(ref("HealthRecord"), undefined, record("ok")),
      },
      "503": {
        description: "Degraded: `problems` says why. Paid jobs are refused until it is healthy.",
        headers: { "X-Request-Id": headerRef("X-Request-Id") },
        content: jsonContent(
          ref("HealthRecord"),
          undefined,
          record("degraded", [
            "payment ledger unreachable: paid jobs are refused until it is back",
          ]),
        ),
      },
    },
  };
}

/** Exactly what GET /about returns (templates/runtime/app.ts). */
export function aboutBody(model: AgentModel): Json {
  return {
    service_version: SERVICE_VERSION,
    name: model.name,
    capabilities: Object.fromEntries(model.capabilities.map((c) => [c.name, c.declaration])),
  };
}

function aboutOperation(model: AgentModel): Json {
  return {
    tags: ["service"],
    operationId: "getAbout",
    summary: "Capability declaration",
    security: FREE,
    description:
      "The protocol version, the agent's name, and every capability with its price and its input and output fields, as declared in agent.json.",
    responses: {
      "200": {
        description: "The capability declaration.",
        headers: { "X-Request-Id": headerRef("X-Request-Id") },
        content: jsonContent(ref("CapabilityDeclaration"), undefined, aboutBody(model)),
      },
    },
  };
}

/** The discovery documents' paths (DISCOVERY_PATHS), in the document's order. */
function discoveryPaths(): Json {
  return {
    [DISCOVERY_PATHS.openapi]: {
      get: documentOperation(
        "getOpenApi",
        "OpenAPI document",
        "This document, with `servers` set to the service's public URL.",
        "application/json",
        { type: "object" },
      ),
    },
    [DISCOVERY_PATHS.agentCard]: {
      get: documentOperation(
        "getAgentCard",
        "A2A agent card",
        "An A2A agent card (protocol 1.0 AgentCard, canonical ProtoJSON): one skill per capability, with its price and x402 payment details.",
        "application/json",
        { type: "object" },
      ),
    },
    [DISCOVERY_PATHS.llms]: {
      get: documentOperation(
        "getLlmsTxt",
        "llms.txt",
        "What the service does and exactly how to call and pay it, in Markdown for LLMs (llmstxt.org).",
        "text/plain",
        { type: "string" },
      ),
    },
  };
}

/** A discovery document: free, cached by ETag, its URLs written from PUBLIC_URL or the Host header. */
function documentOperation(
  operationId: string,
  summary: string,
  description: string,
  mediaType: string,
  schema: Json,
): Json {
  const requestId = { "X-Request-Id": headerRef("X-Request-Id") };
  return {
    tags: ["discovery"],
    operationId,
    summary,
    security: FREE,
    description: `${description} Cacheable for 5 minutes; answered 304 when If-None-Match holds its ETag.`,
    parameters: [
      {
        name: "If-None-Match",
        in: "header",
        required: false,
        description: "The ETag of the copy you have: 304 without a body when it is still current.",
        schema: { type: "string" },
      },
    ],
    responses: {
      "200": {
        description: summary,
        headers: { ETag: headerRef("ETag"), ...requestId },
        content: { [mediaType]: { schema } },
      },
      "304": {
        description: "Not modified: the copy named by If-None-Match is current.",
        headers: { ETag: headerRef("ETag"), ...requestId },
      },
      "400": {
        description:
          "`validation`: the Host header is not a valid host name (and PUBLIC_URL is not set), so the document's URLs cannot be written.",
        headers: requestId,
        content: jsonContent(errorSchema(["validation"])),
      },
    },
  };
}
