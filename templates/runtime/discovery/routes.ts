/**
 * The discovery endpoints: GET /.well-known/agent-card.json, /openapi.json and /llms.txt. Free in
 * every mode, cacheable for 5 minutes (strong ETag, If-None-Match -> 304), and 404 in the spec's error
 * shape when the registry has no discovery data (an older project). With PUBLIC_URL every document is the
 * same for everyone, so shared caches may keep it (Cache-Control public). Without it, the URLs inside come
 * from the request's Host header, which any client chooses: only the asker's own cache may keep it
 * (private), keyed by Host (Vary), so a shared cache can never hand an attacker's payment URL to others.
 * The agent card comes in two shapes, by the client's A2A-Version (header, or query parameter): A2A
 * 1.0's (`supportedInterfaces`) for 1.x, A2A 0.3's (`url`, `preferredTransport`) when it is absent
 * (as A2A 1.0 says) or 0.x; each shape has its own ETag, and every card answer says `Vary: A2A-Version`.
 * The documents' builders (agent-card.ts, agent-card-v03.ts, openapi.ts, llms.ts) load with the
 * first document asked for.
 * Part of your project: edit freely.
 */
import { createHash } from "node:crypto";
import type { Express, NextFunction, Request, Response } from "express";
import { ValidationError } from "../errors.js";
import { baseUrlOf } from "../http/base-url.js";
import { refuse } from "../http/transport.js";
import type { ResolvedConfig } from "../config.js";
import type { Transport } from "../transport.js";
import type { AgentDefinition, Logger } from "../types.js";
import type { DiscoveryData } from "./data.js";
import { type PaymentFacts, paymentFacts } from "./facts.js";
import { AGENT_CARD_PATH, LLMS_TXT_PATH, OPENAPI_PATH } from "../http/paths.js";

const MAX_AGE = "max-age=300";
/**
 * Base URLs whose documents are kept. Without PUBLIC_URL the base comes from each request's Host
 * header, which a client chooses freely: the least recently used base is dropped beyond this.
 */
export const MAX_CACHED_BASES = 16;

/** A document as served: its exact bytes, their strong ETag and its media type. */
export interface Served {
  body: Buffer;
  etag: string;
  contentType: string;
}

export function served(text: string, contentType: string): Served {
  const body = Buffer.from(text, "utf8");
  const etag = `"${createHash("sha256").update(body).digest("base64url")}"`;
  return { body, etag, contentType };
}

/** At most `max` entries; the least recently used one goes first. */
export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, build: () => V): V {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key); // re-inserted below: now the most recently used
      this.entries.set(key, hit);
      return hit;
    }
    const value = build();
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }
}

/** Where the documents' URLs come from (one rule for every route that writes one). */
export { baseUrlOf } from "../http/base-url.js";

/** True when If-None-Match lists `etag` (weak comparison, as RFC 9110 asks) or is "*". */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === "*" || tag === etag);
}

/** The request header (and query parameter) naming the A2A version a client speaks. */
export const A2A_VERSION_HEADER = "A2A-Version";

/** `vary`: the request header the document also depends on (the card's A2A-Version). */
function send(req: Request, res: Response, doc: Served, fromHost: boolean, vary?: string): void {
  res.set({ ETag: doc.etag, "Cache-Control": `${fromHost ? "private" : "public"}, ${MAX_AGE}` });
  if (fromHost) res.vary("Host");
  if (vary) res.vary(vary);
  if (matches(req.get("if-none-match"), doc.etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).type(doc.contentType).send(doc.body);
}

/** The A2A version a request names: its A2A-Version header, else the query parameter (A2A 1.0 allows either). */
export function a2aVersionOf(req: Request): string | undefined {
  const header = req.get(A2A_VERSION_HEADER);
  if (header !== undefined) return header;
  const param: unknown = req.query[A2A_VERSION_HEADER];
  return typeof param === "string" ? param : undefined;
}

/** "card": the A2A 1.0 agent card; "card-0.3": the same card in A2A 0.3's shape (agent-card-v03.ts). */
export type DocumentName = "card" | "card-0.3" | "openapi" | "llms";

/** The documents' builders, imported on first use (loadBuilders). */
interface Builders {
  buildAgentCard: typeof import("./agent-card.js").buildAgentCard;
  toAgentCardV03: typeof import("./agent-card-v03.js").toAgentCardV03;
  cardShapeFor: typeof import("./agent-card-v03.js").cardShapeFor;
  buildOpenApi: typeof import("./openapi.js").buildOpenApi;
  buildLlmsTxt: typeof import("./llms.js").buildLlmsTxt;
}

async function loadBuilders(): Promise<Builders> {
  const [card, cardV03, openapi, llms] = await Promise.all([
    import("./agent-card.js"),
    import("./agent-card-v03.js"),
    import("./openapi.js"),
    import("./llms.js"),
  ]);
  return { ...card, ...cardV03, ...openapi, ...llms };
}

/** What this instance serves, as the documents describe it (app.ts makes it from TRANSPORTS). */
export interface ServedSurface {
  /** The transports served besides POST /execute (transport.ts), in order. */
  transports: readonly Transport[];
  /** Every path served: the OpenAPI document keeps only these. */
  paths: ReadonlySet<string>;
  /** OpenAPI schemas of transports that are off. */
  unusedSchemas: readonly string[];
  /** The names of the transports this project has that are off here (MCP=off, ...). */
  off?: readonly string[];
}

/** What a document is built from. */
interface DocumentSources {
  agent: AgentDefinition;
  config: ResolvedConfig;
  surface: ServedSurface | undefined;
  data: DiscoveryData;
  facts: PaymentFacts;
  builders: Builders;
}

const JSON_TYPE = "application/json; charset=utf-8";

/** Builds one document for `base`. */
function buildDocument(name: DocumentName, base: string, from: DocumentSources): Served {
  const { agent, config, surface, data, facts, builders } = from;
  const transports = surface?.transports ?? [];
  switch (name) {
    case "card":
    case "card-0.3": {
      const interfaces = transports.flatMap((t) => t.discovery?.cardInterface?.(base) ?? []);
      const extensions = transports.flatMap((t) => t.discovery?.cardExtension?.(base, facts) ?? []);
      const card = builders.buildAgentCard(agent, data, facts, base, interfaces, extensions);
      return served(
        JSON.stringify(name === "card" ? card : builders.toAgentCardV03(card)),
        JSON_TYPE,
      );
    }
    case "openapi":
      return served(
        JSON.stringify(
          builders.buildOpenApi(data, base, {
            free: facts.free,
            networks: facts.networks,
            ...(surface && { served: surface.paths, unusedSchemas: surface.unusedSchemas }),
          }),
        ),
        JSON_TYPE,
      );
    case "llms": {
      const sections = transports.flatMap((t) => {
        const lines = t.discovery?.llms?.(base, facts, config, agent);
        return lines ? [lines] : [];
      });
      return served(
        builders.buildLlmsTxt(agent, data, facts, base, sections, surface?.off),
        "text/plain; charset=utf-8",
      );
    }
  }
}

/**
 * Builds the documents of one base URL, each once, and keeps them for the last MAX_CACHED_BASES
 * bases. `surface`: what they describe (default: POST /execute alone, every OpenAPI path kept).
 */
export function createDiscovery(
  agent: AgentDefinition,
  config: ResolvedConfig,
  surface?: ServedSurface,
) {
  let data = agent.discovery;
  let loading: Promise<void> | undefined;
  let builders: Builders | undefined;
  const facts = paymentFacts(agent, config);
  const cache = new BoundedCache<Partial<Record<DocumentName, Served>>>(MAX_CACHED_BASES);
  let builds = 0;

  const build = (name: DocumentName, base: string): Served => {
    builds++;
    if (!data || !builders) throw new Error("no discovery data, or loaded() was not awaited");
    return buildDocument(name, base, { agent, config, surface, data, facts, builders });
  };
  const document = (name: DocumentName, base: string): Served => {
    const docs = cache.get(base, () => ({}));
    return (docs[name] ??= build(name, base));
  };

  return {
    /** False for registries generated before discovery existed: every document is a 404. */
    available: data !== undefined || agent.loadDiscovery !== undefined,
    /**
     * Resolves once the data and the builders are there (imported on first call, the data when the
     * registry gives a loader). document() needs it awaited once.
     */
    loaded(): Promise<void> {
      if (builders !== undefined && (data !== undefined || !agent.loadDiscovery))
        return Promise.resolve();
      loading ??= Promise.all([
        data === undefined ? agent.loadDiscovery?.() : undefined,
        loadBuilders(),
      ]).then(
        ([loaded, built]) => {
          if (loaded !== undefined) data = loaded;
          builders = built;
        },
        (err: unknown) => {
          loading = undefined; // the next request tries again
          throw err;
        },
      );
      return loading;
    },
    /** The document for `base`, built on first use. */
    document,
    /** The agent card in the shape `a2aVersion` asks for (cardShapeFor); needs loaded() awaited. */
    card(a2aVersion: string | undefined, base: string): Served {
      if (!builders) throw new Error("loaded() was not awaited");
      const shape = builders.cardShapeFor(a2aVersion);
      return document(shape === "0.3" ? "card-0.3" : "card", base);
    },
    /** How many bases are cached, and how many documents were built so far (for tests and debugging). */
    stats: () => ({ bases: cache.size, builds }),
  };
}

export type Discovery = ReturnType<typeof createDiscovery>;

/** Mounts the three GET routes (HEAD comes with GET); the card also at `cardPaths` (TransportDiscovery). */
export function mountDiscovery(
  app: Express,
  discovery: Discovery,
  config: ResolvedConfig,
  logger: Logger,
  cardPaths: readonly string[] = [],
) {
  const route =
    (name: "card" | "openapi" | "llms") =>
    (req: Request, res: Response, next: NextFunction): void => {
      if (!discovery.available)
        return refuse(
          logger,
          req,
          res,
          new ValidationError(
            `no discovery documents: this service was generated without them; run the project's generate script (create-agent generate) to add ${req.path}`,
            { status: 404 },
          ),
        );
      const base = baseUrlOf(config, req); // a Host that makes no URL: 400 (http/transport.ts)
      discovery.loaded().then(() => {
        // The card's shape follows the client's A2A-Version, so every answer varies by it.
        if (name === "card")
          send(
            req,
            res,
            discovery.card(a2aVersionOf(req), base),
            !config.publicUrl,
            A2A_VERSION_HEADER,
          );
        else send(req, res, discovery.document(name, base), !config.publicUrl);
      }, next);
    };
  app.get([AGENT_CARD_PATH, ...cardPaths], route("card"));
  app.get(OPENAPI_PATH, route("openapi"));
  app.get(LLMS_TXT_PATH, route("llms"));
}
