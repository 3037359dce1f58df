// The x402 Bazaar discovery extension in the 402, checked with the official @x402/extensions validators and
// extractors, for v2 (PAYMENT-REQUIRED header: extensions.bazaar) and v1 (the body's accepts[].outputSchema);
// the example it shows really runs; the official v2 client pays a 402 that carries it (and echoes it back);
// and nothing about what is verified or settled changes.
import {
  extractDiscoveryInfo,
  extractDiscoveryInfoV1,
  isDiscoverableV1,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from "@x402/extensions/bazaar";
import { officialPaidEcho } from "./official-pay.js";
import { describe, expect, it, vi } from "vitest";
import type { DiscoveryData } from "../../templates/runtime/discovery/data.js";
import { createBazaar, MAX_BAZAAR_BYTES } from "../../templates/runtime/discovery/bazaar.js";
import { discoveryFor, only, withDiscovery } from "./discovery-fixture.js";
import { devAndProdForTests } from "./dev-and-prod.js";
import {
  anvilAccount,
  captureLogger,
  job,
  logText,
  makeAgent,
  offerV2,
  PAY_TO,
  post,
  production,
  recordingSettler,
  signAuthorization,
  startApp,
  unb64,
  v1Header,
  v2Header,
} from "./helpers.js";

/** Production with a facilitator that is never reached: enough for 402s. */
const FACILITATOR_PRODUCTION = {
  devMode: false,
  payment: {
    payTo: PAY_TO,
    network: "base-sepolia",
    facilitatorUrl: "http://127.0.0.1:9/facilitator",
  },
} as const;

const apps = devAndProdForTests(FACILITATOR_PRODUCTION);

// The validator's Ajv warns about formats it does not know ("email"): annotations in 2020-12, not errors.
const quietly = <T>(work: () => T): T => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
  try {
    return work();
  } finally {
    warn.mockRestore();
  }
};

/** POST a valid job (the capability's example input) without payment: the 402. */
async function unpaid(url: string, capability = "echo") {
  const input = apps.prodAgent.discovery!.capabilities[capability]!.exampleInput;
  const res = await post(url, job(capability, input));
  expect(res.status).toBe(402);
  const header = res.headers.get("payment-required");
  expect(header).not.toBeNull();
  return { required: unb64(header!), header: header!, body: res.body };
}

describe("v2: PAYMENT-REQUIRED carries extensions.bazaar", () => {
  it("passes validateDiscoveryExtension and validateDiscoveryExtensionSpec", async () => {
    const { required } = await unpaid(apps.prod.url);
    const bazaar = required.extensions?.bazaar;
    expect(bazaar).toBeDefined();
    expect(Object.keys(required.extensions)).toEqual(["bazaar", "payment-identifier"]);
    expect(quietly(() => validateDiscoveryExtension(bazaar))).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar)).toEqual({ valid: true });
    expect(bazaar.schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    // Self-contained: no $id, and every $ref is local.
    const text = JSON.stringify(bazaar.schema);
    expect(text).not.toContain('"$id"');
    for (const [, target] of text.matchAll(/"\$ref":"([^"]*)"/g)) expect(target).toMatch(/^#/);
    // The payment requirement itself is what it always was.
    expect(required.accepts).toEqual([{ ...offerV2(), maxTimeoutSeconds: expect.any(Number) }]);
  });

  it("describes a POST with a JSON job body for the capability the request named", async () => {
    for (const capability of ["echo", "cheap", "slow"]) {
      const { required } = await unpaid(apps.prod.url, capability);
      const { info, schema } = required.extensions.bazaar;
      expect(info.input).toMatchObject({ type: "http", method: "POST", bodyType: "json" });
      const discovery = apps.prodAgent.discovery!.capabilities[capability]!;
      expect(info.input.body).toEqual({
        service_version: "1.0",
        job_id: expect.any(String),
        task: { capability, input: discovery.exampleInput },
        deadline: expect.any(Number),
      });
      expect(info.output).toEqual({
        type: "json",
        example: expect.objectContaining({ status: "completed", output: discovery.exampleOutput }),
      });
      const body = schema.properties.input.properties.body;
      expect(body.properties.task.properties.capability.const).toBe(capability);
      const components = (apps.prodAgent.discovery!.openapi.components as any).schemas;
      expect(body.properties.task.properties.input).toEqual(components[discovery.schemas.input]);
      expect(schema.properties.output.properties.example.properties.output).toEqual(
        components[discovery.schemas.output],
      );
    }
  });

  it("extractDiscoveryInfo (what a facilitator catalogues from a paid request) reads it as POST/json", async () => {
    const { required } = await unpaid(apps.prod.url);
    // What the official client sends back: the server's extensions, echoed.
    const payload = {
      x402Version: 2,
      resource: required.resource,
      accepted: required.accepts[0],
      payload: {},
      extensions: required.extensions,
    };
    const found: any = quietly(() => extractDiscoveryInfo(payload as any, required.accepts[0]));
    expect(found).not.toBeNull();
    expect(found.method).toBe("POST");
    expect(found.resourceUrl).toBe(`${apps.prod.url}/execute`);
    expect(found.x402Version).toBe(2);
    expect(found.discoveryInfo.input.bodyType).toBe("json");
    expect(found.discoveryInfo).toEqual(required.extensions.bazaar.info);
  });

  it("the schema means something: a wrong example fails the same validator", async () => {
    const { required } = await unpaid(apps.prod.url);
    const bazaar = structuredClone(required.extensions.bazaar);
    bazaar.info.input.body.task.capability = "cheap";
    expect(quietly(() => validateDiscoveryExtension(bazaar)).valid).toBe(false);
    const missing = structuredClone(required.extensions.bazaar);
    delete missing.info.input.body.task.input.text;
    expect(quietly(() => validateDiscoveryExtension(missing)).valid).toBe(false);
    const badOutput = structuredClone(required.extensions.bazaar);
    badOutput.info.output.example.output = { text: 5 };
    expect(quietly(() => validateDiscoveryExtension(badOutput)).valid).toBe(false);
  });

  it("its example body runs: POSTed to a dev-mode app it completes, and the real result fits the schema", async () => {
    for (const capability of ["echo", "cheap", "slow"]) {
      const { required } = await unpaid(apps.prod.url, capability);
      const { info } = required.extensions.bazaar;
      const res = await post(apps.dev.url, info.input.body);
      expect(res.status, res.text).toBe(200);
      expect(res.body.output).toEqual(info.output.example.output);
      // The service's actual answer in place of the example still validates.
      const real = structuredClone(required.extensions.bazaar);
      real.info.output.example = res.body;
      expect(quietly(() => validateDiscoveryExtension(real))).toEqual({ valid: true });
    }
  });

  it("a 402 for an invalid payment (the retry offer) carries it too", async () => {
    const res = await post(apps.prod.url, job("echo", { text: "x" }), {
      "PAYMENT-SIGNATURE": "bm9wZQ==",
    });
    expect(res.status).toBe(402);
    expect(res.body.error_type).toBe("payment");
    const required = unb64(res.headers.get("payment-required")!);
    expect(quietly(() => validateDiscoveryExtension(required.extensions.bazaar))).toEqual({
      valid: true,
    });
  });
});

describe("v1: the body keeps the spec's shape and lists outputSchema", () => {
  it("x402Version 1, accepts[] with scheme and maxAmountRequired, read by isDiscoverableV1/extractDiscoveryInfoV1", async () => {
    const { required, body } = await unpaid(apps.prod.url);
    expect(body.x402Version).toBe(1);
    expect(body.accepts).toHaveLength(1);
    const entry = body.accepts[0];
    expect(entry.scheme).toBe("exact");
    expect(entry.maxAmountRequired).toBe("10000");
    expect(isDiscoverableV1(entry)).toBe(true);
    const info: any = extractDiscoveryInfoV1(entry);
    expect(info.input).toEqual({
      type: "http",
      method: "POST",
      bodyType: "json",
      body: required.extensions.bazaar.info.input.body,
    });
    expect(info.output).toEqual(required.extensions.bazaar.info.output);
    const found: any = extractDiscoveryInfo(
      { x402Version: 1, scheme: "exact", network: "base-sepolia", payload: {} } as any,
      entry,
    );
    expect(found).toMatchObject({
      method: "POST",
      resourceUrl: `${apps.prod.url}/execute`,
      x402Version: 1,
    });
  });
});

describe("without discovery data", () => {
  it("the 402 has no bazaar extension (only payment-identifier) and no outputSchema", async () => {
    const plain = await startApp(makeAgent(), FACILITATOR_PRODUCTION);
    try {
      const { required, body } = await unpaid(plain.url);
      expect(Object.keys(required.extensions)).toEqual(["payment-identifier"]);
      expect(body.accepts[0]).not.toHaveProperty("outputSchema");
      expect(isDiscoverableV1(body.accepts[0])).toBe(false);
    } finally {
      await plain.close();
    }
  });
});

describe("what is verified and settled is unchanged", () => {
  it("the official v2 client pays a 402 with the extension; the settled requirement has none", async () => {
    const settler = recordingSettler();
    const app = await startApp(withDiscovery(only(makeAgent(), "echo")), production(settler));
    try {
      const sent: string[] = [];
      const recording: typeof fetch = (input, init) => {
        const headers = new Headers(
          init?.headers ?? (input instanceof Request ? input.headers : {}),
        );
        const payment = headers.get("payment-signature");
        if (payment) sent.push(payment);
        return fetch(input, init);
      };
      await officialPaidEcho(app.url, anvilAccount(), recording);
      // The client echoed the bazaar extension in its PAYMENT-SIGNATURE; the server took it.
      expect(sent).toHaveLength(1);
      expect(unb64(sent[0]!).extensions.bazaar.info.input.method).toBe("POST");
      expect(settler.settled()).toBe(1);
      const settled = settler.calls.find((c) => c.step === "settle")!.payment;
      expect(settled.requirement).toEqual({ ...offerV2(), maxTimeoutSeconds: expect.any(Number) });
    } finally {
      await app.close();
    }
  });

  it("a v1 payment settles against the requirement without outputSchema", async () => {
    const settler = recordingSettler();
    const app = await startApp(withDiscovery(makeAgent()), production(settler));
    try {
      const payload = await signAuthorization(anvilAccount());
      const res = await post(app.url, job("echo", { text: "v1" }), {
        "X-PAYMENT": v1Header(payload),
      });
      expect(res.status, res.text).toBe(200);
      const requirement = settler.calls.find((c) => c.step === "settle")!.payment.requirement;
      expect(requirement).not.toHaveProperty("outputSchema");
      expect(requirement).toMatchObject({
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "10000",
      });
      // And a v2 header without the echo is as good as one with it.
      const v2 = await signAuthorization(anvilAccount());
      const paid = await post(app.url, job("echo", { text: "v2" }), {
        "PAYMENT-SIGNATURE": v2Header(offerV2(), v2),
      });
      expect(paid.status, paid.text).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe("createBazaar", () => {
  const capabilities = () => only(makeAgent(), "echo").capabilities;

  it("copies component schemas a capability refers to into $defs, self-references included", () => {
    const data = discoveryFor(only(makeAgent(), "echo"));
    const schemas = (data.openapi.components as any).schemas;
    schemas.Tag = { type: "string", maxLength: 20, description: "one tag" };
    schemas.Tree = {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/components/schemas/Tree" } } },
    };
    schemas.EchoInput.properties.tags.items = { $ref: "#/components/schemas/Tag" };
    schemas.EchoInput.properties.tree = { $ref: "#/components/schemas/Tree" };
    data.capabilities.echo!.exampleInput = { text: "hi", tags: ["a"] };
    const logger = captureLogger();
    const declare = createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: 604800 });
    const declared = declare(capabilities().echo!)!;
    const bazaar = declared.extensions.bazaar as any;
    expect(Object.keys(bazaar.schema.$defs).sort()).toEqual(["Tag", "Tree"]);
    expect(JSON.stringify(bazaar.schema)).not.toContain("#/components/");
    expect(quietly(() => validateDiscoveryExtension(bazaar))).toEqual({ valid: true });
    bazaar.info.input.body.task.input.tags = ["x".repeat(21)]; // Tag's maxLength, through the $ref
    expect(quietly(() => validateDiscoveryExtension(bazaar)).valid).toBe(false);
    expect(logger.lines).toEqual([]);
  });

  it("a schema with an external $ref gets no extension, and says why", () => {
    const data = discoveryFor(only(makeAgent(), "echo"));
    (data.openapi.components as any).schemas.EchoInput.properties.code = {
      $ref: "https://schemas.example.com/code.json",
    };
    const logger = captureLogger();
    const declare = createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: 604800 });
    expect(declare(capabilities().echo!)).toBeUndefined();
    expect(logText(logger)).toMatch(/"echo" gets no bazaar extension.*code\.json/);
  });

  it("stays within MAX_BAZAAR_BYTES: first without annotations, else none (logged)", () => {
    const data: DiscoveryData = discoveryFor(only(makeAgent(), "echo"));
    const schemas = (data.openapi.components as any).schemas;
    schemas.EchoInput.properties.text.description = "d".repeat(MAX_BAZAAR_BYTES);
    const logger = captureLogger();
    const declared = createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: 604800 })(
      capabilities().echo!,
    )!;
    expect(JSON.stringify(declared.extensions).length).toBeLessThanOrEqual(MAX_BAZAAR_BYTES);
    expect(JSON.stringify(declared.extensions)).not.toContain("ddd");
    expect(quietly(() => validateDiscoveryExtension(declared.extensions.bazaar as any))).toEqual({
      valid: true,
    });

    data.capabilities.echo!.exampleInput = { text: "hi", tags: ["x".repeat(MAX_BAZAAR_BYTES)] };
    const none = createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: 604800 });
    expect(none(capabilities().echo!)).toBeUndefined();
    expect(logText(logger)).toMatch(/"echo" gets no bazaar extension: it would take \d+ bytes/);
  });

  it("the example's deadline is ahead of now, within the service's largest deadline", () => {
    const data = discoveryFor(only(makeAgent(), "echo"));
    const now = Date.UTC(2030, 0, 1);
    const logger = captureLogger();
    const body = (max: number) =>
      (
        createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: max })(
          capabilities().echo!,
          now,
        )!.extensions.bazaar as any
      ).info.input.body;
    expect(body(604800).deadline).toBe(now / 1000 + 300);
    expect(body(60).deadline).toBe(now / 1000 + 60);
  });

  it("an example the capability itself would refuse gets none (logged)", () => {
    for (const [field, value, what] of [
      ["exampleInput", {}, "input"],
      ["exampleOutput", { text: 5 }, "output"],
    ] as const) {
      const data = discoveryFor(only(makeAgent(), "echo"));
      (data.capabilities.echo as any)[field] = value;
      const logger = captureLogger();
      const declare = createBazaar(capabilities(), data, { logger, maxDeadlineSeconds: 604800 });
      expect(declare(capabilities().echo!)).toBeUndefined();
      expect(logText(logger)).toContain(`its example ${what} does not pass its own ${what} schema`);
    }
  });

  it("a capability missing from the discovery data gets none (logged), the others theirs", () => {
    const agent = makeAgent();
    const data = discoveryFor(only(makeAgent(), "echo"));
    const logger = captureLogger();
    const declare = createBazaar(agent.capabilities, data, { logger, maxDeadlineSeconds: 604800 });
    expect(declare(agent.capabilities.echo!)).toBeDefined();
    expect(declare(agent.capabilities.cheap!)).toBeUndefined();
    expect(logText(logger)).toMatch(/no discovery data for capability "cheap"/);
  });

  it("the PAYMENT-REQUIRED header stays small for the test agent", async () => {
    const { header } = await unpaid(apps.prod.url);
    expect(header.length).toBeLessThan(8 * 1024);
  });
});
