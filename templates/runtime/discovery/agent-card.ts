/**
 * GET /.well-known/agent-card.json: an A2A agent card (A2A protocol 1.0, the shape of `AgentCard` in
 * the official @a2a-js/sdk), so agent directories and A2A clients can find this service, its skills
 * (one per capability) and its prices.
 *
 * The card is written as canonical ProtoJSON, the form the SDK's own AgentCard.toJSON() produces:
 * fields at their default value ("" strings, false, empty lists and maps) are left out, and the
 * SDK's AgentCard.fromJSON() fills them back in. So a card read and re-written by the SDK is
 * byte-for-byte this one, and so is its signature, should you ever sign it.
 * Part of your project: edit freely.
 */
import { plainTextField, SERVICE_VERSION } from "../jobs/request.js";
import type { AgentDefinition } from "../types.js";
import type { DiscoveryData } from "./data.js";
import { exampleTask } from "./examples.js";
import type { PaymentFacts } from "./facts.js";

/**
 * The name of our job protocol in `supportedInterfaces[].protocolBinding`. A2A's own bindings are
 * "JSONRPC", "GRPC" and "HTTP+JSON" (A2A messages and tasks), which POST /a2a and /a2a/rest speak
 * (a2a/, when the project has it); POST /execute takes one JSON job, paid with x402, and answers with the result
 * (see llms.txt and openapi.json). The field is an open string, so the card names that protocol
 * honestly instead of calling it an A2A endpoint; A2A clients skip bindings they do not know.
 */
export const JOB_PROTOCOL_BINDING = "x402-job";

const JSON_MODE = "application/json";
const TEXT_MODE = "text/plain";

// The A2A 1.0 types this card uses (fields at their default value may be left out, see above).

export interface AgentInterface {
  url: string;
  protocolBinding: string;
  /** A2A protocol version of the interface; here the version of our job protocol. */
  protocolVersion: string;
  tenant?: string;
}

export interface AgentExtension {
  uri: string;
  description: string;
  /** Left out when false. */
  required?: true;
  params?: Record<string, unknown>;
}

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface AgentCard {
  name: string;
  description: string;
  supportedInterfaces: AgentInterface[];
  version: string;
  documentationUrl?: string;
  capabilities: CardCapabilities;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
}

/** What the agent card says the agent can do, in both A2A shapes (1.0 and 0.3's). */
export interface CardCapabilities {
  streaming?: boolean;
  pushNotifications?: boolean;
  extensions?: AgentExtension[];
}

/** "echo, cheap and slow" */
function listNames(names: string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** The agent's description, else a sentence naming its capabilities. */
export function agentDescription(agent: AgentDefinition): string {
  if (agent.description) return agent.description;
  const names = Object.keys(agent.capabilities);
  return names.length === 0
    ? `${agent.name}: a pay-per-job agent service.`
    : `${agent.name}: a pay-per-job agent service offering ${listNames(names)}.`;
}

/** A capability's description, else one built from its name. */
export function capabilityDescription(agent: AgentDefinition, name: string): string {
  return (
    agent.capabilities[name]?.declaration.description ??
    `Runs the "${name}" capability: a JSON input in, a JSON output back.`
  );
}

/** A2A's own protocol bindings (A2A 1.0, AgentInterface.protocolBinding). */
export const A2A_BINDINGS: ReadonlySet<string> = new Set(["JSONRPC", "GRPC", "HTTP+JSON"]);

/**
 * A2A's interfaces first: A2A 1.0 reads the first entry of supportedInterfaces as the preferred one, so an A2A
 * client that takes it must find an A2A binding there; the job endpoint and other protocols follow.
 */
const a2aFirst = (all: AgentInterface[]): AgentInterface[] => [
  ...all.filter((i) => A2A_BINDINGS.has(i.protocolBinding)),
  ...all.filter((i) => !A2A_BINDINGS.has(i.protocolBinding)),
];

/**
 * The agent card for the service at `base` (its public base URL, no trailing slash); `interfaces`:
 * the other transports' (transport.ts), listed after the job endpoint, A2A's own first (a2aFirst);
 * `extensions`: theirs (the a2a-x402 extension is the A2A transport's, a2a/card.ts).
 */
export function buildAgentCard(
  agent: AgentDefinition,
  data: DiscoveryData,
  facts: PaymentFacts,
  base: string,
  interfaces: readonly AgentInterface[] = [],
  extensions: readonly AgentExtension[] = [],
): AgentCard {
  const endpoint = `${base}/execute`;
  // Over A2A, a single-capability agent also takes its one text field as plain text (a2a/request.ts).
  const text = interfaces.some((i) => A2A_BINDINGS.has(i.protocolBinding))
    ? plainTextField(agent)
    : undefined;
  const skills = Object.keys(agent.capabilities).map((name): AgentSkill => {
    const discovered = Object.hasOwn(data.capabilities, name) ? data.capabilities[name] : undefined;
    const skill: AgentSkill = { id: name, name, description: capabilityDescription(agent, name) };
    if (discovered && discovered.tags.length > 0) skill.tags = [...discovered.tags];
    if (discovered) skill.examples = [JSON.stringify(exampleTask(name, discovered))];
    skill.inputModes = text?.capability === name ? [JSON_MODE, TEXT_MODE] : [JSON_MODE];
    skill.outputModes = [JSON_MODE];
    return skill;
  });
  return {
    name: agent.name,
    description: agentDescription(agent),
    supportedInterfaces: a2aFirst([
      { url: endpoint, protocolBinding: JOB_PROTOCOL_BINDING, protocolVersion: SERVICE_VERSION },
      ...interfaces,
    ]),
    version: agent.version,
    documentationUrl: `${base}/llms.txt`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      ...(extensions.length > 0 && { extensions: [...extensions] }),
    },
    defaultInputModes: [JSON_MODE],
    defaultOutputModes: [JSON_MODE],
    skills,
  };
}
