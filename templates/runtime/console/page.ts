/**
 * The console page: one self-contained HTML document (no request leaves the agent: no CDN, font or image)
 * that says what the agent is and does with JavaScript off (name, description, version, each capability
 * with its price, input fields and output fields, the networks it is paid on with their payee, and the
 * endpoints this instance serves), and lets a person run a job with it on: dev mode runs it, production
 * pays it with a browser wallet first (facts.ts: what it states of the configuration). Its script and style are inline, allowed by their
 * hashes in a strict Content-Security-Policy (no other script, no inline handler, nothing fetched from
 * another origin). Part of your project: edit freely.
 */
import { createHash } from "node:crypto";
import { LLMS_TXT_PATH } from "../http/paths.js";
import type { AgentDefinition, FieldDescriptor } from "../types.js";
import type { ConsoleFacts } from "./facts.js";
import { escapeHtml, renderFields } from "./fields.js";
import { GUARD_SCRIPT } from "./guard-script.js";
import { PAGE_SCRIPT } from "./page-script.js";
import { PAGE_STYLE } from "./style.js";

/** The page's whole script: the payer guard, then the page's own code, in one strict-mode scope. */
export const CONSOLE_SCRIPT = `"use strict";\n(function () {\n${GUARD_SCRIPT}\n${PAGE_SCRIPT}\n})();\n`;

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The Content-Security-Policy the page is served with: its own script and style only, requests to itself. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  `script-src ${hash(CONSOLE_SCRIPT)}`,
  `style-src ${hash(PAGE_STYLE)}`,
  "connect-src 'self'",
  "img-src 'self' data:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export interface ConsoleOptions extends Partial<ConsoleFacts> {
  devMode: boolean;
  serviceVersion: string;
}

/** How a visitor pays without this page's wallet: any x402 client, told how by /llms.txt. */
const ELSEWHERE = `any x402 client (such as the official <code>@x402/fetch</code> or <code>x402</code> for Python) pays it too: how is in <a href="${LLMS_TXT_PATH}">${LLMS_TXT_PATH}</a>`;

/** `npm run call -- <capability> --input field=…` for a capability's required fields (how to pay from code). */
export function callCommand(capability: string, input: Record<string, FieldDescriptor>): string {
  const required = Object.entries(input).filter(([, f]) => f.required === true);
  const args = required.map(([name, f]) => {
    const example = Array.isArray(f.examples) ? f.examples[0] : f.default;
    const value =
      f.type === "object" || f.type === "array"
        ? "'<JSON>'"
        : example !== undefined
          ? String(example)
          : "…";
    return ` --input ${name}=${value}`;
  });
  return `npm run call -- ${capability}${args.join("")}`;
}

function outputList(output: Record<string, FieldDescriptor>): string {
  const items = Object.entries(output)
    .map(
      ([name, f]) =>
        `<li><code>${escapeHtml(name)}</code> (${escapeHtml(f.type)})${f.description ? ` — ${escapeHtml(f.description)}` : ""}</li>`,
    )
    .join("");
  return items ? `<h3>Output</h3><ul class="outputs">${items}</ul>` : "";
}

function capabilitySection(agent: AgentDefinition, name: string, options: ConsoleOptions): string {
  const capability = agent.capabilities[name]!;
  const d = capability.declaration;
  const n = escapeHtml(name);
  const price = escapeHtml(d.pricing.amount);
  const call = escapeHtml(callCommand(name, d.input_schema));
  const action = options.devMode ? "Run" : `Pay ${price} USDC and run`;
  const noWallet = options.devMode
    ? ""
    : `<div class="note" id="nowallet-${n}" tabindex="-1" hidden><p>No browser wallet was found. Paying from this page needs one (an EIP-1193 wallet such as MetaMask or Coinbase Wallet) holding USDC on the network the agent asks for.</p><p>Without one, ${ELSEWHERE}.</p></div>`;
  // Dev mode's visitor is the developer, in the project; anyone else has no project: an x402 client.
  const fromCode = options.devMode
    ? `From code, in the agent's project: <code>${call}</code>`
    : `From code: ${ELSEWHERE}.`;
  return `<section class="capability" id="cap-${n}" aria-labelledby="h-${n}">
<h2 id="h-${n}">${n}</h2>
${d.description ? `<p>${escapeHtml(d.description)}</p>` : ""}
<p class="price">Price: ${price} ${escapeHtml(d.pricing.currency)} per job${options.devMode ? " (dev mode: not charged)" : ""}</p>
<form class="capability" data-capability="${n}" novalidate aria-labelledby="h-${n}">
<h3>Input</h3>
${renderFields(name, d.input_schema)}
<p class="form-error" role="alert" hidden></p>
<button type="submit" class="needs-js" hidden>${action}</button>
<noscript><p>Running a job from this page needs JavaScript. ${fromCode}</p></noscript>
</form>
${noWallet}
${outputList(d.output_schema)}
<div class="result" id="result-${n}" role="status" aria-live="polite" hidden></div>
</section>`;
}

/** The data the page script reads (the schemas, prices and payment settings it checks against), as a JSON data block. */
function dataBlock(agent: AgentDefinition, options: ConsoleOptions): string {
  const data = {
    name: agent.name,
    devMode: options.devMode,
    serviceVersion: options.serviceVersion,
    deadlineSeconds: options.deadlineSeconds ?? 120,
    localNetworks: (options.networks ?? []).filter((n) => n.local).map((n) => n.caip2),
    // What the page pays, whatever a 402 asks: these networks, their token and payee (offer-script.ts).
    networks: (options.networks ?? []).map(({ caip2, label, payTo, chainId, asset }) => ({
      caip2,
      label,
      payTo,
      chainId,
      asset,
    })),
    capabilities: Object.fromEntries(
      Object.entries(agent.capabilities).map(([name, c]) => [
        name,
        {
          price: c.declaration.pricing.amount,
          priceAtomic: c.priceAtomic,
          input_schema: c.declaration.input_schema,
        },
      ]),
    ),
  };
  // "<" escaped: the block cannot end the script element or open a comment, whatever the schemas say.
  return JSON.stringify(data).replace(/</g, "\\u003c");
}

/** Where jobs are paid: each offered network, its payee, and whether its chain is local (dev:paid). */
function paidWhere(networks: ConsoleFacts["networks"]): string {
  if (networks.length === 0) return "";
  const items = networks.map(
    (n) =>
      `<li>${escapeHtml(n.label)}, paid to <code>${escapeHtml(n.payTo)}</code>${n.local ? " (a local chain on the agent's machine, such as <code>dev:paid</code>'s: no real money, and no public explorer has seen it)" : ""}</li>`,
  );
  return `<div class="networks"><p>Paid on${networks.length > 1 ? ", in the agent's order of preference" : ""}:</p><ul>${items.join("")}</ul></div>`;
}

/** The footer's endpoints: GET ones as links, the others with their method; the bare minimum when unknown. */
function endpointList(endpoints: ConsoleFacts["endpoints"] | undefined): string {
  const known = endpoints?.length
    ? endpoints
    : [
        { path: "/about", methods: "GET" },
        { path: "/health", methods: "GET" },
        { path: "/execute", methods: "POST" },
      ];
  return known
    .map(({ path, methods }) => {
      const p = escapeHtml(path);
      // A path with a parameter (/jobs/:id) is a pattern, not a page: shown, not linked.
      return /\bGET\b/.test(methods) && !path.includes(":")
        ? `<a href="${p}">${p}</a>`
        : `${escapeHtml(methods.split(",")[0]!)} <code>${p}</code>`;
    })
    .join(", ");
}

/** The whole page for `agent`. */
export function renderConsolePage(agent: AgentDefinition, options: ConsoleOptions): string {
  const name = escapeHtml(agent.name);
  const names = Object.keys(agent.capabilities);
  const mode = options.devMode
    ? `<p class="note">Dev mode: jobs run free and nothing is paid. In production each job is paid in USDC.</p>`
    : `<p>Each job is paid in USDC with a browser wallet, only after you approve the exact amount it shows.</p>`;
  const paid = options.devMode ? "" : paidWhere(options.networks ?? []);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${name} ${escapeHtml(agent.version)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
<h1>${name}</h1>
${agent.description ? `<p>${escapeHtml(agent.description)}</p>` : ""}
<p class="meta">Version ${escapeHtml(agent.version)} · ${names.length} ${names.length === 1 ? "capability" : "capabilities"} · service protocol ${escapeHtml(options.serviceVersion)}</p>
${mode}
${paid}
</header>
<main>
<nav aria-label="Capabilities"><ul>${names.map((c) => `<li><a href="#cap-${escapeHtml(c)}">${escapeHtml(c)}</a></li>`).join("")}</ul></nav>
${names.map((c) => capabilitySection(agent, c, options)).join("\n")}
</main>
<footer><p class="meta">For programs: ${endpointList(options.endpoints)}.</p></footer>
<script type="application/json" id="console-data">${dataBlock(agent, options)}</script>
<script>${CONSOLE_SCRIPT}</script>
</body>
</html>
`;
}
