/**
 * MCP as a transport (transport.ts): POST /mcp (route.ts, the SDK loaded on the first call), the
 * agent card's MCP interface and /llms.txt's MCP section. Listed in features.ts (TRANSPORTS) while
 * the project has the `mcp` feature; MCP=off keeps the route (answering 404) out of every
 * document. Part of your project: edit freely.
 */
import { MCP_PATH, MCP_PROTOCOL_VERSION } from "../http/paths.js";
import type { PaymentFacts } from "../discovery/facts.js";
import { fittingDeadline } from "../payments/deadline-fit.js";
import type { Transport } from "../transport.js";
import { mountMcp } from "./route.js";

/** The name of the MCP endpoint's binding in `supportedInterfaces` (every capability as a tool). */
export const MCP_PROTOCOL_BINDING = "MCP";

export const MCP_TRANSPORT: Transport = {
  name: "mcp",
  // MCP clients in a browser send the Streamable HTTP transport's headers.
  routes: [
    {
      path: MCP_PATH,
      methods: "POST",
      allowHeaders: "Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID",
    },
  ],
  enabled: (config) => config.mcp.enabled,
  defaultDeadline: (config) => ({
    seconds: config.mcp.deadlineSeconds,
    setting: "MCP_DEADLINE_SECONDS",
  }),
  mount: mountMcp,
  discovery: {
    cardInterface: (base) => ({
      url: `${base}${MCP_PATH}`,
      protocolBinding: MCP_PROTOCOL_BINDING,
      protocolVersion: MCP_PROTOCOL_VERSION,
    }),
    llms: (base, facts, config) =>
      mcpLines(
        `${base}${MCP_PATH}`,
        facts,
        config.mcp.deadlineSeconds,
        fittingDeadline(config, config.mcp.deadlineSeconds),
      ),
    openapiSchemas: ["McpMessage", "McpAnswer"],
  },
};

/** How an assistant connects over MCP, and pays there. */
function mcpLines(
  endpoint: string,
  facts: PaymentFacts,
  deadlineSeconds: number,
  payableSeconds: number,
): string[] {
  return [
    "## MCP",
    "",
    `Each capability is an MCP tool (same name, input and price) at \`${endpoint}\` (Streamable HTTP, stateless). Its result: the job's \`output\` as \`structuredContent\` and JSON text; a failure: \`isError: true\` with the error body below.`,
    "",
    `- \`params._meta.deadline\` (optional): Unix time in SECONDS by which the job must be done; default now + ${deadlineSeconds} s. Longer: send it on the unpaid call too, and a progressToken.`,
    ...(!facts.free && payableSeconds < deadlineSeconds
      ? [
          `- Every network this service is paid on pays only for jobs due within ${payableSeconds} s: send \`params._meta.deadline\` at most ${payableSeconds} s away, on the unpaid call too (with the default, the PaymentRequired offers nothing and its \`error\` says why).`,
        ]
      : []),
    "- `params._meta.job_id` (optional): default derived from tool, arguments and payment (an identical retry is the same job, never charged twice).",
    "- `params._meta.progressToken` (optional): `notifications/progress` while the job runs (SSE), for clients that reset their timeout on progress.",
    `- Assistants (Claude, Cursor, VS Code) connect here${facts.free ? "." : " but cannot pay: their paid calls stop at the PaymentRequired."}`,
    ...(facts.free
      ? ["- This instance runs in dev mode: tool calls are free."]
      : [
          '- Pay (x402 v2 MCP transport): an unpaid call returns `isError: true` with the x402 PaymentRequired (resource `mcp://tool/<name>`) as `structuredContent`. Sign it with an x402 client (`x402Client.createPaymentPayload` of `@x402/fetch`; Python: `x402MCPSession` of `x402`, over Streamable HTTP) and call again with the PaymentPayload in `params._meta["x402/payment"]`; the settlement is in the result\'s `_meta["x402/payment-response"]`. One payment pays for one job, on /mcp or /execute. Given up before settlement: not charged; the identical call gets its result, charged then. Sent again with a `payment-identifier` id: the same result and settlement.',
        ]),
  ];
}
