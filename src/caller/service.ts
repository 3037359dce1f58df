/**
 * What a caller knows about a service before calling it: its capabilities, prices and input/output schemas,
 * read from a running service's GET /about (any server that follows the spec) or from an agent.json.
 * `create-agent call` and `create-agent client` both start here.
 */
import { existsSync } from "node:fs";
import {
  amountProblem,
  type FieldDescriptor,
  type JsonSchema,
  loadManifest,
  toAtomicAmount,
  toJsonSchema,
  toTypeName,
} from "../manifest/index.js";
import { isObject } from "../json-object.js";
import { ANSWER_LIMITS, readLimited } from "./guard-read.js";
import { PaymentGuardError } from "./guard.js";

export interface ServiceCapability {
  name: string;
  description?: string;
  /** Decimal USDC, as declared (e.g. "0.01"). */
  price: string;
  /** The same in USDC atomic units (6 decimals), e.g. "10000". */
  priceAtomic: string;
  /** PascalCase base for generated type names, e.g. "ExtractEntities". */
  typeName: string;
  inputFields: Record<string, FieldDescriptor>;
  outputFields: Record<string, FieldDescriptor>;
  /** Closed JSON Schemas, exactly as a create-agent server validates them. */
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

export interface ServiceDescription {
  name: string;
  /** The protocol version the service declares (spec section 9). */
  serviceVersion: string;
  /** Base URL when read from a running service (no trailing slash), undefined for an agent.json. */
  baseUrl?: string;
  capabilities: ServiceCapability[];
}

/** A problem reading the service: the message says what was wrong and where. */
export class ServiceError extends Error {
  override name = "ServiceError";
}

/** Timeout for GET /about. */
const ABOUT_TIMEOUT_MS = 15_000;

/** Is `source` a URL (http/https) rather than a file path? */
export function isUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

/**
 * The base URL of a service from what a user typed: trailing slashes and a trailing /about, /execute,
 * /health or /mcp are dropped, so any of the service's own URLs works.
 */
export function baseUrlOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ServiceError(`"${url}" is not a valid URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new ServiceError(`"${url}" is not an http(s) URL`);
  parsed.search = "";
  parsed.hash = "";
  const path = parsed.pathname.replace(/\/+$/, "").replace(/\/(about|execute|health|mcp)$/, "");
  return `${parsed.origin}${path}`;
}

/** Reads a service from a URL (its GET /about) or an agent.json path. */
export async function readService(
  source: string,
  fetchImpl: typeof fetch = fetch,
): Promise<ServiceDescription> {
  if (isUrl(source)) return readAbout(baseUrlOf(source), fetchImpl);
  if (!existsSync(source))
    throw new ServiceError(`"${source}" is neither an http(s) URL nor an existing agent.json file`);
  const model = await loadManifest(source);
  return {
    name: model.name,
    serviceVersion: "1.0",
    capabilities: model.capabilities.map((c) => ({
      name: c.name,
      ...(c.declaration.description ? { description: c.declaration.description } : {}),
      price: c.declaration.pricing.amount,
      priceAtomic: c.priceAtomic,
      typeName: c.typeName,
      inputFields: c.declaration.input_schema,
      outputFields: c.declaration.output_schema,
      inputSchema: c.inputSchema,
      outputSchema: c.outputSchema,
    })),
  };
}

async function readAbout(baseUrl: string, fetchImpl: typeof fetch): Promise<ServiceDescription> {
  const url = `${baseUrl}/about`;
  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(ABOUT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new ServiceError(`cannot reach ${url}: ${describeFetchError(error)}`);
  }
  if (!response.ok)
    throw new ServiceError(
      `GET ${url} answered HTTP ${response.status}, not the capability declaration`,
    );
  let text: string;
  try {
    text = new TextDecoder().decode(
      await readLimited(response, ANSWER_LIMITS.about, `GET ${url}'s answer`),
    );
  } catch (error) {
    if (error instanceof PaymentGuardError) throw new ServiceError(error.message);
    throw new ServiceError(`cannot read ${url}: ${describeFetchError(error)}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ServiceError(`GET ${url} did not answer JSON`);
  }
  return { ...parseAbout(body, url), baseUrl };
}

/** Checks a GET /about body (spec 2.2) and turns it into a service description. */
export function parseAbout(body: unknown, where: string): ServiceDescription {
  const fail = (path: string, problem: string): never => {
    throw new ServiceError(`${where}: ${path} ${problem} (not a capability declaration, spec 2.2)`);
  };
  if (!isObject(body)) return fail("the body", "is not a JSON object");
  const name = typeof body.name === "string" ? body.name : fail("name", "is not a string");
  const serviceVersion =
    typeof body.service_version === "string"
      ? body.service_version
      : fail("service_version", "is not a string");
  if (!isObject(body.capabilities)) return fail("capabilities", "is not an object");
  const capabilities: ServiceCapability[] = [];
  const seen = new Set<string>();
  for (const [capName, entry] of Object.entries(body.capabilities)) {
    const at = `capabilities.${capName}`;
    if (!isObject(entry)) return fail(at, "is not an object");
    const pricing = entry.pricing;
    if (!isObject(pricing) || typeof pricing.amount !== "string")
      return fail(`${at}.pricing.amount`, "is not a string");
    if (pricing.currency !== "USDC")
      return fail(`${at}.pricing.currency`, `is ${JSON.stringify(pricing.currency)}, not "USDC"`);
    const problem = amountProblem(pricing.amount);
    if (problem) return fail(`${at}.pricing.amount`, `is unusable: ${problem}`);
    const inputFields = fieldMap(entry.input_schema, `${at}.input_schema`, fail);
    const outputFields = fieldMap(entry.output_schema, `${at}.output_schema`, fail);
    let typeName = toTypeName(capName);
    while (seen.has(typeName)) typeName += "_";
    seen.add(typeName);
    capabilities.push({
      name: capName,
      ...(typeof entry.description === "string" && entry.description
        ? { description: entry.description }
        : {}),
      price: pricing.amount,
      priceAtomic: toAtomicAmount(pricing.amount),
      typeName,
      inputFields,
      outputFields,
      inputSchema: toJsonSchema(inputFields, "input"),
      outputSchema: toJsonSchema(outputFields, "output"),
    });
  }
  return { name, serviceVersion, capabilities };
}

function fieldMap(
  value: unknown,
  path: string,
  fail: (path: string, problem: string) => never,
): Record<string, FieldDescriptor> {
  if (!isObject(value)) return fail(path, "is not an object");
  for (const [field, descriptor] of Object.entries(value)) {
    if (!isObject(descriptor) || typeof descriptor.type !== "string")
      fail(`${path}.${field}`, "has no string `type`");
  }
  return value as Record<string, FieldDescriptor>;
}

/** A capability by name, or an error listing the ones the service has. */
export function findServiceCapability(
  service: ServiceDescription,
  name: string,
): ServiceCapability {
  const found = service.capabilities.find((c) => c.name === name);
  if (found) return found;
  const names = service.capabilities.map((c) => c.name).join(", ") || "none";
  throw new ServiceError(`${service.name} has no capability "${name}" (it has: ${names})`);
}

export function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return "timed out";
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}

export type { JsonSchema };
