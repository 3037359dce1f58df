/**
 * GET /llms.txt (llmstxt.org): what the service does and exactly how to call and pay it, short
 * enough for an LLM's context. Part of your project: edit freely.
 */
import { FEATURES } from "../features.js";
import { SERVICE_VERSION } from "../jobs/request.js";
import type { AgentDefinition, FieldDescriptor } from "../types.js";
import { agentDescription, capabilityDescription } from "./agent-card.js";
import type { DiscoveryData } from "./data.js";
import { EXAMPLE_JOB_ID, exampleTask } from "./examples.js";
import { type PaymentFacts, whereLabel } from "./facts.js";
import { familyNotes as notesOf } from "../payments/families.js";

/** The project's optional features (features.ts; `evm` is always there). */
const OPTIONAL_FEATURES = FEATURES.filter((name) => name !== "evm");

/** Seconds ahead the example's deadline is set. */
const EXAMPLE_DEADLINE_SECONDS = 300;

/** One line: runs of whitespace (newlines included) become one space. */
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

function typeOf(field: FieldDescriptor): string {
  const items = field.items as FieldDescriptor | undefined;
  return field.type === "array" && typeof items?.type === "string"
    ? `array of ${items.type}`
    : field.type;
}

/** "- `text` (string, required): what to echo; one of "a", "b"; default "a"" */
function fieldLine(name: string, field: FieldDescriptor, required: boolean): string {
  const notes = [typeOf(field), required ? "required" : "optional"].join(", ");
  const extra: string[] = [];
  if (Array.isArray(field.enum))
    extra.push(`one of ${field.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (field.default !== undefined) extra.push(`default ${JSON.stringify(field.default)}`);
  const description = [field.description ? oneLine(field.description) : "", ...extra]
    .filter((part) => part !== "")
    .join("; ");
  return `- \`${name}\` (${notes})${description ? `: ${description}` : ""}`;
}

function fieldLines(fields: Record<string, FieldDescriptor>, mode: "input" | "output"): string[] {
  const entries = Object.entries(fields);
  if (entries.length === 0) return ["- (no fields)"];
  // Input fields are optional unless required: true; output fields are present unless required: false.
  return entries.map(([name, field]) =>
    fieldLine(name, field, mode === "input" ? field.required === true : field.required !== false),
  );
}

/** One capability's section: its price, description, fields and example input. */
function capabilityLines(
  agent: AgentDefinition,
  data: DiscoveryData,
  facts: PaymentFacts,
  name: string,
): string[] {
  const lines: string[] = [];
  const capability = agent.capabilities[name]!;
  const price = facts.free
    ? `${capability.declaration.pricing.amount} USDC per job (free in dev mode)`
    : `${capability.declaration.pricing.amount} USDC per job`;
  lines.push("", `### ${name}: ${price}`, "", oneLine(capabilityDescription(agent, name)), "");
  lines.push("Input (`task.input`):", ...fieldLines(capability.declaration.input_schema, "input"));
  lines.push(
    "",
    "Output (`output`):",
    ...fieldLines(capability.declaration.output_schema, "output"),
  );
  const discovered = Object.hasOwn(data.capabilities, name) ? data.capabilities[name] : undefined;
  if (discovered) lines.push("", `Example input: \`${JSON.stringify(discovered.exampleInput)}\``);
  return lines;
}

/** The project's optional features, those that are off here (`off`: their names) said so. */
function featuresText(off: readonly string[]): string {
  const named = OPTIONAL_FEATURES.map((name) => (off.includes(name) ? `${name} (off here)` : name));
  return named.join(", ") || "none";
}

/** The error table and the links to the other documents. */
function errorLines(facts: PaymentFacts, base: string, off: readonly string[]): string[] {
  return [
    "",
    "## Errors",
    "",
    'Failures answer `{"status":"failed","error_type":...,"error":"..."}`:',
    "",
    "| HTTP | error_type | when |",
    "|---|---|---|",
    "| 400 | validation | the request or input is wrong; `error` names the field |",
    "| 400 | capability | unknown capability; `error` lists the available ones |",
    ...(facts.free
      ? []
      : [
          "| 402 | payment | invalid or expired payment; with `Retry-After` (job still running, settlement unconfirmed): resend it identically then, never re-sign |",
          "| 409 | payment | the payment id was used with another payment or request |",
          "| 429 | payment | the payer has too many jobs running; retry after `Retry-After` s |",
        ]),
    "| 408 | deadline | the deadline passed; nothing is charged |",
    "| 500 | internal | the job failed on the server; nothing is charged |",
    "| 503 | internal | the service cannot take jobs now; retry after `Retry-After` s |",
    "",
    "## More",
    "",
    `- [OpenAPI 3.1](${base}/openapi.json)`,
    `- [A2A agent card](${base}/.well-known/agent-card.json)`,
    `- [Prices and field schemas (GET /about)](${base}/about)`,
    "",
    `Made with create-agent; this service's optional features: ${featuresText(off)} (its owner adds one with \`npm run add -- <feature>\`).`,
    "",
  ];
}

/** How to send a job, with a runnable example for the first capability that has one. */
function callLines(endpoint: string, data: DiscoveryData, names: readonly string[]): string[] {
  const first = names.find((name) => Object.hasOwn(data.capabilities, name));
  const task = first
    ? exampleTask(first, data.capabilities[first]!)
    : { capability: names[0] ?? "<capability>", input: {} };
  const body = `{"service_version":"${SERVICE_VERSION}","job_id":"${EXAMPLE_JOB_ID}","task":${JSON.stringify(task)},"deadline":`;
  return [
    "",
    "## Call",
    "",
    `\`POST ${endpoint}\` with \`Content-Type: application/json\` and the job as the body, for example:`,
    "",
    "```sh",
    `curl -X POST ${shellQuoted(endpoint)} -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuoted(body)}$(($(date +%s) + ${EXAMPLE_DEADLINE_SECONDS}))'}'`,
    "```",
    "",
    `- \`service_version\`: "${SERVICE_VERSION}".`,
    "- `job_id`: your own id for the job (1-256 characters), echoed in the result.",
    "- `task`: `capability` (a name above) and `input` (its input fields).",
    "- `deadline`: Unix time in SECONDS by which the job must be done (e.g. now + 300); a job still running then fails with 408.",
    `- Success: 200 \`{"service_version":"${SERVICE_VERSION}","job_id":...,"status":"completed","output":{...},"completed_at":<Unix seconds>}\`.`,
  ];
}

/** `json` inside single quotes for a POSIX shell. */
const shellQuoted = (json: string): string => `'${json.replace(/'/g, `'\\''`)}'`;

/**
 * `sections`: the other transports' (transport.ts), each after the job endpoint's; `off`: the names of
 * the project's transports that are off here.
 */
export function buildLlmsTxt(
  agent: AgentDefinition,
  data: DiscoveryData,
  facts: PaymentFacts,
  base: string,
  sections: readonly (readonly string[])[] = [],
  off: readonly string[] = [],
): string {
  const endpoint = `${base}/execute`;
  const names = Object.keys(agent.capabilities);
  const where = whereLabel(facts);
  const lines: string[] = [
    `# ${oneLine(agent.name)}`,
    "",
    `> ${oneLine(agentDescription(agent))}`,
    "",
    `A pay-per-job agent service: send one JSON job for one of its capabilities to \`POST ${endpoint}\` and get the result as JSON. ` +
      (facts.free
        ? "This instance runs in dev mode: jobs are free and no payment is needed."
        : `Each job is paid in USDC${where} with x402, and charged only when it succeeds.`),
    "",
    "## Capabilities",
  ];

  for (const name of names) lines.push(...capabilityLines(agent, data, facts, name));

  lines.push(...callLines(endpoint, data, names), "", "## Pay", "");
  if (facts.free)
    lines.push("This instance runs in dev mode: jobs are free and no payment is needed.");
  else
    lines.push(
      `1. Send the job without payment: the answer is 402 with a \`PAYMENT-REQUIRED\` header (x402 v2: base64 of JSON whose ${acceptsText(facts)}, \`amount\` in USDC atomic units (6 decimals), \`asset\`, \`payTo\`) and an x402 v1 JSON body.`,
      "2. Sign the `exact` payment, an EIP-3009 TransferWithAuthorization of USDC, with an x402 client (e.g. `wrapFetchWithPayment` from the official `@x402/fetch`), and resend the identical request with the `PAYMENT-SIGNATURE` header (v1: `X-PAYMENT`).",
      ...notesOf((facts.networks ?? []).map((n) => n.caip2)),
      "3. You are charged only when the job succeeds (200, receipt in the `PAYMENT-RESPONSE` header). One signature pays for one job; an identical retry (same signature, capability, input; on any endpoint) gets it again, uncharged. Gone before settlement: not charged; the identical request gets it, charged then.",
      '4. Lost the answer? Put an id (16-128 of `A-Za-z0-9_-`) in your payment\'s `extensions["payment-identifier"].info.id` (x402 `payment-identifier`) and resend the identical request (same payment and id) to get that answer and receipt back until `validBefore`. Same id, other payment or request: 409.',
    );
  for (const section of sections) lines.push("", ...section);
  lines.push(...errorLines(facts, base, off));
  return lines.join("\n");
}

/** What the 402's `accepts` holds: one "exact" offer, or one per network in preference order. */
function acceptsText(facts: PaymentFacts): string {
  const all = facts.networks ?? (facts.network ? [facts.network] : []);
  if (all.length > 1)
    return `\`accepts\` lists one offer per network, scheme "exact", in the seller's order of preference: ${all.map((n) => `"${n.caip2}"`).join(", ")}; pay any one of them, each with its own`;
  return `\`accepts[0]\` has scheme "exact"${all[0] ? `, network "${all[0].caip2}"` : ""}`;
}
