import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";

/**
 * Ajv validators per capability, compiled once when the server starts. Input validators coerce types and
 * apply defaults ("5" becomes 5 for an integer field), as the spec asks; output validators change nothing.
 */
export function generateValidators(model: AgentModel): string {
  const typeNames = model.capabilities.flatMap((c) => [
    `${c.typeName}Input`,
    `${c.typeName}Output`,
  ]);
  const lines = [
    GENERATED_HEADER,
    `import { inputAjv, outputAjv } from "../runtime/ajv.js";`,
    typeNames.length ? `import type { ${typeNames.join(", ")} } from "./types.js";` : "",
    "",
  ];
  for (const c of model.capabilities) {
    lines.push(
      `// ${c.name}`,
      `export const ${c.identifier}InputSchema = ${JSON.stringify(c.inputSchema)};`,
      `export const ${c.identifier}OutputSchema = ${JSON.stringify(c.outputSchema)};`,
      `export const validate${c.typeName}Input = inputAjv.compile<${c.typeName}Input>(${c.identifier}InputSchema);`,
      `export const validate${c.typeName}Output = outputAjv.compile<${c.typeName}Output>(${c.identifier}OutputSchema);`,
      "",
    );
  }
  return lines.join("\n");
}
