import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { importText, statementText } from "./print/js.js";
import type { SourceFile } from "./source-file.js";

/**
 * Ajv validators per capability, compiled once when the server starts. Input validators coerce types and
 * apply defaults ("5" becomes 5 for an integer field), as the spec asks; output validators change nothing.
 */
export function generateValidators(model: AgentModel): SourceFile {
  const typeNames = model.capabilities.flatMap((c) => [
    `${c.typeName}Input`,
    `${c.typeName}Output`,
  ]);
  return {
    source: () => {
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
    },
    print: () => {
      const out = [
        GENERATED_HEADER,
        importText(["inputAjv", "outputAjv"], "../runtime/ajv.js", false),
      ];
      if (typeNames.length) out.push(importText(typeNames, "./types.js", true));
      for (const c of model.capabilities) {
        out.push(
          "",
          `// ${c.name}`,
          statementText(`export const ${c.identifier}InputSchema =`, c.inputSchema),
          statementText(`export const ${c.identifier}OutputSchema =`, c.outputSchema),
          compileText(
            `validate${c.typeName}Input`,
            "inputAjv",
            `${c.typeName}Input`,
            `${c.identifier}InputSchema`,
          ),
          compileText(
            `validate${c.typeName}Output`,
            "outputAjv",
            `${c.typeName}Output`,
            `${c.identifier}OutputSchema`,
          ),
        );
      }
      return `${out.join("\n")}\n`;
    },
  };
}

/**
 * `export const <name> = <ajv>.compile<<type>>(<schema>);` as prettier prints it when it does not fit on
 * one line (assignment.js). With a short argument (at most printWidth / 4 characters) the call is "poorly
 * breakable": it moves after the "=" as a whole, and breaks its parentheses only if it still does not fit.
 * Otherwise the "=" keeps the call when its "(" fits there, and the argument breaks out of the parentheses.
 */
function compileText(name: string, ajv: string, type: string, schema: string): string {
  const head = `export const ${name} =`;
  const call = `${ajv}.compile<${type}>(`;
  const flat = `${head} ${call}${schema});`;
  if (flat.length <= 100) return flat;
  const broken = (indentation: string) => `${call}\n${indentation}  ${schema},\n${indentation})`;
  if (schema.length <= 25 || `${head} ${call}`.length > 100) {
    const next = `  ${call}${schema});`;
    return next.length <= 100 ? `${head}\n${next}` : `${head}\n  ${broken("  ")};`;
  }
  return `${head} ${broken("")};`;
}
