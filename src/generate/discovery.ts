import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { buildOpenApi, capabilitySamples, type CapabilitySamples } from "./openapi.js";

export interface DiscoveryGeneration {
  /** src/generated/openapi.json: the OpenAPI document, 2-space JSON and a final newline. */
  openapiJson: string;
  /**
   * src/generated/discovery.ts: the same document plus per-capability data. The data is one JSON literal
   * (2-space JSON) under `// prettier-ignore`: prettier leaves it as it is, so the file is already
   * formatted, and writing it costs a JSON.stringify (formatting a large literal with prettier took most of
   * the time of `generate`).
   */
  discoveryTs: string;
  /** Sampler problems, "<capability>: sample input|output <problem>" (the example does not validate). */
  problems: string[];
}

/**
 * The discovery data of the service (templates/runtime/discovery/data.ts DiscoveryData): the OpenAPI
 * document, and per capability its catalogue tags, schema names and a valid example input and output.
 * The example input is the one samples.ts makes; the output example is a complete one.
 */
export function generateDiscovery(
  model: AgentModel,
  computed: { samples: Map<string, CapabilitySamples>; problems: string[] } = capabilitySamples(
    model,
  ),
): DiscoveryGeneration {
  const { samples, problems } = computed;
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
  const openapiText = JSON.stringify(openapi, null, 2);
  // JSON.stringify({ openapi, capabilities }, null, 2), reusing the document's text (one level deeper).
  const data = `{\n  "openapi": ${nest(openapiText)},\n  "capabilities": ${nest(JSON.stringify(capabilities, null, 2))}\n}`;
  const head = [
    GENERATED_HEADER,
    `import type { DiscoveryData } from "../runtime/discovery/data.js";`,
    "",
    "/** The OpenAPI document (the same as openapi.json) and each capability's tags, schemas and examples. */",
    "// prettier-ignore",
  ].join("\n");
  const discoveryTs = `${head}\nexport const discovery: DiscoveryData = ${data};\n`;
  return { openapiJson: `${openapiText}\n`, discoveryTs, problems };
}

/** 2-space JSON text as it is written one level deeper in an enclosing object. */
function nest(json: string): string {
  return json.replaceAll("\n", "\n  ");
}
