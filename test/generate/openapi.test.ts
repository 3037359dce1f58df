// The OpenAPI document and the discovery data generated from agent.json (src/generate/openapi.ts and
// discovery.ts): valid OpenAPI 3.1, examples that validate, every error of the spec documented, and in
// agreement with what the embedded runtime (templates/runtime) really sends.
import { readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { generateDiscovery } from "../../src/generate/discovery.js";
import { generateCode } from "../../src/generate/index.js";
import * as generator from "../../src/generate/openapi.js";
import * as mcpDoc from "../../src/generate/openapi-mcp.js";
import { aboutBody, buildOpenApi, capabilitySamples } from "../../src/generate/openapi.js";
import { buildModel, parseManifest, type AgentModel } from "../../src/manifest/index.js";
import type { DiscoveryData } from "../../templates/runtime/discovery/data.js";
import { componentSchema } from "../../templates/runtime/discovery/data.js";
import { buildOpenApi as serveOpenApi } from "../../templates/runtime/discovery/openapi.js";
import { MCP_TRANSPORT } from "../../templates/runtime/mcp/transport.js";
import * as paths from "../../templates/runtime/http/paths.js";
import * as runtimeErrors from "../../templates/runtime/errors.js";
import * as request from "../../templates/runtime/jobs/request.js";
import * as mcpMessages from "../../templates/runtime/mcp/messages.js";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import {
  paymentRequiredResponse,
  paymentResponseHeaders,
  type PaymentOffer,
} from "../../templates/runtime/payments/x402.js";
import { cli, scaffold } from "../cli/helpers.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const FIXTURES = join(import.meta.dirname, "../../fixtures");

type Json = Record<string, any>;

const MANIFESTS = [
  ...readdirSync(join(FIXTURES, "manifests/valid"))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => `manifests/valid/${f}`),
  ...readdirSync(join(FIXTURES, "golden"))
    .sort()
    .map((d) => `golden/${d}/agent.json`),
];

async function loadModel(path: string): Promise<AgentModel> {
  return parseManifest(await readFile(join(FIXTURES, path), "utf8"), "agent.json");
}

/** Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect) that resolves `#/...` refs inside `doc`. */
function validatorFor(doc: Json) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema({ ...doc, $id: "openapi.json" });
  return (pointer: string) => {
    const validateFn = ajv.getSchema(`openapi.json#${pointer}`);
    if (!validateFn) throw new Error(`no schema at ${pointer}`);
    return (value: unknown): string[] =>
      validateFn(value) ? [] : ajv.errorsText(validateFn.errors).split(", ");
  };
}

/** The object literal exported by a generated discovery.ts, evaluated (TypeScript stripped). */
async function evaluateDiscovery(source: string): Promise<DiscoveryData> {
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const module = (await import(`data:text/javascript,${encodeURIComponent(js)}`)) as {
    discovery: DiscoveryData;
  };
  return module.discovery;
}

async function generated(model: AgentModel) {
  const { files } = await generateCode(model);
  const text = (name: string) =>
    files.find((f) => f.path === `src/generated/${name}`)!.contents as string;
  return { json: text("openapi.json"), ts: text("discovery.ts"), registry: text("registry.ts") };
}

const schemas = "/components/schemas/";
const executeOp = (doc: Json) => doc.paths["/execute"].post;

describe.each(MANIFESTS)("%s", (path) => {
  let model: AgentModel;
  let doc: Json;
  let files: Awaited<ReturnType<typeof generated>>;
  let check: ReturnType<typeof validatorFor>;

  beforeAll(async () => {
    model = await loadModel(path);
    files = await generated(model);
    doc = JSON.parse(files.json) as Json;
    check = validatorFor(doc);
  });

  it("is a valid OpenAPI 3.1 document, as generated and with a server added", async () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc).not.toHaveProperty("servers");
    for (const api of [doc, { ...doc, servers: [{ url: "https://agent.example.com" }] }]) {
      const result = await validate(structuredClone(api) as never);
      expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
      expect(result.warnings).toEqual([]);
    }
    expect(doc.info).toMatchObject({ title: model.name, version: model.version });
  });

  it("has one request schema per capability in the oneOf, told apart by task.capability's const", () => {
    const oneOf = executeOp(doc).requestBody.content["application/json"].schema.oneOf as Json[];
    expect(oneOf).toEqual(
      model.capabilities.map((c) => ({ $ref: `#${schemas}${c.typeName}JobRequest` })),
    );
    for (const c of model.capabilities) {
      const schema = doc.components.schemas[`${c.typeName}JobRequest`];
      expect(schema.properties.task.properties.capability).toEqual({ const: c.name });
      expect(schema.properties.task.properties.input).toEqual({
        $ref: `#${schemas}${c.typeName}Input`,
      });
      expect(schema.description).toContain(`${c.declaration.pricing.amount} USDC per job`);
      if (c.declaration.description)
        expect(schema.description).toContain(c.declaration.description);
      // The capability schemas are embedded as they are.
      expect(doc.components.schemas[`${c.typeName}Input`]).toEqual(c.inputSchema);
      expect(doc.components.schemas[`${c.typeName}Output`]).toEqual(c.outputSchema);
    }
    expect(executeOp(doc)["x-x402"]).toEqual({
      scheme: "exact",
      currency: "USDC",
      prices: Object.fromEntries(
        model.capabilities.map((c) => [c.name, c.declaration.pricing.amount]),
      ),
    });
  });

  it("has request examples that validate against their capability's request schema, and against the body's oneOf", () => {
    const body = executeOp(doc).requestBody.content["application/json"];
    const bodySchema = check("/paths/~1execute/post/requestBody/content/application~1json/schema");
    expect(Object.keys(body.examples)).toEqual(model.capabilities.map((c) => c.name));
    for (const c of model.capabilities) {
      const value = body.examples[c.name].value as Json;
      expect(value.task.capability).toBe(c.name);
      expect(check(`${schemas}${c.typeName}JobRequest`)(value)).toEqual([]);
      expect(bodySchema(value)).toEqual([]);
      // Another capability's name, or none, matches no branch.
      expect(bodySchema({ ...value, task: { ...value.task, capability: "nope" } })).not.toEqual([]);
      expect(check(`${schemas}${c.typeName}JobRequest`)({ ...value, job_id: "" })).not.toEqual([]);
    }
  });

  it("has sample outputs and result examples that validate against their schemas", () => {
    const { samples, problems } = capabilitySamples(model);
    expect(problems).toEqual([]);
    const results = executeOp(doc).responses["200"].content["application/json"];
    const resultSchema = check(
      "/paths/~1execute/post/responses/200/content/application~1json/schema",
    );
    for (const c of model.capabilities) {
      const sample = samples.get(c.name)!;
      expect(check(`${schemas}${c.typeName}Input`)(sample.input)).toEqual([]);
      expect(check(`${schemas}${c.typeName}Output`)(sample.output)).toEqual([]);
      const value = results.examples[c.name].value as Json;
      expect(value.output).toEqual(sample.output);
      expect(check(`${schemas}${c.typeName}JobResult`)(value)).toEqual([]);
      expect(resultSchema(value)).toEqual([]);
    }
  });

  it("documents every error of the spec with its status and the error body, and the runtime's transport answers", () => {
    const responses = executeOp(doc).responses as Json;
    const types: Record<string, string[]> = {
      "400": ["validation", "capability"],
      "402": ["payment"],
      "408": ["deadline"],
      "409": ["payment"],
      "429": ["payment"],
      "500": ["internal"],
      "413": ["validation"],
      "415": ["validation"],
      "503": ["internal"],
    };
    // 202: an async job accepted (Prefer: respond-async, the queue feature).
    expect(Object.keys(responses).sort()).toEqual(["200", "202", ...Object.keys(types)].sort());
    for (const [status, errorTypes] of Object.entries(types)) {
      const media = responses[status].content["application/json"];
      expect(JSON.stringify(media.schema), status).toContain(`"$ref":"#${schemas}ErrorBody"`);
      const bodySchema = check(
        `/paths/~1execute/post/responses/${status}/content/application~1json/schema`,
      );
      const examples: unknown[] = media.examples
        ? Object.values(media.examples as Json).map((e: Json) => e.value)
        : [media.example];
      for (const value of examples) expect(bodySchema(value), status).toEqual([]);
      for (const type of errorTypes)
        expect(bodySchema({ status: "failed", error_type: type, error: "x" }), status).toEqual([]);
      expect(bodySchema({ status: "failed", error_type: "nope", error: "x" })).not.toEqual([]);
    }
    expect(bodyOf(responses["402"]).schema.oneOf[0]).toEqual({
      $ref: `#${schemas}PaymentRequired`,
    });
    expect(responses["402"].headers).toHaveProperty("PAYMENT-REQUIRED");
    expect(responses["503"].headers).toHaveProperty("Retry-After");
    expect(responses["200"].headers).toHaveProperty("PAYMENT-RESPONSE");
    expect(responses["200"].headers).toHaveProperty("X-PAYMENT-RESPONSE");
  });

  it("declares the payment as the credential of /execute (either header), the job token as GET /jobs/{id}'s, and every other operation free", () => {
    const { jobToken, ...schemes } = doc.components.securitySchemes as Json;
    expect(Object.values(schemes).map((s: Json) => [s.type, s.in, s.name])).toEqual([
      ["apiKey", "header", "PAYMENT-SIGNATURE"],
      ["apiKey", "header", "X-PAYMENT"],
    ]);
    // Alternatives: one requirement object per header, so either one satisfies it.
    expect(executeOp(doc).security).toEqual(Object.keys(schemes).map((name) => ({ [name]: [] })));
    // The 202's job_token reads its job: Authorization: Bearer, so a generated SDK sends it.
    expect(jobToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/jobs/{id}"].get.security).toEqual([{ jobToken: [] }]);
    // The headers are the security schemes', not also parameters of their own: the one parameter is
    // Prefer (respond-async: an async job).
    expect(executeOp(doc).parameters.map((p: Json) => p.name)).toEqual(["Prefer"]);
    for (const [path, item] of Object.entries(doc.paths as Json))
      for (const [method, operation] of Object.entries(item as Json))
        if (path !== "/execute" && path !== "/jobs/{id}")
          expect((operation as Json).security, `${method} ${path}`).toEqual([]);
  });

  it("documents /health and /about with examples that validate; /about's is exactly what the app sends", () => {
    const health = doc.paths["/health"].get.responses;
    const record = check(`${schemas}HealthRecord`);
    expect(record(bodyOf(health["200"]).example)).toEqual([]);
    expect(record(bodyOf(health["503"]).example)).toEqual([]);
    expect(bodyOf(health["503"]).example).toMatchObject({
      status: "degraded",
      problems: [expect.any(String)],
    });
    const about = bodyOf(doc.paths["/about"].get.responses["200"]).example;
    expect(about).toEqual({
      service_version: request.SERVICE_VERSION,
      name: model.name,
      capabilities: Object.fromEntries(model.capabilities.map((c) => [c.name, c.declaration])),
    });
    expect(check(`${schemas}CapabilityDeclaration`)(about)).toEqual([]);
    expect(check(`${schemas}CapabilityDeclaration`)({ ...about, extra: 1 })).not.toEqual([]);
  });

  it("describes the 402 and the payment headers the runtime really sends", () => {
    const offer = (c: AgentModel["capabilities"][number]): PaymentOffer => ({
      network: KNOWN_NETWORKS["base-sepolia"],
      payTo: "0x1111111111111111111111111111111111111111",
      amount: c.priceAtomic,
      maxTimeoutSeconds: 300,
      resourceUrl: "https://agent.example.com/execute",
      description: c.declaration.description ?? `Run capability "${c.name}"`,
      discovery: { extensions: { bazaar: { info: {}, schema: {} } }, outputSchema: { input: {} } },
    });
    const decode = (text: string) => JSON.parse(Buffer.from(text, "base64").toString("utf8"));
    const paymentBody = check(
      "/paths/~1execute/post/responses/402/content/application~1json/schema",
    );
    const examples = bodyOf(executeOp(doc).responses["402"]).examples as Json;
    for (const c of model.capabilities) {
      const sent = paymentRequiredResponse(offer(c), generator.PAYMENT_REQUIRED_MESSAGE);
      expect(paymentBody(sent.body)).toEqual([]);
      expect(check(`${schemas}PaymentRequired`)(sent.body)).toEqual([]);
      expect(
        check(`${schemas}PaymentRequiredV2`)(decode(sent.headers["PAYMENT-REQUIRED"]!)),
      ).toEqual([]);
      // The example is the runtime's own 402 for the example configuration.
      const { discovery: _, ...plain } = offer(c);
      expect(examples[`missing-payment-${c.name}`].value).toEqual(
        paymentRequiredResponse(plain, generator.PAYMENT_REQUIRED_MESSAGE).body,
      );
    }
    for (const version of [1, 2]) {
      const headers = paymentResponseHeaders(version, {
        transaction: `0x${"ab".repeat(32)}`,
        network: "base-sepolia",
        payer: "0x2222222222222222222222222222222222222222",
      });
      for (const value of Object.values(headers))
        expect(check(`${schemas}SettlementResponse`)(decode(value))).toEqual([]);
    }
    const errorBody = runtimeErrors.errorResponse(new runtimeErrors.PaymentError("expired")).body;
    expect(paymentBody(errorBody)).toEqual([]);
  });

  it("writes the same document to openapi.json and discovery.ts, with each capability's discovery data", async () => {
    expect(files.json.endsWith("}\n")).toBe(true);
    expect(files.ts).toContain(
      `import type { DiscoveryData } from "../runtime/discovery/data.js";`,
    );
    const discovery = await evaluateDiscovery(files.ts);
    expect(discovery.openapi).toEqual(doc);
    const { samples } = capabilitySamples(model);
    expect(Object.keys(discovery.capabilities)).toEqual(model.capabilities.map((c) => c.name));
    for (const c of model.capabilities) {
      const entry = discovery.capabilities[c.name]!;
      expect(entry).toEqual({
        tags: c.tags,
        schemas: { input: `${c.typeName}Input`, output: `${c.typeName}Output` },
        exampleInput: samples.get(c.name)!.input,
        exampleOutput: samples.get(c.name)!.output,
      });
      expect(componentSchema(discovery, entry.schemas.input)).toEqual(c.inputSchema);
      expect(componentSchema(discovery, entry.schemas.output)).toEqual(c.outputSchema);
      expect(check(`${schemas}${entry.schemas.input}`)(entry.exampleInput)).toEqual([]);
      expect(check(`${schemas}${entry.schemas.output}`)(entry.exampleOutput)).toEqual([]);
    }
    // Imported when first needed: a service starts as fast with 100 capabilities as with one.
    expect(files.registry).not.toContain(`import { discovery }`);
    expect(files.registry).toContain(
      `  loadDiscovery: () => import("./discovery.js").then((m) => m.discovery),\n`,
    );
  });
});

function bodyOf(response: Json): Json {
  return response.content["application/json"];
}

describe("the generated discovery files", () => {
  const base = {
    name: "doc-agent",
    version: "1.0.0",
    capabilities: {
      echo: {
        pricing: { model: "per_job", amount: "0.01", currency: "USDC" },
        input_schema: { text: { type: "string", required: true } },
        output_schema: { text: { type: "string" } },
      },
    },
  };
  const model = (manifest: unknown) => parseManifest(JSON.stringify(manifest), "agent.json");

  it("change when the manifest changes: a new field, a new price", async () => {
    const before = generateDiscovery(model(base));
    const withField = structuredClone(base) as Json;
    withField.capabilities.echo.input_schema.lang = { type: "string" };
    const withPrice = structuredClone(base) as Json;
    withPrice.capabilities.echo.pricing.amount = "0.02";
    for (const changed of [withField, withPrice]) {
      const after = generateDiscovery(model(changed));
      expect(after.openapiJson).not.toBe(before.openapiJson);
      expect(after.discoveryTs).not.toBe(before.discoveryTs);
    }
    const priced = JSON.parse(generateDiscovery(model(withPrice)).openapiJson) as Json;
    expect(priced.paths["/execute"].post["x-x402"].prices).toEqual({ echo: "0.02" });
    expect(priced.components.schemas.EchoJobRequest.description).toContain("0.02 USDC per job");
    expect(generateDiscovery(model(base))).toEqual(before); // and only then
  });

  it("serves only the security schemes its operations use: dev mode keeps the job token, no queue drops it", () => {
    const doc = JSON.parse(generateDiscovery(model(base)).openapiJson) as Json;
    const data = { openapi: doc, capabilities: {} } as unknown as DiscoveryData;
    const schemes = (served: Json) => Object.keys(served.components.securitySchemes ?? {});
    const all = ["PAYMENT-SIGNATURE", "X-PAYMENT", "jobToken"];
    expect(schemes(serveOpenApi(data, "https://a.example"))).toEqual(all);
    const dev = serveOpenApi(data, "https://a.example", { free: true }) as Json;
    expect(schemes(dev)).toEqual(["jobToken"]);
    expect(dev.paths["/jobs/{id}"].get.security).toEqual([{ jobToken: [] }]);
    const noQueue = { served: new Set(["/health", "/about", "/execute", "/mcp"]) };
    expect(schemes(serveOpenApi(data, "https://a.example", noQueue) as Json)).toEqual(
      all.slice(0, 2),
    );
    const devNoQueue = serveOpenApi(data, "https://a.example", { ...noQueue, free: true }) as Json;
    expect(devNoQueue.components).not.toHaveProperty("securitySchemes");
    expect(doc.components.securitySchemes).toHaveProperty("X-PAYMENT"); // the shared document is untouched
  });

  it("the offline openapi.json describes POST /mcp, served by default; MCP=off serves it without", () => {
    const doc = JSON.parse(generateDiscovery(model(base)).openapiJson) as Json;
    const mcp = doc.paths["/mcp"].post;
    expect(mcp.operationId).toBe("mcp");
    expect(mcp.security).toEqual([]);
    expect(mcp.description).toMatch(/any Accept that takes JSON works/);
    const data = { openapi: doc, capabilities: {} } as unknown as DiscoveryData;
    expect(serveOpenApi(data, "https://a.example").paths).toHaveProperty("/mcp");
    const off = serveOpenApi(data, "https://a.example", {
      served: new Set(["/health", "/about", "/execute"]),
      unusedSchemas: MCP_TRANSPORT.discovery!.openapiSchemas!,
    }) as Json;
    expect(off.paths).not.toHaveProperty("/mcp");
    // ...and so do the schemas only /mcp uses.
    expect(Object.keys(off.components.schemas).filter((k) => k.startsWith("Mcp"))).toEqual([]);
    expect(doc.components.schemas).toHaveProperty("McpMessage");
    // What the document calls a valid message is what the MCP SDK's transport parses.
    const ajv = new Ajv2020({ strict: false });
    const valid = ajv.compile({
      ...mcp.requestBody.content["application/json"].schema,
      components: doc.components,
    });
    const call = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" }, _meta: { progressToken: 3 } },
    };
    const notification = { jsonrpc: "2.0", method: "notifications/initialized" };
    for (const message of [call, notification, { ...call, id: "a" }]) {
      expect(valid(message)).toBe(true);
      expect(JSONRPCMessageSchema.safeParse(message).success).toBe(true);
    }
    expect(valid([call, { ...call, id: 2 }])).toBe(true);
    for (const bad of [
      { ...call, extra: 1 },
      { ...call, id: 1.5 },
      { ...call, params: { _meta: { progressToken: {} } } },
    ]) {
      expect(valid(bad)).toBe(false);
      expect(JSONRPCMessageSchema.safeParse(bad).success).toBe(false);
    }
    expect(valid(Array.from({ length: 21 }, (_, id) => ({ ...call, id })))).toBe(false);
  });

  it("discovery.ts reads back as exactly openapi.json's document, whatever the text holds", async () => {
    // The data is JSON text inside a template literal: backslashes, backticks, `${` and line
    // separators in descriptions must come out as they went in.
    const tricky = structuredClone(base) as Json;
    tricky.description =
      'Costs ${price}: a `code` span, C:\\path\\n, "quotes", \u2028 and \u2029, ` ${ `';
    tricky.capabilities.echo.description = "backslash \\ then `tick` then ${x}";
    tricky.capabilities.echo.input_schema.text.pattern = "^\\$\\{[a-z]+\\}`$";
    const { discoveryTs, openapiJson } = generateDiscovery(model(tricky));
    const discovery = await evaluateDiscovery(discoveryTs);
    expect(discovery.openapi).toEqual(JSON.parse(openapiJson));
    expect(JSON.stringify(discovery.openapi)).toContain(
      "Costs ${price}: a `code` span, C:\\\\path",
    );
    expect(discovery.capabilities.echo!.tags).toEqual(["echo"]);
  });

  it("report a sample the sampler cannot make as a warning, once", async () => {
    const odd = structuredClone(base) as Json;
    odd.capabilities.echo.input_schema.text.pattern = "^zz[0-9]{3}$";
    odd.capabilities.echo.output_schema.text.pattern = "^zz[0-9]{3}$";
    const { warnings } = await generateCode(model(odd));
    expect(warnings.filter((w) => w.startsWith("echo: sample input"))).toHaveLength(1);
    expect(warnings.filter((w) => w.startsWith("echo: sample output"))).toHaveLength(1);
  });

  it("buildOpenApi is pure and its key order is fixed", () => {
    const m = buildModel(model(base).manifest);
    expect(JSON.stringify(buildOpenApi(m))).toBe(JSON.stringify(buildOpenApi(m)));
    expect(Object.keys(buildOpenApi(m))).toEqual([
      "openapi",
      "info",
      "tags",
      "paths",
      "components",
    ]);
    expect(aboutBody(m)).toEqual({
      service_version: "1.0",
      name: "doc-agent",
      capabilities: { echo: m.capabilities[0]!.declaration },
    });
  });

  it("mirror the runtime's limits, messages and discovery paths", () => {
    expect(generator.SERVICE_VERSION).toBe(request.SERVICE_VERSION);
    expect(generator.MAX_JOB_ID_LENGTH).toBe(request.MAX_JOB_ID_LENGTH);
    expect(generator.MAX_DEADLINE_AHEAD_SECONDS).toBe(request.MAX_DEADLINE_AHEAD_SECONDS);
    expect(generator.MAX_NESTING_DEPTH).toBe(request.MAX_NESTING_DEPTH);
    expect(generator.GENERIC_INTERNAL_MESSAGE).toBe(runtimeErrors.GENERIC_INTERNAL_MESSAGE);
    expect(mcpDoc.MCP_PATH).toBe(paths.MCP_PATH);
    expect(mcpDoc.MCP_PROTOCOL_VERSION).toBe(paths.MCP_PROTOCOL_VERSION);
    expect(mcpDoc.MAX_BATCH_MESSAGES).toBe(mcpMessages.MAX_BATCH_MESSAGES);
    expect(generator.DISCOVERY_PATHS).toEqual({
      openapi: paths.OPENAPI_PATH,
      agentCard: paths.AGENT_CARD_PATH,
      llms: paths.LLMS_TXT_PATH,
    });
  });
});

describe("create-agent generate --check", () => {
  it("reports src/generated/openapi.json edited by hand; generate restores it", async () => {
    const dir = await scaffold();
    const file = join(dir, "src/generated/openapi.json");
    const original = await readFile(file, "utf8");
    const doc = JSON.parse(original) as Json;
    doc.info.title = "edited";
    await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
    const stale = await cli(["generate", "--check"], dir);
    expect(stale.exitCode).toBe(1);
    expect(stale.stderr).toContain("src/generated/openapi.json (out of date)");
    expect((await cli(["generate"], dir)).exitCode).toBe(0);
    expect(await readFile(file, "utf8")).toBe(original);
  });
});
