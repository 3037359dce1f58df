/**
 * What the discovery documents say of A2A (transport.ts lists it): the agent card's a2a-x402
 * extension (v0.2; `required` when jobs are paid, so an A2A client knows to activate it; in dev mode
 * declared but not required) and /llms.txt's A2A section. Part of your project: edit freely.
 */
import type { AgentExtension } from "../discovery/agent-card.js";
import type { PaymentFacts, Price } from "../discovery/facts.js";
import { whereLabel } from "../discovery/labels.js";
import { A2A_PATH, A2A_REST_PATH } from "../http/paths.js";
import { X402_EXTENSION_URI } from "./x402.js";

/** The x402 payment facts, as the a2a-x402 extension's params. Unknown facts are left out. */
function x402Params(facts: PaymentFacts, endpoint: string): Record<string, unknown> {
  const params: Record<string, unknown> = { x402Version: 2, scheme: "exact" };
  if (facts.network) {
    params.network = facts.network.caip2;
    params.networkV1 = facts.network.v1Name;
  }
  if (facts.asset) params.asset = facts.asset.address;
  if (facts.payTo) params.payTo = facts.payTo;
  // Several networks: every one, in the seller's order (network, asset and payTo above are the first's).
  if (facts.networks && facts.networks.length > 1)
    params.networks = facts.networks.map((n) => ({
      network: n.caip2,
      ...(n.v1Name !== n.caip2 && { networkV1: n.v1Name }),
      asset: n.asset,
      payTo: n.payTo,
    }));
  params.currency = "USDC";
  params.endpoint = endpoint;
  params.prices = facts.prices satisfies Record<string, Price>;
  return params;
}

/** The a2a-x402 extension for the A2A endpoint `endpoint`. */
export function x402Extension(facts: PaymentFacts, endpoint: string): AgentExtension {
  const params = x402Params(facts, endpoint);
  if (facts.free)
    return {
      uri: X402_EXTENSION_URI,
      description:
        "Jobs are paid per job in USDC with x402 (a2a-x402), but this instance runs in dev mode: jobs are free and no payment is needed.",
      params,
    };
  return {
    uri: X402_EXTENSION_URI,
    description: `Every job is paid in USDC${whereLabel(facts)} with x402 in band (a2a-x402 v0.2, scheme "exact"): activate this extension (A2A-Extensions header), send a DataPart {capability, input}; the task asks for payment (input-required, x402.payment.required); send the signed payload on the same task, and you are charged only when the job succeeds.`,
    required: true,
    params,
  };
}

/** /llms.txt's A2A line (short: /llms.txt is an LLM's context, not a manual; the card says more). */
export function a2aLines(
  base: string,
  facts: PaymentFacts,
  queued = false,
  text?: { capability: string; field: string },
): string[] {
  // A paid task takes one payment, then is final: another payment on it is refused (claim.ts).
  const pay = facts.free ? "free (dev mode)" : "a2a-x402 v0.2, a task paid once";
  // With the job queue, a long job's paying turn may return at once (queued.ts).
  const long = queued && !facts.free ? "; long job: return_immediately + GetTask" : "";
  // An agent of one capability with one required text field takes plain text as it (request.ts).
  const plain = text ? `, or plain text as \`${text.field}\`` : "";
  return [
    `A2A: JSON-RPC \`${base}${A2A_PATH}\`, HTTP+JSON \`${A2A_REST_PATH}\`; DataPart \`{capability, input}\` (or a text part holding that JSON${plain}); ${pay}${long}.`,
  ];
}
