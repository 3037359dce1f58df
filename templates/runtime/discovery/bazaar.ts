/**
 * The x402 Bazaar discovery extension: a 402 says not only how to pay for a job but also what the
 * job looks like, so x402 catalogues (a facilitator's /discovery/resources) can list the service.
 *
 * v2 (PAYMENT-REQUIRED header): `extensions.bazaar = { info, schema }` in the shape @x402/extensions
 * declares for a POST endpoint with a JSON body: `info` holds an example job request and result,
 * `schema` is a JSON Schema (2020-12) that `info` conforms to, self-contained (no external $ref/$id).
 * v1 (the body's `accepts` entry): `outputSchema = { input: { type: "http", method: "POST",
 * discoverable: true, bodyType: "json", body }, output }`, as v1 catalogues read it.
 *
 * Only the 402 carries it: what is verified and settled is unchanged (gate.offer() has no extension).
 * A v2 client echoes the extensions in its PAYMENT-SIGNATURE header, so their size is bounded.
 * Part of your project: edit freely.
 */
import {
  type CapabilityDiscovery,
  componentSchema,
  type DiscoveryData,
  type JsonObject,
} from "./data.js";
import { exampleJobRequest, exampleJobResult } from "./examples.js";
import { MAX_JOB_ID_LENGTH, SERVICE_VERSION } from "../jobs/request.js";
import type { Capability, Logger } from "../types.js";
import type { OfferDiscovery } from "../payments/x402.js";

/**
 * Largest bazaar extension sent, in bytes of JSON. The PAYMENT-REQUIRED header carries it base64
 * encoded (4/3 larger) next to the payment requirement, and a v2 client sends it back inside its
 * PAYMENT-SIGNATURE header: Node refuses requests whose headers exceed 16 KiB in total, and Node's
 * fetch refuses answers whose headers do. 6 KiB keeps both headers near 10 KiB at most.
 */
export const MAX_BAZAAR_BYTES = 6 * 1024;

/** Seconds ahead the example request's deadline is set (capped by the service's largest deadline). */
const EXAMPLE_DEADLINE_SECONDS = 300;

const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
const COMPONENT_REF = "#/components/schemas/";

/** Per capability: its Bazaar extension and v1 outputSchema for a 402 built now. */
export type BazaarDeclarations = (
  capability: Capability,
  nowMs?: number,
) => OfferDiscovery | undefined;

export interface BazaarOptions {
  logger: Logger;
  /** The service's largest accepted deadline, in seconds from now (config.maxDeadlineSeconds). */
  maxDeadlineSeconds: number;
}

/**
 * Schemas and examples of every capability, checked once at startup. A capability whose examples
 * its own validators refuse, whose schemas cannot be made self-contained, or whose extension would
 * be too large gets none (logged at startup).
 */
export function createBazaar(
  capabilities: Record<string, Capability>,
  data: DiscoveryData,
  options: BazaarOptions,
): BazaarDeclarations {
  const ahead = Math.min(EXAMPLE_DEADLINE_SECONDS, options.maxDeadlineSeconds);
  const prepared = new Map<string, { discovery: CapabilityDiscovery; schema: JsonObject }>();
  for (const [name, capability] of Object.entries(capabilities)) {
    const discovery = Object.hasOwn(data.capabilities, name) ? data.capabilities[name] : undefined;
    if (!discovery) {
      options.logger.warn(
        `x402 Bazaar: no discovery data for capability "${name}"; its 402 lists no bazaar extension`,
      );
      continue;
    }
    // A catalogue shows the example as how to call: it must be a job this service accepts.
    const invalid = !capability.validateInput(structuredClone(discovery.exampleInput))
      ? "input"
      : !capability.validateOutput(discovery.exampleOutput)
        ? "output"
        : undefined;
    if (invalid) {
      options.logger.warn(
        `x402 Bazaar: capability "${name}" gets no bazaar extension: its example ${invalid} does not pass its own ${invalid} schema`,
      );
      continue;
    }
    let schema: JsonObject;
    try {
      schema = bazaarSchema(name, data, discovery);
    } catch (err) {
      options.logger.warn(
        `x402 Bazaar: capability "${name}" gets no bazaar extension: ${(err as Error).message}`,
      );
      continue;
    }
    // Measured with a full-size deadline; an oversized schema first loses its annotations.
    const size = (s: JsonObject) =>
      bytes(declare(name, discovery, s, Date.now(), ahead).extensions);
    if (size(schema) > MAX_BAZAAR_BYTES) schema = withoutAnnotations(schema) as JsonObject;
    if (size(schema) > MAX_BAZAAR_BYTES) {
      options.logger.warn(
        `x402 Bazaar: capability "${name}" gets no bazaar extension: it would take ${size(schema)} bytes, over the ${MAX_BAZAAR_BYTES}-byte budget that keeps payment headers under Node's 16 KiB header limit (shorten its descriptions or examples)`,
      );
      continue;
    }
    prepared.set(name, { discovery, schema });
  }

  return (capability, nowMs = Date.now()) => {
    const entry = prepared.get(capability.name);
    return entry && declare(capability.name, entry.discovery, entry.schema, nowMs, ahead);
  };
}

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

/** The extension (v2) and outputSchema (v1) for a 402 built at `nowMs`. */
function declare(
  name: string,
  discovery: CapabilityDiscovery,
  schema: JsonObject,
  nowMs: number,
  ahead: number,
): OfferDiscovery {
  const now = Math.floor(nowMs / 1000);
  const body = exampleJobRequest(name, discovery, now + ahead);
  const result = exampleJobResult(discovery, now + 1);
  return {
    extensions: {
      bazaar: {
        info: {
          input: { type: "http", method: "POST", bodyType: "json", body },
          output: { type: "json", example: result },
        },
        schema,
      },
    },
    outputSchema: {
      input: { type: "http", method: "POST", discoverable: true, bodyType: "json", body },
      output: result,
    },
  };
}

/**
 * The JSON Schema that `info` conforms to: the job request for this capability (its input schema
 * from the OpenAPI components) and the job result (its output schema). Component schemas the two
 * refer to are copied into `$defs`.
 */
export function bazaarSchema(
  name: string,
  data: DiscoveryData,
  discovery: CapabilityDiscovery,
): JsonObject {
  const defs: Record<string, unknown> = {};
  const local = (schemaName: string) => localize(componentSchema(data, schemaName), data, defs);
  const request = jobRequestSchema(name, local(discovery.schemas.input));
  const result = jobResultSchema(local(discovery.schemas.output));
  return {
    $schema: DRAFT_2020_12,
    type: "object",
    properties: {
      input: {
        type: "object",
        properties: {
          type: { type: "string", const: "http" },
          method: { type: "string", enum: ["POST"] },
          bodyType: { type: "string", enum: ["json"] },
          body: request,
        },
        required: ["type", "method", "bodyType", "body"],
        additionalProperties: false,
      },
      output: {
        type: "object",
        properties: { type: { type: "string", const: "json" }, example: result },
        required: ["type", "example"],
      },
    },
    required: ["input"],
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
}

/** The job request (POST /execute's body) for capability `name` whose input conforms to `input`. */
function jobRequestSchema(name: string, input: unknown): JsonObject {
  return {
    type: "object",
    properties: {
      service_version: { type: "string", const: SERVICE_VERSION },
      job_id: {
        type: "string",
        minLength: 1,
        maxLength: MAX_JOB_ID_LENGTH,
        description: "Your id for the job, echoed in the result",
      },
      task: {
        type: "object",
        properties: {
          capability: { type: "string", const: name },
          input,
        },
        required: ["capability", "input"],
      },
      deadline: {
        type: "number",
        exclusiveMinimum: 0,
        description: "Unix timestamp in seconds by which the job must be done",
      },
    },
    required: ["service_version", "job_id", "task", "deadline"],
  };
}

/** A completed job's result whose output conforms to `output`. */
function jobResultSchema(output: unknown): JsonObject {
  return {
    type: "object",
    properties: {
      service_version: { type: "string", const: SERVICE_VERSION },
      job_id: { type: "string" },
      status: { type: "string", const: "completed" },
      output,
      completed_at: { type: "number", description: "Unix timestamp in seconds" },
    },
    required: ["service_version", "job_id", "status", "output", "completed_at"],
  };
}

/**
 * A copy of `schema` whose references work outside the OpenAPI document: `#/components/schemas/X`
 * becomes `#/$defs/X` (X is copied into `defs`, recursively). Any other $ref or $id is refused.
 */
function localize(schema: unknown, data: DiscoveryData, defs: Record<string, unknown>): any {
  if (Array.isArray(schema)) return schema.map((item) => localize(item, data, defs));
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$id" && typeof value === "string")
      throw new Error(
        `its schemas set $id ${JSON.stringify(value)}, which catalogues cannot resolve`,
      );
    if (key === "$ref" && typeof value === "string") {
      if (!value.startsWith(COMPONENT_REF) || value.slice(COMPONENT_REF.length).includes("/"))
        throw new Error(
          `its schemas refer to ${JSON.stringify(value)}, outside the OpenAPI components`,
        );
      const target = value.slice(COMPONENT_REF.length);
      const name = target.replace(/~1/g, "/").replace(/~0/g, "~");
      if (!Object.hasOwn(defs, name)) {
        defs[name] = true; // placeholder while it is copied: a schema may refer to itself
        defs[name] = localize(componentSchema(data, name), data, defs);
      }
      copy[key] = `#/$defs/${target}`;
      continue;
    }
    copy[key] = localize(value, data, defs);
  }
  return copy;
}

/** The schema without `description`, `title` (strings) and `examples` (lists): same meaning, fewer bytes. */
function withoutAnnotations(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutAnnotations);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === "description" || key === "title") && typeof value === "string") continue;
    if (key === "examples" && Array.isArray(value)) continue;
    copy[key] = withoutAnnotations(value);
  }
  return copy;
}
