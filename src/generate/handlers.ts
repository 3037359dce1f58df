import type { CapabilityModel } from "../manifest/model.js";
import { handlerFunctionName } from "./names.js";
import { checkedSample } from "./sample-values.js";
import { renderTemplate } from "./templates.js";

/** The handler file of a capability: the public contract `src/capabilities/<name>.ts`. */
export function handlerPath(name: string): string {
  return `src/capabilities/${name}.ts`;
}

/**
 * The handler stub: typed from agent.json, returning a placeholder that satisfies the output_schema so a fresh
 * project runs and passes its tests before any logic is written.
 */
export function generateHandlerStub(capability: CapabilityModel): {
  contents: string;
  problems: string[];
} {
  const placeholder = checkedSample(capability.outputSchema, true);
  const contents = renderTemplate("handler.ts.hbs", {
    name: capability.name,
    description: capability.declaration.description ?? "",
    amount: capability.declaration.pricing.amount,
    typeName: capability.typeName,
    functionName: handlerFunctionName(capability.identifier),
    placeholder: JSON.stringify(placeholder.value, null, 2),
  });
  return { contents, problems: placeholder.problems.map((p) => `output placeholder ${p}`) };
}
