import type { AgentModel } from "../manifest/model.js";
import { GENERATED_HEADER } from "./header.js";
import { buildOpenApi, capabilitySamples, type CapabilitySamples } from "./openapi.js";

export interface DiscoveryGeneration {
  /** src/generated/openapi.json: the OpenAPI document, 2-space JSON and a final newline. */
  openapiJson: string;
  /**
   * src/generated/discovery.ts: the same document plus per-capability data, as 2-space JSON text in a
   * template literal that JSON.parse reads at start-up (V8 parses JSON text several times faster than
   * the same object literal: a service with 100 capabilities starts as fast as one with a single one).
   * The statement is under `// prettier-ignore`, so the file is already formatted, and writing it costs
   * a JSON.stringify. The JSON stays line by line, so a regeneration's diff shows what changed.
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
    "/**",
    " * The OpenAPI document (the same as openapi.json) and each capability's tags, schemas and examples,",
    " * parsed from JSON text at start-up (faster than an object literal of the same data).",
    " */",
    "// prettier-ignore",
  ].join("\n");
  const discoveryTs = `${head}\nexport const discovery: DiscoveryData = JSON.parse(\`${templateText(data)}\`);\n`;
  return { openapiJson: `${openapiText}\n`, discoveryTs, problems };
}

/** Text as a template literal's contents: backslashes, backticks and `${` escaped, so it reads back unchanged. */
function templateText(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll("`", "\\`").replaceAll("${", "\\${");
}

/** 2-space JSON text as it is written one level deeper in an enclosing object. */
function nest(json: string): string {
  return json.replaceAll("\n", "\n  ");
}
