import type { AgentModel, FieldDescriptor } from "../manifest/model.js";
import { DEFAULT_FEATURES, FEATURES, projectDependencies } from "../features.js";
import { devDependencies, nodeEngines } from "../versions.js";
import { DOC_FACTS } from "./doc-facts.js";
import { type PackageManager, projectCommands } from "./package-manager.js";
import { callInputWords, sampleValue } from "./sample-values.js";
import { templateFolder } from "./templates.js";

/**
 * The generated project's package.json: scripts, and exact versions from the one version table (the core's
 * dependencies and those of its `features`, recorded in createAgent.features, as is the `packageManager` its
 * files are rendered for). `generator` is the vendored
 * create-agent tarball (a devDependency, so `npm run generate` finds the CLI on any machine).
 */
export function generatePackageJson(
  model: AgentModel,
  generator: { path: string; version: string },
  features: readonly string[],
  packageManager: PackageManager = "npm",
): string {
  const pkg = {
    name: model.name,
    version: model.version,
    description: model.description,
    private: true,
    type: "module",
    engines: { node: nodeEngines },
    scripts: {
      dev: "create-agent dev",
      // Production mode paid on a local chain (anvil + Circle's USDC): a real payment, no money, no network.
      "dev:paid": "create-agent dev --paid",
      build: "tsc -p tsconfig.build.json",
      // exec: npm/pnpm/yarn run scripts through sh; exec makes node replace it, so SIGTERM reaches the server.
      start: "exec node dist/server.js",
      // Async jobs only (the `queue` feature, REDIS_URL): workers scale apart from web instances.
      worker: "exec node dist/server.js --worker",
      test: "vitest run",
      typecheck: "tsc -b",
      generate: "create-agent generate",
      "add-capability": "create-agent add-capability",
      "remove-capability": "create-agent remove-capability",
      // `npm run call -- <capability> --input name=value`: calls (and pays) this service on PORT.
      call: "create-agent call",
      client: "create-agent client",
      // `npm run smoke -- <url>`: checks a deployment against this project's configuration (--pay: one paid job).
      smoke: "create-agent smoke",
      // `npm run add -- solana`: adds an optional feature (its runtime folder and packages); remove drops one.
      add: "create-agent add",
      remove: "create-agent remove",
    },
    dependencies: projectDependencies(features),
    // Sorted, as npm keeps them.
    devDependencies: Object.fromEntries(
      Object.entries({
        ...devDependencies,
        "create-agent": `file:${generator.path}`,
      }).sort(([a], [b]) => (a < b ? -1 : 1)),
    ),
    // tsx's esbuild checks its platform binary in an install script: allowed by name, so npm 11,
    // pnpm 10 and bun install without a warning about unreviewed scripts. bullmq's msgpackr-extract
    // (the queue feature) loads its prebuilt binary without its script, which only builds one from
    // source where none fits (msgpackr then runs in plain JS): denied by name, as pnpm and bun do.
    allowScripts: { esbuild: true, "msgpackr-extract": false },
    pnpm: { onlyBuiltDependencies: ["esbuild"] },
    trustedDependencies: ["esbuild"],
    // Which create-agent made (or last upgraded) the project: `create-agent upgrade` merges from it;
    // the optional features it has (`npm run add -- <feature>` / `npm run remove -- <feature>`); and the
    // package manager its files were rendered for (README's commands), so that upgrade and add/remove
    // rebuild the same base after the project switched to another (a yarn.lock appeared).
    createAgent: { version: generator.version, features: [...features], packageManager },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The plain files of templates/project, rendered for this agent (README, entry points, tests, config). */
export function generateProjectFiles(
  model: AgentModel,
  packageManager: PackageManager = "npm",
  features: readonly string[] = DEFAULT_FEATURES,
): Array<{ path: string; contents: string }> {
  const data = readmeData(model, packageManager, features);
  return templateFolder("project").map((t) => ({ path: t.path, contents: t.render(data) }));
}

/** The README's feature table: every optional feature, whether the project has it, how to add or remove it. */
function featureRows(features: readonly string[], packageManager: PackageManager) {
  const pm = projectCommands(packageManager);
  return FEATURES.map((f) => ({
    name: f.name,
    summary: f.summary,
    folder: f.folder,
    included: features.includes(f.name),
    command: features.includes(f.name) ? pm.removeFeature(f.name) : pm.addFeature(f.name),
  }));
}

/**
 * For the README's notes on an absent feature: `lacks.solana` (the project does not have it) and
 * `addFeature.solana` (the command that adds it, in backquotes); camelCase keys (`facilitatorAuth`).
 */
function featureNotes(features: readonly string[], packageManager: PackageManager) {
  const pm = projectCommands(packageManager);
  const lacks: Record<string, boolean> = {};
  const addFeature: Record<string, string> = {};
  for (const f of FEATURES) {
    const key = f.name.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase());
    lacks[key] = !features.includes(f.name);
    addFeature[key] = `\`${pm.addFeature(f.name)}\``;
  }
  return { lacks, addFeature };
}

/** Shell text (inside single quotes) of a job request for the first capability, due in 60 s. */
function sampleJobShell(model: AgentModel): string {
  const first = model.capabilities[0];
  if (!first) return "{}";
  const job = JSON.stringify({
    service_version: "1.0",
    job_id: "job-1",
    task: { capability: first.name, input: sampleValue(first.inputSchema, true) },
  }).replaceAll("'", "'\\''");
  // The deadline is computed by the shell: it ends the quoted JSON, adds $(...), and reopens it.
  return `${job.slice(0, -1)},"deadline":'$(( $(date +%s) + 60 ))'}`;
}

/** Arguments of `call` for the first capability: its name and each required input as --input name=value. */
function callArgs(model: AgentModel): string {
  const first = model.capabilities[0];
  if (!first) return "<capability>";
  return [first.name, ...callInputWords(first.inputSchema)].join(" ");
}

/** The first capability's `task` of a job request, as a JS object literal (valid JSON). */
function sampleTask(model: AgentModel): string {
  const first = model.capabilities[0];
  if (!first) return "{}";
  return JSON.stringify({ capability: first.name, input: sampleValue(first.inputSchema, true) });
}

/** A name for MCP client configurations (a JSON key, a `claude mcp add` argument): the agent's, plain. */
function mcpName(model: AgentModel): string {
  return model.name.replace(/^@[^/]+\//, "").replace(/[^a-z0-9-]+/g, "-") || "agent";
}

/** The first capability as an MCP tools/call (a JS object literal, valid JSON) with its sample input. */
function mcpCall(model: AgentModel): string {
  const first = model.capabilities[0];
  if (!first) return '{ name: "<capability>", arguments: {} }';
  const args = JSON.stringify(sampleValue(first.inputSchema, true));
  return `{ name: ${JSON.stringify(first.name)}, arguments: ${args} }`;
}

/** The same call as the Python arguments of x402MCPSession.call_tool: `"name", {...}`. */
function mcpCallPython(model: AgentModel): string {
  const first = model.capabilities[0];
  if (!first) return '"<capability>", {}';
  return `${JSON.stringify(first.name)}, ${pythonLiteral(sampleValue(first.inputSchema, true))}`;
}

/** A JSON value as a Python literal (True, False, None; strings as JSON writes them, which Python reads). */
function pythonLiteral(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(", ")}]`;
  if (typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`)
      .join(", ")}}`;
  return JSON.stringify(value);
}

/** The data the project templates are rendered with (the README's capability tables, commands...). */
export function readmeData(
  model: AgentModel,
  packageManager: PackageManager,
  features: readonly string[] = DEFAULT_FEATURES,
) {
  const pm = projectCommands(packageManager);
  return {
    features: featureRows(features, packageManager),
    ...featureNotes(features, packageManager),
    addFeatureUsage: pm.addFeature("<feature>"),
    facts: DOC_FACTS,
    name: model.name,
    // A container image name (compose.yaml): lowercase, no scope's "@", "/" as "-".
    imageName: model.name
      .toLowerCase()
      .replace(/^@/, "")
      .replace(/[^a-z0-9._-]+/g, "-"),
    description: model.description,
    sampleJob: sampleJobShell(model),
    sampleTask: sampleTask(model),
    mcpName: mcpName(model),
    mcpCall: mcpCall(model),
    mcpCallPython: mcpCallPython(model),
    // The official x402 client's per-payment cap in the MCP recipe: the first capability's price.
    mcpPriceCap: `$${model.capabilities[0]?.declaration.pricing.amount ?? "0.01"}`,
    // The same cap in USDC atomic units (the Python SDK's max_amount policy).
    mcpPriceCapAtomic: String(model.capabilities[0]?.priceAtomic ?? "10000"),
    pm: {
      ...pm,
      addCapabilityExample: pm.addCapability(
        "translate --price 0.05 --input text:string! --input target:string! --output translation:string",
      ),
      removeCapabilityExample: pm.removeCapability("translate"),
      addCapabilityUsage: pm.addCapability("<name>"),
      removeCapabilityUsage: pm.removeCapability("<name>"),
      callExample: pm.call(callArgs(model)),
      callUsage: pm.call("<capability> --input name=value"),
      callMcpExample: pm.call(`${callArgs(model)} --mcp`),
      clientUsage: pm.client("<url> -o <file.ts>"),
      smokeUsage: pm.smoke("<url>"),
      smokeExample: pm.smoke("https://agent.example.com"),
      smokePayExample: pm.smoke("https://agent.example.com --pay"),
      smokeComposeExample: pm.smoke("--settings .env.production http://127.0.0.1:8080"),
      clientExample: pm.client("http://localhost:3000 -o agent-client.ts"),
    },
    capabilities: model.capabilities.map((c) => ({
      name: c.name,
      description: c.declaration.description ?? "",
      amount: c.declaration.pricing.amount,
      priceAtomic: c.priceAtomic,
      inputRows: rows(c.declaration.input_schema, "input"),
      outputRows: rows(c.declaration.output_schema, "output"),
    })),
  };
}

/** One table row per field, nested fields as `parent.child`. */
function rows(
  fields: Record<string, FieldDescriptor>,
  mode: "input" | "output",
  prefix = "",
): object[] {
  return Object.entries(fields).flatMap(([name, field]) => {
    const required = mode === "input" ? field.required === true : field.required !== false;
    const row = { name: prefix + name, type: typeLabel(field), required, notes: notes(field) };
    const nested = field.properties ?? field.items?.properties;
    const childPrefix = `${prefix}${name}${field.items ? "[]" : ""}.`;
    return [row, ...(nested ? rows(nested, mode, childPrefix) : [])];
  });
}

function typeLabel(field: FieldDescriptor): string {
  return field.type === "array" && field.items ? `array of ${field.items.type}` : field.type;
}

function notes(field: FieldDescriptor): string {
  const parts: string[] = [];
  if (field.description) parts.push(field.description.replaceAll("|", "\\|").replaceAll("\n", " "));
  if (field.enum)
    parts.push(`one of ${field.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ")}`);
  if (field.default !== undefined) parts.push(`default \`${JSON.stringify(field.default)}\``);
  if (field.format) parts.push(`format ${field.format}`);
  if (field.pattern) parts.push(`pattern \`${field.pattern.replaceAll("|", "\\|")}\``);
  const range = (label: string, min?: number, max?: number) => {
    if (min !== undefined && max !== undefined) parts.push(`${label} ${min}–${max}`);
    else if (min !== undefined) parts.push(`${label} ≥ ${min}`);
    else if (max !== undefined) parts.push(`${label} ≤ ${max}`);
  };
  range("value", field.minimum, field.maximum);
  range("length", field.minLength, field.maxLength);
  range("items", field.minItems, field.maxItems);
  const itemNotes = field.items && !field.items.properties ? notes(field.items) : "";
  if (itemNotes) parts.push(`each item: ${itemNotes}`);
  return parts.join("; ");
}
