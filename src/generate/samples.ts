import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { propertyKey } from "./names.js";
import { checkedSample } from "./sample-values.js";

/**
 * A minimal valid input per capability (from `examples`, `default`, `enum` or the field's type), used by the
 * generated tests and the README's example call. Problems name capabilities whose schema defeats the sampler
 * (for example a `pattern` no simple string matches): give such a field an `examples` value.
 */
export function generateSamples(model: AgentModel): { contents: string; problems: string[] } {
  const problems: string[] = [];
  const entries = model.capabilities.map((c) => {
    const sample = checkedSample(c.inputSchema, true);
    problems.push(...sample.problems.map((p) => `${c.name}: sample input ${p}`));
    return `${propertyKey(c.name)}: ${JSON.stringify(sample.value)}`;
  });
  const contents = [
    GENERATED_HEADER,
    "",
    "/** A minimal valid input for each capability (from examples, defaults, or the field types). */",
    `export const sampleInputs: Record<string, unknown> = { ${entries.join(", ")} };`,
  ].join("\n");
  return { contents, problems };
}
