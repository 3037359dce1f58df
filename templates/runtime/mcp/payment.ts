/**
 * How a tool call is paid (x402 v2 MCP transport): the PaymentPayload comes in the call's
 * `params._meta["x402/payment"]`, and an unpaid call is answered with the PaymentRequired object (the
 * same offer as the capability's HTTP 402, for resource `mcp://tool/<name>`). This is the MCP
 * payment channel of the paid-job pipeline (jobs/channel.ts) and its offers (call.ts writes them);
 * verifying, reserving, running, settling and caching are the pipeline's, as for POST /execute.
 * Part of your project: edit freely.
 */
import type { CapabilityDiscovery, DiscoveryData } from "../discovery/data.js";
import type { PaymentChannel } from "../jobs/channel.js";
import type { PaymentAsk } from "../jobs/outcome.js";
import type { PaymentGate } from "../payments/gate.js";
import { paymentRequiredV2 } from "../payments/x402.js";
import type { Capability } from "../types.js";

export const PAYMENT_META_KEY = "x402/payment";
export const PAYMENT_RESPONSE_META_KEY = "x402/payment-response";
const WHERE = `_meta["${PAYMENT_META_KEY}"]`;

/** The resource a tool call pays for. */
export const toolResource = (name: string): string => `mcp://tool/${name}`;

/**
 * The x402 Bazaar extension for an MCP tool (the shape @x402/extensions declares for
 * `info.input.type: "mcp"`), so catalogues can list the tool: its name, input schema and examples.
 */
export function mcpBazaar(
  capability: Capability,
  discovery: CapabilityDiscovery | undefined,
): Record<string, unknown> {
  let declared = declarations.get(capability);
  if (!declared) declarations.set(capability, (declared = declare(capability, discovery)));
  return declared;
}

/** Per capability, built on its first PaymentRequired. */
const declarations = new WeakMap<Capability, Record<string, unknown>>();

function declare(capability: Capability, discovery: CapabilityDiscovery | undefined) {
  const inputSchema = capability.validateInput.schema as Record<string, unknown>;
  const example =
    discovery && capability.validateInput(structuredClone(discovery.exampleInput))
      ? discovery.exampleInput
      : undefined;
  const output = discovery?.exampleOutput;
  return {
    bazaar: {
      info: {
        input: {
          type: "mcp",
          toolName: capability.name,
          ...(capability.declaration.description && {
            description: capability.declaration.description,
          }),
          transport: "streamable-http",
          inputSchema,
          ...(example && { example }),
        },
        ...(output && { output: { type: "json", example: output } }),
      },
      schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          input: {
            type: "object",
            properties: {
              type: { type: "string", const: "mcp" },
              toolName: { type: "string" },
              ...(capability.declaration.description && { description: { type: "string" } }),
              transport: { type: "string", enum: ["streamable-http"] },
              inputSchema: { type: "object" },
              ...(example && { example: { type: "object" } }),
            },
            required: ["type", "toolName", "inputSchema"],
            additionalProperties: false,
          },
          ...(output && {
            output: {
              type: "object",
              properties: { type: { type: "string" }, example: { type: "object" } },
              required: ["type"],
            },
          }),
        },
        required: ["input"],
      },
    },
  };
}

/** The MCP channel for one tool call whose `_meta` is `meta`. */
export function mcpChannel(meta: Record<string, unknown> | undefined): PaymentChannel {
  return {
    sent: () =>
      meta !== undefined && meta[PAYMENT_META_KEY] !== undefined
        ? { name: WHERE, object: meta[PAYMENT_META_KEY] }
        : undefined,
    required: `payment required: send an x402 v2 PaymentPayload in params.${WHERE}`,
  };
}

/**
 * The PaymentRequired a tool call is answered with (`error`: why). `discovery` is the registry's
 * discovery data, when it has any (the Bazaar extension's examples).
 */
export function mcpPaymentRequired(
  gate: PaymentGate,
  discovery: DiscoveryData | undefined,
  ask: PaymentAsk,
  error: string,
) {
  const { capability, resourceUrl, deadline } = ask;
  const discovered =
    discovery && Object.hasOwn(discovery.capabilities, capability.name)
      ? discovery.capabilities[capability.name]
      : undefined;
  const declared = { extensions: mcpBazaar(capability, discovered), outputSchema: {} };
  return paymentRequiredV2(
    gate.offers(capability, resourceUrl, deadline).map((o) => ({ ...o, discovery: declared })),
    // Networks left out for this deadline say why (a Solana-only service and a far deadline: no offer).
    `${error}${gate.notOffered(deadline)}`,
    {
      resourceUrl,
      description: capability.declaration.description ?? `Run capability "${capability.name}"`,
    },
  );
}
