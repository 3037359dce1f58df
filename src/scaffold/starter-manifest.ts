import { applyEdits, modify } from "jsonc-parser";

/** Where a project's agent.json points `$schema`: the copy `generate` keeps in src/generated/. */
export const SCHEMA_REF = "./src/generated/agent.schema.json";

export interface StarterAnswers {
  name: string;
  description: string;
  capability: string;
  price: string;
}

export const STARTER_DEFAULTS = { description: "A pay-per-job agent", capability: "summarize", price: "0.01" } as const;

/** The manifest of a new project that did not start from one. */
export function starterManifest(answers: StarterAnswers): string {
  const summarize = answers.capability === "summarize";
  const manifest = {
    $schema: SCHEMA_REF,
    name: answers.name,
    version: "0.1.0",
    description: answers.description,
    capabilities: {
      [answers.capability]: {
        description: summarize ? "Summarize a text" : `Run ${answers.capability} on a text`,
        pricing: { model: "per_job", amount: answers.price, currency: "USDC" },
        input_schema: {
          text: { type: "string", required: true, minLength: 1, description: "The text to work on" },
          ...(summarize ? { max_words: { type: "integer", minimum: 1, default: 100, description: "Longest summary wanted" } } : {}),
        },
        output_schema: summarize
          ? { summary: { type: "string", description: "The summary" } }
          : { result: { type: "string", description: "The result" } },
      },
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** A user's manifest, unchanged but for a `$schema` pointer added first when it has none (editor completion). */
export function withSchemaRef(text: string, hasSchema: boolean): string {
  if (hasSchema) return text;
  const edits = modify(text, ["$schema"], SCHEMA_REF, {
    formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" },
    getInsertionIndex: () => 0,
  });
  return applyEdits(text, edits);
}

/** An npm package name derived from a folder name: "My Agent!" -> "my-agent". */
export function packageNameFromDir(dir: string): string {
  const name = dir
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|[._-]+$/g, "");
  return name || "my-agent";
}
