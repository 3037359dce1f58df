/**
 * Dev mode delivers an output that breaks its capability's output schema (production answers 500):
 * /execute returns it unchanged and logs a warning. Over MCP it cannot go out as structuredContent:
 * the official SDK clients check structuredContent against the tool's outputSchema and throw
 * ("Structured content does not match the tool's output schema"), and they require structuredContent
 * on any result that is not isError. So such a result becomes isError with the output as JSON text
 * and a second text block with the warning: clients accept it, and the developer sees both.
 * Part of your project: edit freely.
 */
import { formatAjvErrors } from "../ajv.js";
import type { Capability } from "../types.js";
import type { CallToolResult } from "./sdk.js";

/** The delivered output of a successful tool result (structuredContent, else its JSON text). */
function outputOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = result.content[0]?.text;
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}

/** The result as clients accept it when its output breaks the output schema; else unchanged. */
export function devModeResult(result: CallToolResult, capability: Capability): CallToolResult {
  if (result.isError) return result;
  const output = outputOf(result);
  if (capability.validateOutput(output)) return result;
  const problem = formatAjvErrors(capability.validateOutput.errors, "output");
  const { structuredContent: _, ...rest } = result;
  return {
    ...rest,
    content: [
      { type: "text", text: JSON.stringify(output) },
      {
        type: "text",
        text: `warning (dev mode): this output does not match the tool's output schema (${problem}); it is passed through as text, and in production the call fails with an internal error, uncharged`,
      },
    ],
    isError: true,
  };
}
