/**
 * The answer to a first message that asks for no job (plain text to an agent of several
 * capabilities, as a generic A2A client or a conformance probe such as a2a-lint's sends; an empty
 * or JSON-like text): an agent Message, in plain text, saying what this
 * agent does and how to call it (a DataPart {capability, input}; paid: the a2a-x402 extension to
 * activate). No task is made, nothing is run or charged, no payment is asked (so no extension is
 * needed to get it). Part of your project: edit freely.
 */
import { plainTextField } from "../jobs/request.js";
import { quote } from "../ops/text.js";
import type { AgentDefinition } from "../types.js";
import { agentMessage, textPart } from "./events.js";
import type { Message } from "./sdk.js";
import { X402_EXTENSION_URI } from "./x402.js";

/** Most capabilities listed (the agent card lists every one as a skill). */
const MAX_LISTED = 50;

function capabilityLines(agent: AgentDefinition, paid: boolean): string[] {
  const all = Object.values(agent.capabilities);
  const lines = all.slice(0, MAX_LISTED).map((c) => {
    const price = paid ? ` (${c.declaration.pricing.amount} USDC per job)` : "";
    const about = c.declaration.description ? `: ${c.declaration.description.slice(0, 200)}` : "";
    return `- ${quote(c.name, 80)}${price}${about}`;
  });
  if (all.length > lines.length) lines.push(`- ... (${all.length} in all: see the agent card)`);
  return lines;
}

/** How to call this agent, as the text of an agent message. */
export function helpText(agent: AgentDefinition, paid: boolean): string {
  const text = plainTextField(agent);
  const how = [
    `${agent.name} runs one job per A2A task. To ask for one, send a message with a DataPart {"capability": <name>, "input": {...}} (or a text part holding that JSON), the input as the agent card's skill describes it (its examples show one); optional message metadata "deadline" (Unix seconds).`,
    ...(text
      ? [
          `Or send plain text (not starting with "{"): it is taken as ${quote(text.field, 80)} of ${quote(text.capability, 80)}, the other fields their defaults.`,
        ]
      : []),
    paid
      ? `Jobs are paid in USDC with x402, in band (a2a-x402 v0.2): send the header A2A-Extensions: ${X402_EXTENSION_URI}; the task answers input-required with x402.payment.required; sign it and send the payload on the same task (x402.payment.status "payment-submitted", x402.payment.payload). You are charged only when the job succeeds.`
      : "Jobs are free here (dev mode): the task completes with the output as a DataPart artifact.",
    "Capabilities:",
    ...capabilityLines(agent, paid),
    "This message ran nothing and charged nothing.",
  ];
  return how.join("\n");
}

/** The agent message answering a message that names no capability. */
export function helpMessage(
  agent: AgentDefinition,
  paid: boolean,
  context: { id: string; contextId: string },
): Message {
  return { ...agentMessage(context, [textPart(helpText(agent, paid))]), taskId: "" };
}
