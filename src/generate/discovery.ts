import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { buildOpenApi, capabilitySamples } from "./openapi.js";

export interface DiscoveryGeneration {
  /** src/generated/openapi.json: the OpenAPI document, 2-space JSON and a final newline. */
  openapiJson: string;
  /** src/generated/discovery.ts before formatting: the same document plus per-capability data. */
  discoveryTs: string;
  /** Sampler problems, "<capability>: sample input|output <problem>" (the example does not validate). */
  problems: string[];
}

/**
 * The discovery data of the service (templates/runtime/discovery/data.ts DiscoveryData): the OpenAPI
 * document, and per capability its catalogue tags, schema names and a valid example input and output.
 * The example input is the one samples.ts makes; the output example is a complete one.
 */
export function generateDiscovery(model: AgentModel): DiscoveryGeneration {
  const { samples, problems } = capabilitySamples(model);
  const openapi = buildOpenApi(model, samples);
  const capabilities = Object.fromEntries(
    model.capabilities.map((c) => [
      c.name,
      {
        tags: c.tags,
        schemas: { input: `${c.typeName}Input`, output: `${c.typeName}Output` },
        exampleInput: samples.get(c.name)?.input ?? {},
        exampleOutput: samples.get(c.name)?.output ?? {},
      },
    ]),
  );
  const discoveryTs = [
    GENERATED_HEADER,
    `import type { DiscoveryData } from "../runtime/discovery/data.js";`,
    "",
    "/** The OpenAPI document (the same as openapi.json) and each capability's tags, schemas and examples. */",
    `export const discovery: DiscoveryData = ${JSON.stringify({ openapi, capabilities })};`,
  ].join("\n");
  return { openapiJson: `${JSON.stringify(openapi, null, 2)}\n`, discoveryTs, problems };
}
