/** Public API of the manifest module: agent.json -> validated AgentModel, plus the helpers generators share. */
export { ManifestError, formatProblem, type ManifestProblem } from "./errors.js";
export { parseManifest, loadManifest } from "./load.js";
export { toJsonSchema, type SchemaMode } from "./json-schema.js";
export { toTypeName, toIdentifier } from "./names.js";
export { toAtomicAmount } from "./amount.js";
export { buildModel } from "./model-build.js";
export { manifestJsonSchemaPath } from "./schema-path.js";
export { STRING_FORMATS } from "./keywords.js";
export * from "./model.js";
export { capabilityNameProblem, fieldNameProblem } from "./names.js";
export { amountProblem } from "./amount.js";
export { addCapabilityToText, removeCapabilityFromText } from "./edit.js";
export { didYouMean } from "../suggest.js";
export { TYPE_ALIASES } from "./keywords.js";
