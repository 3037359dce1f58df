/**
 * The pieces every part of the OpenAPI document (openapi.ts) shares: what the embedded runtime enforces and
 * answers (constants a test keeps in sync with templates/runtime), the fixed example values, and the small
 * builders of references, media types, error bodies and examples.
 */
import type { CapabilityModel } from "../manifest/model.js";

export type Json = { [key: string]: unknown };

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
/** http/paths.ts: where the runtime serves the discovery documents. */
export const DISCOVERY_PATHS = {
  openapi: "/openapi.json",
  agentCard: "/.well-known/agent-card.json",
  llms: "/llms.txt",
} as const;
/** config.ts: the default MAX_BODY_BYTES (only used in an example message). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** payments/config.ts: the default X402_MAX_TIMEOUT_SECONDS (only used in examples). */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 300;

/** Example values for what depends on the server's configuration, not on agent.json. */
export const EXAMPLE = {
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

export const ERROR_TYPES = ["validation", "payment", "deadline", "capability", "internal"] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** "0.01 USDC per job", with the amount exactly as agent.json (and GET /about) spell it. */
export function priceText(c: CapabilityModel): string {
  return `${c.declaration.pricing.amount} ${c.declaration.pricing.currency} per job`;
}

/** What a capability does, for descriptions and the x402 offer (payments/gate.ts uses the same fallback). */
export function capabilityDescription(c: CapabilityModel): string {
  return c.declaration.description ?? `Run capability "${c.name}"`;
}

/** `security` of the free operations: no credential at all. */
export const FREE: Json[] = [];

/** The x402 payment headers, as security schemes (named after their headers). */
export const PAYMENT_SCHEMES = { v2: "PAYMENT-SIGNATURE", v1: "X-PAYMENT" } as const;

export function jsonContent(schema: Json, examples?: Json, example?: unknown): Json {
  const media: Json = { schema };
  if (example !== undefined) media.example = example;
  if (examples !== undefined) media.examples = examples;
  return { "application/json": media };
}

export function errorBody(errorType: ErrorType, error: string): Json {
  return { status: "failed", error_type: errorType, error };
}

/** The error body schema, narrowed to the error types a status can carry. */
export function errorSchema(types: readonly ErrorType[]): Json {
  const narrowed = types.length === 1 ? { const: types[0] } : { enum: [...types] };
  return { allOf: [ref("ErrorBody"), { properties: { error_type: narrowed } }] };
}

export function example(summary: string, value: unknown, description?: string): Json {
  return description === undefined ? { summary, value } : { summary, description, value };
}
