/**
 * The agent card in the shape of A2A 0.3, for the clients that ask for it: GET
 * /.well-known/agent-card.json without an `A2A-Version` (A2A 1.0: "Agents MUST interpret empty
 * value as 0.3", and no 0.3 client sends one) or with a 0.x version. It is the card agent-card.ts
 * builds, translated: where 1.0 lists `supportedInterfaces` (each with its own protocol version),
 * 0.3 has one main endpoint (the top-level `url`, its `preferredTransport`), a card-level
 * `protocolVersion` and `additionalInterfaces`; 0.3 also requires every skill's `tags`.
 * routes.ts picks the shape by the request's A2A-Version (cardShapeFor) and serves each with its
 * own ETag and `Vary: A2A-Version`. Part of your project: edit freely.
 */
import {
  A2A_BINDINGS,
  type AgentCard,
  type AgentInterface,
  type CardCapabilities,
} from "./agent-card.js";

/** The A2A version the 0.3 shape declares (the default of 0.3's `protocolVersion`). */
export const A2A_V03_PROTOCOL_VERSION = "0.3.0";

/** A2A's JSON-RPC binding: the one 0.3 clients speak first (0.3's default `preferredTransport`). */
export const JSONRPC_BINDING = "JSONRPC";

/** Which shape of the card a request gets. */
export type CardShape = "1.0" | "0.3";

/**
 * The shape a request's A2A-Version asks for: 0.3 when it is absent or empty (A2A 1.0 says so) or
 * any 0.x version (a 0.2 client reads `url` too); 1.0 otherwise: 1.x, and any later or unreadable
 * version (the newest shape this service has, as the official SDK's card handler does).
 */
export function cardShapeFor(version: string | undefined): CardShape {
  const asked = version?.trim() ?? "";
  return asked === "" || /^0+(\.|$)/.test(asked) ? "0.3" : "1.0";
}

// The A2A 0.3 types this card uses (its JSON schema's names and required fields).

export interface AgentInterfaceV03 {
  url: string;
  transport: string;
}

export interface AgentSkillV03 {
  id: string;
  name: string;
  description: string;
  /** Required in 0.3 (may be empty). */
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface AgentCardV03 {
  protocolVersion: string;
  name: string;
  description: string;
  url: string;
  preferredTransport: string;
  additionalInterfaces: AgentInterfaceV03[];
  version: string;
  documentationUrl?: string;
  capabilities: CardCapabilities;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkillV03[];
  /** The 1.0 card's interfaces, as the official SDK's 0.3 card handler embeds them (1.0 readers). */
  supportedInterfaces: AgentInterface[];
}

/**
 * The 0.3 card's main endpoint. 0.3 requires a `url`, and its `preferredTransport` MUST be served
 * there: the A2A JSON-RPC interface when the card has one (a 0.x one first; the A2A transport
 * answers 0.3's method names, `message/send` etc., at its 1.0 URL too). Without one (a project
 * without the a2a feature, or A2A=off), the first interface there is (POST /execute), named by its
 * own binding ("x402-job"): a 0.3 client then finds no transport it speaks and says so, instead of
 * sending JSON-RPC to an endpoint that takes none. Linters that know only A2A's bindings flag that
 * transport: rightly, as this service has no A2A endpoint then.
 */
function mainInterface(interfaces: readonly AgentInterface[]): AgentInterface {
  const jsonRpc = interfaces.filter((i) => i.protocolBinding === JSONRPC_BINDING);
  const main = jsonRpc.find((i) => cardShapeFor(i.protocolVersion) === "0.3") ?? jsonRpc[0];
  const first = main ?? interfaces[0];
  if (!first) throw new Error("an agent card without interfaces has no 0.3 shape");
  return first;
}

/**
 * Every interface as 0.3 writes it, the main one first (0.3's `additionalInterfaces` SHOULD list
 * the main url and transport too), each url and transport once. When the main one is A2A's, only
 * A2A's own transports: 0.3 readers such as the A2A TCK refuse a card naming a transport they do not
 * know, and a 0.3 client has no use for the others (POST /execute, /mcp: the 1.0 card and llms.txt,
 * the card's documentationUrl, list them).
 */
function interfacesV03(main: AgentInterface, all: readonly AgentInterface[]): AgentInterfaceV03[] {
  const seen = new Set<string>();
  const a2aOnly = A2A_BINDINGS.has(main.protocolBinding);
  const listed = a2aOnly ? all.filter((i) => A2A_BINDINGS.has(i.protocolBinding)) : all;
  return [main, ...listed].flatMap(({ url, protocolBinding: transport }) => {
    const key = JSON.stringify([url, transport]);
    if (seen.has(key)) return [];
    seen.add(key);
    return [{ url, transport }];
  });
}

/**
 * The same card in A2A 0.3's shape. It also carries the 1.0 card's `supportedInterfaces`, as
 * @a2a-js/sdk's 0.3 card handler does (`embedV1Interfaces`): a 1.0 client that fetches the card
 * without an A2A-Version (the A2A TCK does) finds its field, and 0.3 readers ignore it.
 */
export function toAgentCardV03(card: AgentCard): AgentCardV03 {
  const main = mainInterface(card.supportedInterfaces);
  return {
    protocolVersion: A2A_V03_PROTOCOL_VERSION,
    name: card.name,
    description: card.description,
    url: main.url,
    preferredTransport: main.protocolBinding,
    additionalInterfaces: interfacesV03(main, card.supportedInterfaces),
    version: card.version,
    ...(card.documentationUrl !== undefined && { documentationUrl: card.documentationUrl }),
    capabilities: card.capabilities,
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags = [], ...modes }) => ({
      id,
      name,
      description,
      tags,
      ...modes,
    })),
    supportedInterfaces: card.supportedInterfaces,
  };
}
