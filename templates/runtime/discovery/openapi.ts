/**
 * GET /openapi.json: the generated OpenAPI 3.1 document (src/generated/openapi.json) with the
 * service's public URL as its server. Part of your project: edit freely.
 */
import type { DiscoveryData, JsonObject } from "./data.js";

/** The OpenAPI document for the service at `base`; the shared document itself is left untouched. */
export function buildOpenApi(data: DiscoveryData, base: string): JsonObject {
  const { openapi, info, ...rest } = data.openapi;
  delete rest.servers; // ours replaces any the document had
  return { openapi, info, servers: [{ url: base }], ...rest };
}
