import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { propertyKey } from "./names.js";
import type { CapabilitySamples } from "./openapi.js";
import { statementText } from "./print/js.js";
import type { SourceFile } from "./source-file.js";

const JSDOC =
  "/** A minimal valid input for each capability (from examples, defaults, or the field types). */";

/**
 * A minimal valid input per capability (from `examples`, `default`, `enum` or the field's type), used by the
 * generated tests and the README's example call. The samples are capabilitySamples()' (openapi.ts), whose
 * problems name capabilities whose schema defeats the sampler (for example a `pattern` no simple string
 * matches): give such a field an `examples` value.
 */
export function generateSamples(
  model: AgentModel,
  samples: Map<string, CapabilitySamples>,
): SourceFile {
  const entries = model.capabilities.map((c): [string, unknown] => [
    c.name,
    samples.get(c.name)?.input ?? {},
  ]);
  return {
    source: () =>
      [
        GENERATED_HEADER,
        "",
        JSDOC,
        `export const sampleInputs: Record<string, unknown> = { ${entries
          .map(([name, value]) => `${propertyKey(name)}: ${JSON.stringify(value)}`)
          .join(", ")} };`,
      ].join("\n"),
    // `export const sampleInputs: Record<string, unknown> =` always fits: only the object can break.
    print: () =>
      `${GENERATED_HEADER}\n\n${JSDOC}\n${statementText(
        "export const sampleInputs: Record<string, unknown> =",
        Object.fromEntries(entries),
      )}\n`,
  };
}
