/** Validated manifest -> the normalized model every generator reads. */
import { toAtomicAmount } from "./amount.js";
import { toJsonSchema } from "./json-schema.js";
import type { AgentManifest, AgentModel, CapabilityModel } from "./model.js";
import { toIdentifier, toTypeName } from "./names.js";

/** Assumes `manifest` passed validation (parseManifest guarantees it); throws on an invalid amount otherwise. */
export function buildModel(manifest: AgentManifest): AgentModel {
  const capabilities: CapabilityModel[] = Object.entries(manifest.capabilities).map(
    ([name, entry]) => {
      const { tags, ...declaration } = entry;
      return {
        name,
        typeName: toTypeName(name),
        identifier: toIdentifier(name),
        declaration,
        tags: tags ?? nameWords(name),
        priceAtomic: toAtomicAmount(declaration.pricing.amount),
        inputSchema: toJsonSchema(declaration.input_schema, "input"),
        outputSchema: toJsonSchema(declaration.output_schema, "output"),
      };
    },
  );
  return {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description ?? "",
    capabilities,
    manifest,
  };
}

/** "extract-entities" / "extract_entities" / "extractEntities" -> ["extract", "entities"]. */
function nameWords(name: string): string[] {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w !== "");
  return [...new Set(words)];
}
