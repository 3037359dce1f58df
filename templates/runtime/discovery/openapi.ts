/**
 * GET /openapi.json: the generated OpenAPI 3.1 document (src/generated/openapi.json) with the
 * service's public URL as its server. Part of your project: edit freely.
 */
import type { DiscoveryData, JsonObject } from "./data.js";

/** How the serving instance differs from the generated document. */
export interface OpenApiMode {
  /** Dev mode: jobs are free, so POST /execute needs no payment header (no security). */
  free?: boolean;
  /**
   * The paths this instance serves (core routes and its transports'): the generated document's
   * other paths go, e.g. POST /mcp with MCP=off or without MCP (default: every path stays).
   */
  served?: ReadonlySet<string>;
  /** Component schemas only the paths that went use (a transport's that is off): they go too. */
  unusedSchemas?: readonly string[];
  /** The offered networks in the seller's order; with several, x-x402 lists them. */
  networks?: readonly { caip2: string; asset: string; payTo: string }[];
}

/** The OpenAPI document for the service at `base`; the shared document itself is left untouched. */
export function buildOpenApi(
  data: DiscoveryData,
  base: string,
  mode: OpenApiMode = {},
): JsonObject {
  const { openapi, info, ...rest } = data.openapi;
  delete rest.servers; // ours replaces any the document had
  // Several networks: x-x402 lists them (configuration, not generation), in the seller's order.
  const x402 = rest["x-x402"];
  const networks = mode.networks;
  if (networks && networks.length > 1)
    rest["x-x402"] = {
      ...(typeof x402 === "object" && x402 !== null ? x402 : {}),
      networks: networks.map((n) => ({ network: n.caip2, asset: n.asset, payTo: n.payTo })),
    };
  if (mode.served) withoutUnserved(rest, mode.served, mode.unusedSchemas ?? []);
  const doc: JsonObject = { openapi, info, servers: [{ url: base }], ...rest };
  return withoutUnusedSchemes(mode.free ? withoutPayment(doc) : doc);
}

/** Paths not served go, and with them the schemas only they use (`unused`). */
function withoutUnserved(doc: JsonObject, served: ReadonlySet<string>, unused: readonly string[]) {
  const { paths, components } = doc as { paths?: JsonObject; components?: JsonObject };
  // A route's parameters (`/jobs/:id`) are OpenAPI's braces (`/jobs/{id}`).
  const kept = new Set([...served].map((path) => path.replace(/:(\w+)/g, "{$1}")));
  if (paths) doc.paths = Object.fromEntries(Object.entries(paths).filter(([p]) => kept.has(p)));
  const schemas = components?.schemas as JsonObject | undefined;
  if (components && schemas && unused.length > 0)
    doc.components = {
      ...components,
      schemas: Object.fromEntries(Object.entries(schemas).filter(([k]) => !unused.includes(k))),
    };
}

type Operation = JsonObject & { security?: unknown; description?: string };

/**
 * Security schemes no operation uses go (the payment headers' in dev mode, the job token's without
 * GET /jobs/{id}): a document declares only the credentials its server takes.
 */
function withoutUnusedSchemes(doc: JsonObject): JsonObject {
  const components = doc.components as JsonObject | undefined;
  const schemes = components?.securitySchemes as JsonObject | undefined;
  if (!components || !schemes) return doc;
  const used = new Set<string>();
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Operation>>))
    for (const op of Object.values(item))
      if (Array.isArray(op?.security))
        for (const requirement of op.security)
          Object.keys(requirement ?? {}).forEach((k) => used.add(k));
  const kept = Object.entries(schemes).filter(([name]) => used.has(name));
  const { securitySchemes: _, ...others } = components;
  return {
    ...doc,
    components: kept.length > 0 ? { ...others, securitySchemes: Object.fromEntries(kept) } : others,
  };
}

/**
 * Dev mode skips the payment gate, so the document must not require a payment for /execute: its
 * security becomes `[]` (none) and its description says why (its schemes then go: withoutUnusedSchemes).
 * Only the objects on the way to what changes are copied.
 */
function withoutPayment(doc: JsonObject): JsonObject {
  const paths = doc.paths as Record<string, Record<string, Operation>> | undefined;
  const execute = paths?.["/execute"]?.post;
  if (!paths || !execute) return doc;
  const post: Operation = {
    ...execute,
    security: [],
    description: `This server runs in dev mode: jobs are free and payment headers are ignored.\n\n${execute.description ?? ""}`,
  };
  return { ...doc, paths: { ...paths, "/execute": { ...paths["/execute"], post } } };
}
