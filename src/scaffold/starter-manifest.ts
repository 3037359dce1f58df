import { applyEdits, modify } from "jsonc-parser";
import type { FieldDescriptor } from "../manifest/index.js";

/** Where a project's agent.json points `$schema`: the copy `generate` keeps in src/generated/. */
export const SCHEMA_REF = "./src/generated/agent.schema.json";

export interface StarterAnswers {
  name: string;
  description: string;
  capability: string;
  price: string;
  /** What the capability does; default: the starter's for that capability name (see starterCapability). */
  capabilityDescription?: string;
  /** The capability's input fields; default: the starter's. */
  inputs?: Record<string, FieldDescriptor>;
  /** The capability's output fields; default: the starter's. */
  outputs?: Record<string, FieldDescriptor>;
}

export const STARTER_DEFAULTS = {
  description: "A pay-per-job agent",
  capability: "summarize",
  price: "0.01",
} as const;

/** A starter field: its `--input`/`--output` spec (what the questions offer) and the full descriptor written. */
interface StarterField {
  spec: string;
  descriptor: FieldDescriptor;
}

const TEXT: StarterField = {
  spec: "text:string!",
  descriptor: { type: "string", required: true, minLength: 1, description: "The text to work on" },
};
const MAX_WORDS: StarterField = {
  spec: "max_words:integer",
  descriptor: { type: "integer", minimum: 1, default: 100, description: "Longest summary wanted" },
};
const SUMMARY: StarterField = {
  spec: "summary:string",
  descriptor: { type: "string", description: "The summary" },
};
const RESULT: StarterField = {
  spec: "result:string",
  descriptor: { type: "string", description: "The result" },
};

function starterFields(capability: string): {
  description: string;
  inputs: Record<string, StarterField>;
  outputs: Record<string, StarterField>;
} {
  const summarize = capability === "summarize";
  return {
    description: summarize ? "Summarize a text" : `Run ${capability} on a text`,
    inputs: summarize ? { text: TEXT, max_words: MAX_WORDS } : { text: TEXT },
    outputs: summarize ? { summary: SUMMARY } : { result: RESULT },
  };
}

/**
 * What a starter capability of this name gets unless told otherwise: its description, and its input and output
 * fields in the `name:type` spec syntax of `--input`/`--output` (the defaults the questions offer).
 */
export function starterCapability(capability: string): {
  description: string;
  inputs: string[];
  outputs: string[];
} {
  const { description, inputs, outputs } = starterFields(capability);
  return {
    description,
    inputs: Object.values(inputs).map((f) => f.spec),
    outputs: Object.values(outputs).map((f) => f.spec),
  };
}

/**
 * Given fields, completed from the starter's field of the same name and type (its description, minLength,
 * default...) so that accepting the offered defaults writes exactly the starter manifest. The given type and
 * required-ness always win.
 */
function withStarterDetails(
  given: Record<string, FieldDescriptor>,
  starter: Record<string, StarterField>,
): Record<string, FieldDescriptor> {
  const out: Record<string, FieldDescriptor> = {};
  for (const [name, field] of Object.entries(given)) {
    const known = Object.hasOwn(starter, name) ? starter[name]?.descriptor : undefined;
    if (!known || known.type !== field.type || field.type === "array" || field.type === "object") {
      out[name] = field;
      continue;
    }
    const { type: _type, required: _required, ...details } = known;
    // Keys in the starter's order (type, required, then the details), values from the given field first.
    const merged: FieldDescriptor = { type: field.type };
    if (field.required !== undefined) merged.required = field.required;
    out[name] = Object.assign(merged, details, field);
  }
  return out;
}

/** The manifest of a new project that did not start from one. */
export function starterManifest(answers: StarterAnswers): string {
  const starter = starterFields(answers.capability);
  const descriptors = (fields: Record<string, StarterField>) =>
    Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, f.descriptor]));
  const manifest = {
    $schema: SCHEMA_REF,
    name: answers.name,
    version: "0.1.0",
    description: answers.description,
    capabilities: {
      [answers.capability]: {
        description: answers.capabilityDescription ?? starter.description,
        pricing: { model: "per_job", amount: answers.price, currency: "USDC" },
        input_schema: answers.inputs
          ? withStarterDetails(answers.inputs, starter.inputs)
          : descriptors(starter.inputs),
        output_schema: answers.outputs
          ? withStarterDetails(answers.outputs, starter.outputs)
          : descriptors(starter.outputs),
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

/** An npm package name derived from a folder name: "My Agent!" -> "my-agent", "über" -> "uber". */
export function packageNameFromDir(dir: string): string {
  const name = dir
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "") // accents dropped, their letters kept
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|[._-]+$/g, "");
  return name || "my-agent";
}
