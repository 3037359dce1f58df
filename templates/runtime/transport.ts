/**
 * A transport: one way into the service, mounted by createApp (app.ts) from the list in
 * features.ts (TRANSPORTS): POST /execute (http/execute.ts, always there), MCP (mcp/), A2A (a2a/),
 * the console page (console/). That one list drives the routes, CORS preflights and 405s (http/cors.ts) and
 * every discovery document (the agent card's interfaces, the OpenAPI paths, /llms.txt), so a new
 * transport is its folder plus one entry there. Part of your project: edit freely.
 */
import type { Express } from "express";
import type { AgentExtension, AgentInterface } from "./discovery/agent-card.js";
import type { PaymentFacts } from "./discovery/facts.js";
import type { JobServices } from "./jobs/services.js";
import type { ResolvedConfig } from "./config.js";
import type { AgentDefinition, Logger } from "./types.js";

/** A path a transport serves, with its methods (HEAD comes free with GET). */
export interface TransportRoute {
  path: string;
  /** E.g. "POST" or "GET, HEAD": a preflight allows these, other methods get 405 with `Allow`. */
  methods: string;
  /** Request headers a preflight allows besides the common ones (e.g. MCP's protocol headers). */
  allowHeaders?: string;
}

/** What the discovery documents say of a transport (each part optional). */
export interface TransportDiscovery {
  /** Its entries in the agent card's supportedInterfaces (one, or several bindings), for the service at `base`. */
  cardInterface?(base: string): AgentInterface | AgentInterface[];
  /** An extension of the agent card's capabilities it adds (e.g. async jobs on POST /execute). */
  cardExtension?(base: string, facts: PaymentFacts): AgentExtension;
  /** Its section of /llms.txt (lines, after the job endpoint's). */
  llms?(
    base: string,
    facts: PaymentFacts,
    config: ResolvedConfig,
    agent: AgentDefinition,
  ): string[];
  /**
   * More paths the agent card is served at (GET, as /.well-known/agent-card.json): under the transport's
   * own URL, where a client given only that URL looks for it (`<url>/.well-known/agent-card.json`).
   */
  cardPaths?: readonly string[];
  /** OpenAPI component schemas only its paths use: dropped with them when it is off. */
  openapiSchemas?: readonly string[];
}

export interface Transport {
  /** Its name (the feature's, e.g. "mcp"). */
  readonly name: string;
  /** The paths it answers (CORS, 405s, the endpoint list of a 404, the OpenAPI paths kept). */
  readonly routes: readonly TransportRoute[];
  /** Whether this instance serves it (default: yes); a transport that is off is in no document. */
  enabled?(config: ResolvedConfig): boolean;
  /** Adds its routes to the app (also when off, if it answers that it is off). */
  mount(app: Express, services: JobServices, logger: Logger): void;
  /**
   * The deadline a job gets when the caller sends none: seconds from now, and the setting that chooses it
   * (start-up warns when no offered network can be paid for it: payments/deadline-fit.ts).
   */
  defaultDeadline?(config: ResolvedConfig): { seconds: number; setting: string };
  discovery?: TransportDiscovery;
}

/** The transports this instance serves (enabled). */
export const servedTransports = (
  transports: readonly Transport[],
  config: ResolvedConfig,
): Transport[] => transports.filter((t) => t.enabled?.(config) ?? true);
