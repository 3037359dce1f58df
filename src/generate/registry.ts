import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { propertyKey } from "./names.js";

/**
 * The capability registry the server runs: each capability's declaration (what GET /about shows), price in
 * USDC atomic units, validators and handler, plus the discovery data (discovery.ts: the OpenAPI document and
 * examples). Typing each entry as Capability<XInput, XOutput> makes `npm run typecheck` fail when a handler no
 * longer matches agent.json.
 */
export function generateRegistry(model: AgentModel): string {
  const lines = [
    GENERATED_HEADER,
    `import type { AgentDefinition, Capability } from "../runtime/types.js";`,
    `import { discovery } from "./discovery.js";`,
  ];
  if (model.capabilities.length) {
    const types = model.capabilities.flatMap((c) => [`${c.typeName}Input`, `${c.typeName}Output`]);
    const validators = model.capabilities.flatMap((c) => [
      `validate${c.typeName}Input`,
      `validate${c.typeName}Output`,
    ]);
    lines.push(`import type { ${types.join(", ")} } from "./types.js";`);
    lines.push(`import { ${validators.join(", ")} } from "./validators.js";`);
  }
  for (const c of model.capabilities) {
    lines.push(`import ${c.identifier}Handler from "../capabilities/${c.name}.js";`);
  }
  lines.push("");
  for (const c of model.capabilities) {
    lines.push(
      `const ${c.identifier}Capability: Capability<${c.typeName}Input, ${c.typeName}Output> = {`,
      `  name: ${JSON.stringify(c.name)},`,
      `  declaration: ${JSON.stringify(c.declaration)},`,
      `  priceAtomic: ${JSON.stringify(c.priceAtomic)},`,
      `  validateInput: validate${c.typeName}Input,`,
      `  validateOutput: validate${c.typeName}Output,`,
      `  handler: ${c.identifier}Handler,`,
      `};`,
      "",
    );
  }
  const entries = model.capabilities.map(
    (c) => `${propertyKey(c.name)}: ${c.identifier}Capability`,
  );
  lines.push(
    `export const agent: AgentDefinition = {`,
    `  name: ${JSON.stringify(model.name)},`,
    `  version: ${JSON.stringify(model.version)},`,
    `  description: ${JSON.stringify(model.description)},`,
    `  capabilities: { ${entries.join(", ")} },`,
    `  discovery,`,
    `};`,
  );
  return lines.join("\n");
}
