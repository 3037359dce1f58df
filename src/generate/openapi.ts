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
import { FIELD_TYPES } from "../manifest/model.js";
import { DESCRIPTOR_KEYWORDS, type DescriptorKeyword } from "../manifest/keywords.js";
import { MCP_PATH, MCP_SCHEMAS, mcpPathItem } from "./openapi-mcp.js";
import { checkedSample } from "./sample-values.js";

type Json = { [key: string]: unknown };

// What the embedded runtime enforces and answers (templates/runtime); a test keeps these in sync with it.
/** jobs/request.ts SERVICE_VERSION: the protocol version of /about, job requests and results. */
export const SERVICE_VERSION = "1.0";
/** jobs/request.ts MAX_JOB_ID_LENGTH. */
export const MAX_JOB_ID_LENGTH = 256;
/** jobs/request.ts MAX_DEADLINE_AHEAD_SECONDS: the default of MAX_DEADLINE_SECONDS. */
export const MAX_DEADLINE_AHEAD_SECONDS = 7 * 24 * 3600;
/** jobs/request.ts MAX_NESTING_DEPTH. */
export const MAX_NESTING_DEPTH = 64;
/** errors.ts GENERIC_INTERNAL_MESSAGE: the message of every 500. */
export const GENERIC_INTERNAL_MESSAGE =
  "internal error: the job failed on the server and was not charged";
/** payments/gate.ts: the reason of the 402 for a missing payment header. */
export const PAYMENT_REQUIRED_MESSAGE = "payment required: send a PAYMENT-SIGNATURE header";
/** discovery/paths.ts: where the runtime serves the discovery documents. */
export const DISCOVERY_PATHS = {
  openapi: "/openapi.json",
  agentCard: "/.well-known/agent-card.json",
  llms: "/llms.txt",
} as const;
/** ops/config.ts: the default MAX_BODY_BYTES (only used in an example message). */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** payments/config.ts: the default X402_MAX_TIMEOUT_SECONDS (only used in examples). */
const DEFAULT_MAX_TIMEOUT_SECONDS = 300;

/** Example values for what depends on the server's configuration, not on agent.json. */
const EXAMPLE = {
  /** 2026-01-01T00:00:00Z: examples need fixed timestamps to stay byte-stable. */
  now: 1767225600,
  jobId: "job-0001",
  resource: "https://agent.example.com/execute",
  /** Base Sepolia and its USDC contract (payments/networks.ts). */
  networkV1: "base-sepolia",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  assetDomain: { name: "USDC", version: "2" },
  payTo: "0x1111111111111111111111111111111111111111",
} as const;

const ERROR_TYPES = ["validation", "payment", "deadline", "capability", "internal"] as const;
type ErrorType = (typeof ERROR_TYPES)[number];

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

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** "0.01 USDC per job", with the amount exactly as agent.json (and GET /about) spell it. */
export function priceText(c: CapabilityModel): string {
  return `${c.declaration.pricing.amount} ${c.declaration.pricing.currency} per job`;
}

/** What a capability does, for descriptions and the x402 offer (payments/gate.ts uses the same fallback). */
function capabilityDescription(c: CapabilityModel): string {
  return c.declaration.description ?? `Run capability "${c.name}"`;
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
      "/execute": { post: executeOperation(model, sampleOf) },
      // Served unless MCP=off (the runtime then removes it from the document it serves).
      [MCP_PATH]: mcpPathItem(MAX_NESTING_DEPTH),
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
    },
    components: {
      schemas: { ...componentSchemas(model), ...MCP_SCHEMAS },
      headers: componentHeaders(),
      securitySchemes: securitySchemes(),
    },
  };
}

/** `security` of the free operations: no credential at all. */
const FREE: Json[] = [];

/** The x402 payment headers, as security schemes (named after their headers). */
const PAYMENT_SCHEMES = { v2: "PAYMENT-SIGNATURE", v1: "X-PAYMENT" } as const;

/** The payment, declared as what it is to HTTP: a credential in a header (OpenAPI `apiKey`). */
function securitySchemes(): Json {
  return {
    [PAYMENT_SCHEMES.v2]: {
      type: "apiKey",
      in: "header",
      name: "PAYMENT-SIGNATURE",
      description:
        "x402 version 2 payment: base64 of the JSON PaymentPayload (`x402Version: 2`, `accepted`: the entry of the `PAYMENT-REQUIRED` header's `accepts` you pay for, `payload`: the EIP-3009 authorization and its signature). Required unless the server runs in dev mode; without it (and without X-PAYMENT) the answer is 402 saying how to pay.",
    },
    [PAYMENT_SCHEMES.v1]: {
      type: "apiKey",
      in: "header",
      name: "X-PAYMENT",
      description:
        "x402 version 1 payment: base64 of the JSON payment payload (`x402Version: 1`, `scheme`, `network`, `payload`: the EIP-3009 authorization and its signature), for clients that read the 402 body's `accepts`. Used when PAYMENT-SIGNATURE is absent.",
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

function jsonContent(schema: Json, examples?: Json, example?: unknown): Json {
  const media: Json = { schema };
  if (example !== undefined) media.example = example;
  if (examples !== undefined) media.examples = examples;
  return { "application/json": media };
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

function errorBody(errorType: ErrorType, error: string): Json {
  return { status: "failed", error_type: errorType, error };
}

/** The error body schema, narrowed to the error types a status can carry. */
function errorSchema(types: readonly ErrorType[]): Json {
  const narrowed = types.length === 1 ? { const: types[0] } : { enum: [...types] };
  return { allOf: [ref("ErrorBody"), { properties: { error_type: narrowed } }] };
}

function example(summary: string, value: unknown, description?: string): Json {
  return description === undefined ? { summary, value } : { summary, description, value };
}

/** A name that no capability has, for the unknown-capability example. */
function unknownCapabilityName(model: AgentModel): string {
  const names = new Set(model.capabilities.map((c) => c.name));
  let name = "no-such-capability";
  while (names.has(name)) name += "-x";
  return name;
}

/** The CapabilityError message of jobs/request.ts findCapability. */
function unknownCapabilityMessage(model: AgentModel, name: string): string {
  const names = model.capabilities.map((c) => c.name);
  const listed = names.slice(0, 50).map((n) => JSON.stringify(n));
  if (names.length > listed.length) listed.push(`and ${names.length - listed.length} more`);
  return `unknown capability ${JSON.stringify(name)}; available: ${listed.length > 0 ? listed.join(", ") : "(none)"}`;
}

function executeOperation(
  model: AgentModel,
  sampleOf: (c: CapabilityModel) => CapabilitySamples,
): Json {
  const caps = model.capabilities;
  const deadline = EXAMPLE.now + 60;
  const jobBody = (c: CapabilityModel): Json => ({
    service_version: SERVICE_VERSION,
    job_id: EXAMPLE.jobId,
    task: { capability: c.name, input: sampleOf(c).input },
    deadline,
  });
  const requestExamples = Object.fromEntries(
    caps.map((c) => [
      c.name,
      example(
        `${c.name} (${priceText(c)})`,
        jobBody(c),
        "`deadline` is a Unix time in seconds a little ahead of now (for example now + 60).",
      ),
    ]),
  );
  const resultExamples = Object.fromEntries(
    caps.map((c) => [
      c.name,
      example(c.name, {
        service_version: SERVICE_VERSION,
        job_id: EXAMPLE.jobId,
        status: "completed",
        output: sampleOf(c).output,
        completed_at: EXAMPLE.now + 2,
      }),
    ]),
  );
  const paymentExamples: Json = {};
  for (const c of caps) {
    paymentExamples[`missing-payment-${c.name}`] = example(
      `No payment header, ${c.name} (${priceText(c)})`,
      {
        x402Version: 1,
        error: PAYMENT_REQUIRED_MESSAGE,
        accepts: [
          {
            scheme: "exact",
            network: EXAMPLE.networkV1,
            maxAmountRequired: c.priceAtomic,
            resource: EXAMPLE.resource,
            description: capabilityDescription(c),
            mimeType: "application/json",
            payTo: EXAMPLE.payTo,
            maxTimeoutSeconds: DEFAULT_MAX_TIMEOUT_SECONDS,
            asset: EXAMPLE.asset,
            extra: EXAMPLE.assetDomain,
          },
        ],
      },
      "network, asset, payTo, resource and maxTimeoutSeconds depend on the server's configuration and the job's deadline.",
    );
  }
  paymentExamples["invalid-payment"] = example(
    "The payment header is present but unusable",
    errorBody(
      "payment",
      `authorization expired (validBefore ${EXAMPLE.now - 100}, now ${EXAMPLE.now}); sign a new one`,
    ),
  );
  const unknown = unknownCapabilityName(model);
  const requestId = { "X-Request-Id": headerRef("X-Request-Id") };

  return {
    tags: ["jobs"],
    operationId: "executeJob",
    summary: "Run a job",
    // Either payment header pays (spec section 5: the payment is the credential for /execute).
    security: [{ [PAYMENT_SCHEMES.v2]: [] }, { [PAYMENT_SCHEMES.v1]: [] }],
    description: [
      "Runs one job of the capability named in `task.capability`: the request is checked, then the input " +
        "against the capability's input schema (scalar values are coerced where the schema allows, and " +
        "defaults filled in), then the payment, then the deadline; the handler runs until the deadline, " +
        "and its output is checked against the output schema before anything is charged.",
      "",
      "Payment (x402, USDC, scheme `exact`): send `PAYMENT-SIGNATURE` (x402 v2) or `X-PAYMENT` (v1). " +
        "Without either the answer is 402 with the payment requirements: in the body for v1 clients, in " +
        "the `PAYMENT-REQUIRED` header for v2 clients. A payment pays for one job only, and is settled " +
        "only once the job has succeeded. A server in dev mode skips the payment entirely.",
      "",
      `Bodies are nested at most ${MAX_NESTING_DEPTH} levels deep, and are at most 1 MiB by default (MAX_BODY_BYTES).`,
    ].join("\n"),
    requestBody: {
      required: true,
      description:
        "A job request (spec 2.3). The request schemas differ only in `task.capability` (a `const`) and the `task.input` that goes with it.",
      // One schema per capability, told apart by task.capability's `const`: plain JSON Schema. OpenAPI's
      // `discriminator` cannot point into a nested property (task.capability), so there is none.
      content: jsonContent(
        caps.length > 0 ? { oneOf: caps.map((c) => ref(`${c.typeName}JobRequest`)) } : { not: {} },
        requestExamples,
      ),
    },
    responses: {
      "200": {
        description:
          "The job completed (spec 2.4). A paid job's answer carries the settlement receipt: `PAYMENT-RESPONSE` for x402 v2 clients, `X-PAYMENT-RESPONSE` for v1; dev mode sends neither.",
        headers: {
          "PAYMENT-RESPONSE": headerRef("PAYMENT-RESPONSE"),
          "X-PAYMENT-RESPONSE": headerRef("X-PAYMENT-RESPONSE"),
          ...requestId,
        },
        // anyOf, not oneOf: a result does not name its capability, and two capabilities may well have
        // outputs of the same shape.
        content: jsonContent(
          caps.length > 0 ? { anyOf: caps.map((c) => ref(`${c.typeName}JobResult`)) } : { not: {} },
          resultExamples,
        ),
      },
      "400": {
        description:
          "`validation`: the request or the input does not match its schema (the message names the field and the problem), or the body is not JSON, or (when a 402 must name this endpoint's URL and PUBLIC_URL is not set) the Host header is not a valid host name. `capability`: `task.capability` names no declared capability (the message lists the available ones).",
        headers: requestId,
        content: jsonContent(errorSchema(["validation", "capability"]), {
          validation: example(
            "Invalid request",
            errorBody("validation", "job_id: missing required field"),
          ),
          capability: example(
            "Unknown capability",
            errorBody("capability", unknownCapabilityMessage(model, unknown)),
          ),
        }),
      },
      "402": {
        description:
          'Payment required. No payment header: the payment-required body (spec 2.6, x402 v1) and the `PAYMENT-REQUIRED` header (x402 v2), both offering this capability\'s price. A payment header that is invalid, expired, or cannot be settled: an error body with `error_type: "payment"`, with `PAYMENT-REQUIRED` when paying again can help. Nothing was charged unless the message says the settlement is unconfirmed.',
        headers: { "PAYMENT-REQUIRED": headerRef("PAYMENT-REQUIRED"), ...requestId },
        content: jsonContent(
          { oneOf: [ref("PaymentRequired"), errorSchema(["payment"])] },
          paymentExamples,
        ),
      },
      "408": {
        description:
          "`deadline`: the deadline had passed on arrival, or the handler did not return before it. Nothing is charged; the payment authorization expires unused.",
        headers: requestId,
        content: jsonContent(errorSchema(["deadline"]), {
          "passed-on-arrival": example(
            "Deadline already passed",
            errorBody(
              "deadline",
              `deadline ${deadline} has already passed (now ${deadline + 40}); the handler was not run`,
            ),
          ),
          "handler-too-slow": example(
            "Handler did not finish in time",
            errorBody("deadline", `the handler did not finish before the deadline (${deadline})`),
          ),
        }),
      },
      "409": {
        description:
          "`payment`: the payment carries an x402 `payment-identifier` id already used with another payment, or for another request (capability, input or job_id). Nothing was run or charged. (The identical request with the same payment and id gets the stored answer instead: 200.)",
        headers: requestId,
        content: jsonContent(
          errorSchema(["payment"]),
          undefined,
          errorBody(
            "payment",
            'payment id "pay_7d5d747be160e280504c099d984bcfe0" was already used with another payment (payment-identifier binds an id to one exact PaymentPayload); nothing was run or charged: give a new payment its own id',
          ),
        ),
      },
      "413": {
        description: "`validation`: the body is larger than the server's limit (MAX_BODY_BYTES).",
        headers: requestId,
        content: jsonContent(
          errorSchema(["validation"]),
          undefined,
          errorBody("validation", `request body is larger than ${DEFAULT_MAX_BODY_BYTES} bytes`),
        ),
      },
      "415": {
        description:
          "`validation`: the Content-Type is not application/json, or the body's encoding or charset is not supported.",
        headers: requestId,
        content: jsonContent(
          errorSchema(["validation"]),
          undefined,
          errorBody("validation", 'Content-Type must be application/json (got "text/plain")'),
        ),
      },
      "500": {
        description:
          "`internal`: the handler failed or its output does not match the output schema. The message is generic (the cause is in the server's log); nothing is charged.",
        headers: requestId,
        content: jsonContent(
          errorSchema(["internal"]),
          undefined,
          errorBody("internal", GENERIC_INTERNAL_MESSAGE),
        ),
      },
      "503": {
        description:
          "`internal`: the service cannot take the job now (it is shutting down, or its payment ledger is unreachable). Nothing was run or charged; send the same request again after `Retry-After` seconds.",
        headers: { "Retry-After": headerRef("Retry-After"), ...requestId },
        content: jsonContent(errorSchema(["internal"]), {
          "shutting-down": example(
            "Shutting down",
            errorBody(
              "internal",
              "the server is shutting down and takes no new jobs; nothing was run or charged; send it again",
            ),
          ),
          "ledger-unreachable": example(
            "Payment ledger unreachable",
            errorBody(
              "internal",
              "the payment ledger is unreachable, so no paid job can start; nothing was run or charged; retry in 5 s",
            ),
          ),
        }),
      },
    },
    "x-x402": {
      scheme: "exact",
      currency: "USDC",
      prices: Object.fromEntries(caps.map((c) => [c.name, c.declaration.pricing.amount])),
    },
  };
}

function componentSchemas(model: AgentModel): Json {
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

// The x402 objects are left open (no additionalProperties: false): the protocol grows, and catalogue
// extensions ride along in them.
const ADDRESS: Json = { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" };
const ATOMIC_AMOUNT: Json = {
  type: "string",
  pattern: "^[0-9]+$",
  description:
    'The price in USDC atomic units (6 decimals): "10000" is 0.01 USDC. The exact scheme charges exactly this.',
};
const ASSET_DOMAIN: Json = {
  type: "object",
  description: "The USDC contract's EIP-712 domain name and version, needed to sign the payment.",
  required: ["name", "version"],
  properties: { name: { type: "string" }, version: { type: "string" } },
};
const MAX_TIMEOUT: Json = {
  type: "integer",
  minimum: 1,
  description:
    "How long the payment authorization must stay valid, in seconds from signing (covers the job's deadline).",
};

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
  return {
    type: "object",
    description:
      "A field of a capability's input or output: its JSON type, whether it is required, and the JSON Schema keywords that constrain it.",
    required: ["type"],
    properties: Object.fromEntries(DESCRIPTOR_KEYWORDS.map((k) => [k, keywords[k]])),
    additionalProperties: false,
  };
}

function sharedSchemas(model: AgentModel): Json {
  const names = model.capabilities.map((c) => c.name);
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
    HealthRecord: {
      type: "object",
      description: "GET /health (spec 2.1).",
      required: ["name", "version", "status"],
      properties: {
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
      },
      additionalProperties: false,
    },
    CapabilityDeclaration: {
      type: "object",
      description: "GET /about (spec 2.2).",
      required: ["service_version", "name", "capabilities"],
      properties: {
        service_version: ref("ServiceVersion"),
        name: { type: "string", const: model.name, description: "Agent name." },
        capabilities: {
          type: "object",
          description: "Every capability, by name.",
          required: names,
          properties: Object.fromEntries(names.map((n) => [n, ref("CapabilityEntry")])),
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    CapabilityEntry: {
      type: "object",
      description: "One capability as declared in agent.json (without its catalogue tags).",
      required: ["pricing", "input_schema", "output_schema"],
      properties: {
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
      additionalProperties: false,
    },
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
    FieldDescriptor: fieldDescriptorSchema(),
    ErrorBody: {
      type: "object",
      description: "Every failure except a missing payment (spec 2.5).",
      required: ["status", "error_type", "error"],
      properties: {
        status: { const: "failed" },
        error_type: { enum: [...ERROR_TYPES] },
        error: { type: "string", description: "Human-readable message." },
      },
      additionalProperties: false,
    },
    PaymentRequired: {
      type: "object",
      description:
        "The 402 body when no payment header was sent (spec 2.6): x402 version 1 payment requirements. x402 v2 clients read the same offer from the PAYMENT-REQUIRED header.",
      required: ["x402Version", "error", "accepts"],
      properties: {
        x402Version: { const: 1 },
        error: { type: "string" },
        accepts: { type: "array", minItems: 1, items: ref("PaymentRequirementsV1") },
      },
    },
    PaymentRequirementsV1: {
      type: "object",
      description: "One way to pay (x402 v1): a v1 client signs an EIP-3009 authorization for it.",
      required: [
        "scheme",
        "network",
        "maxAmountRequired",
        "resource",
        "description",
        "mimeType",
        "payTo",
        "maxTimeoutSeconds",
        "asset",
        "extra",
      ],
      properties: {
        scheme: { const: "exact" },
        network: { type: "string", description: 'x402 v1 network name, e.g. "base-sepolia".' },
        maxAmountRequired: ATOMIC_AMOUNT,
        resource: { type: "string", format: "uri", description: "URL of POST /execute." },
        description: { type: "string", description: "What the job does." },
        mimeType: { const: "application/json" },
        payTo: { ...ADDRESS, description: "Address the payment goes to." },
        maxTimeoutSeconds: MAX_TIMEOUT,
        asset: { ...ADDRESS, description: "The USDC token contract." },
        extra: ASSET_DOMAIN,
        outputSchema: {
          type: "object",
          description:
            "For x402 catalogues (Bazaar, v1): how to call this endpoint (`input`: an example job request) and the job's output.",
        },
      },
    },
    PaymentRequiredV2: {
      type: "object",
      description:
        "x402 version 2 PaymentRequired, sent base64-encoded (UTF-8 JSON) in the PAYMENT-REQUIRED header. A v2 client copies one `accepts` entry into its payment's `accepted`.",
      required: ["x402Version", "error", "resource", "accepts"],
      properties: {
        x402Version: { const: 2 },
        error: { type: "string" },
        resource: {
          type: "object",
          required: ["url", "description", "mimeType"],
          properties: {
            url: { type: "string", format: "uri" },
            description: { type: "string" },
            mimeType: { const: "application/json" },
          },
        },
        accepts: { type: "array", minItems: 1, items: ref("PaymentRequirementsV2") },
        extensions: {
          type: "object",
          description:
            "For x402 catalogues: `bazaar` holds an example job request and result (`info`) and their JSON Schema (`schema`).",
        },
      },
    },
    PaymentRequirementsV2: {
      type: "object",
      description: "One way to pay (x402 v2).",
      required: ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds", "extra"],
      properties: {
        scheme: { const: "exact" },
        network: { type: "string", description: 'CAIP-2 network id, e.g. "eip155:84532".' },
        amount: ATOMIC_AMOUNT,
        asset: { ...ADDRESS, description: "The USDC token contract." },
        payTo: { ...ADDRESS, description: "Address the payment goes to." },
        maxTimeoutSeconds: MAX_TIMEOUT,
        extra: ASSET_DOMAIN,
      },
    },
    SettlementResponse: {
      type: "object",
      description:
        "The receipt of a settled payment, sent base64-encoded (UTF-8 JSON) in PAYMENT-RESPONSE (x402 v2) or X-PAYMENT-RESPONSE (v1).",
      required: ["success", "transaction", "network", "payer"],
      properties: {
        success: { const: true },
        transaction: {
          type: "string",
          pattern: "^0x[0-9a-fA-F]{64}$",
          description: "Hash of the transferWithAuthorization transaction.",
        },
        network: { type: "string", description: "The network, as the client named it." },
        payer: { ...ADDRESS, description: "Who paid." },
      },
    },
  };
}

function base64Json(schemaName: string): Json {
  return {
    type: "string",
    contentEncoding: "base64",
    contentMediaType: "application/json",
    contentSchema: ref(schemaName),
  };
}

function componentHeaders(): Json {
  return {
    "PAYMENT-REQUIRED": {
      description:
        "x402 version 2: base64 of the JSON PaymentRequired (PaymentRequiredV2): this job's price and how to pay it.",
      schema: base64Json("PaymentRequiredV2"),
    },
    "PAYMENT-RESPONSE": {
      description:
        "x402 version 2 clients: base64 of the JSON settlement receipt (SettlementResponse). Absent in dev mode.",
      schema: base64Json("SettlementResponse"),
    },
    "X-PAYMENT-RESPONSE": {
      description:
        "x402 version 1 clients: base64 of the JSON settlement receipt (SettlementResponse). Absent in dev mode.",
      schema: base64Json("SettlementResponse"),
    },
    ETag: {
      description: "Strong entity tag of the document (send it back in If-None-Match).",
      schema: { type: "string" },
    },
    "Retry-After": {
      description: "Seconds to wait before sending the request again.",
      schema: { type: "integer", minimum: 0 },
    },
    "X-Request-Id": {
      description:
        "The request's id: the caller's X-Request-Id when it is 1-128 characters of [A-Za-z0-9._:@/+=-], else a new UUID.",
      schema: { type: "string" },
    },
  };
}
