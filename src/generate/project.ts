import type { AgentModel, FieldDescriptor } from "../manifest/model.js";
import { dependencies, devDependencies, nodeEngines } from "../versions.js";
import { sampleValue } from "./sample-values.js";
import { templateFolder } from "./templates.js";

/**
 * The generated project's package.json: scripts, and exact versions from the one version table. `generator` is
 * the vendored create-agent tarball (a devDependency, so `npm run generate` finds the CLI on any machine).
 */
export function generatePackageJson(model: AgentModel, generator: { path: string }): string {
  const pkg = {
    name: model.name,
    version: model.version,
    description: model.description,
    private: true,
    type: "module",
    engines: { node: nodeEngines },
    scripts: {
      dev: "create-agent dev",
      build: "tsc -p tsconfig.build.json",
      // exec: npm/pnpm/yarn run scripts through sh; exec makes node replace it, so SIGTERM reaches the server.
      start: "exec node dist/server.js",
      test: "vitest run",
      typecheck: "tsc --noEmit",
      generate: "create-agent generate",
    },
    dependencies,
    // Sorted, as npm keeps them.
    devDependencies: Object.fromEntries(
      Object.entries({ ...devDependencies, "create-agent": `file:${generator.path}` }).sort(
        ([a], [b]) => (a < b ? -1 : 1),
      ),
    ),
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The plain files of templates/project, rendered for this agent (README, entry points, tests, config). */
export function generateProjectFiles(model: AgentModel): Array<{ path: string; contents: string }> {
  const data = readmeData(model);
  return templateFolder("project").map((t) => ({ path: t.path, contents: t.render(data) }));
}

function readmeData(model: AgentModel) {
  const first = model.capabilities[0];
  const sampleJob = first && {
    service_version: "1.0",
    job_id: "job-1",
    task: { capability: first.name, input: sampleValue(first.inputSchema, true) },
    deadline: 4102444800,
  };
  return {
    name: model.name,
    description: model.description,
    sampleJob: JSON.stringify(sampleJob ?? {}).replaceAll("'", "'\\''"),
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
