// Unit tests of the small runtime modules: ajv message formatting, the error map, the logger,
// networks and x402 decoding/encoding.
import { describe, expect, it } from "vitest";
import {
  compileValidators,
  formatAjvErrors,
  inputAjv,
  outputAjv,
} from "../../templates/runtime/ajv.js";
import { createApp } from "../../templates/runtime/app.js";
import { ConfigError } from "../../templates/runtime/config.js";
import {
  CapabilityError,
  DeadlineError,
  GENERIC_INTERNAL_MESSAGE,
  InternalError,
  PaymentError,
  ValidationError,
  errorBody,
  errorResponse,
  fromHandlerError,
} from "../../templates/runtime/errors.js";
import { createLogger } from "../../templates/runtime/ops/logger.js";
import { EVM_NETWORKS as KNOWN_NETWORKS } from "../../templates/runtime/payments/evm/networks.js";
import { parseNetwork } from "../../templates/runtime/payments/families.js";
import {
  MAX_PAYMENT_HEADER_BYTES,
  decodeBase64Json,
  decodePaymentHeader,
  encodeBase64Json,
} from "../../templates/runtime/payments/x402.js";
import {
  anvilAccount,
  b64,
  captureLogger,
  job,
  makeAgent,
  offerV2,
  post,
  PRODUCTION,
  signAuthorization,
  startApp,
} from "./helpers.js";

describe("ajv", () => {
  const schema = {
    type: "object",
    additionalProperties: false,
    required: ["text"],
    properties: {
      text: { type: "string", description: "d", examples: ["e"] },
      n: { type: "integer", default: 2 },
      nested: {
        type: "object",
        additionalProperties: false,
        properties: { "odd key": { type: "boolean" } },
      },
      when: { type: "string", format: "date-time" },
    },
  };

  const misspelt = { type: "object", properties: { a: { type: "string", minLenght: 1 } } };

  it("accepts annotation keywords (description, examples) in strict mode", () => {
    const capabilities = {
      x: { validateInput: inputAjv.compile(schema), validateOutput: outputAjv.compile(schema) },
    };
    expect(compileValidators(capabilities)).toEqual([]);
  });

  it("strict mode rejects unknown keywords when a schema compiles: on first use, or up front", () => {
    const validate = inputAjv.compile(misspelt); // compiles lazily: nothing is checked yet
    expect(() => validate({})).toThrow(/unknown keyword/);
    const capabilities = {
      bad: { validateInput: inputAjv.compile(misspelt), validateOutput: outputAjv.compile(schema) },
    };
    expect(compileValidators(capabilities)).toEqual([
      expect.stringMatching(/^capability "bad": its input schema does not compile: .*minLenght/),
    ]);
  });

  it("a lazily compiled validator compiles once and reports Ajv's errors like Ajv's own", () => {
    const lazy = outputAjv.compile(schema);
    expect(lazy.errors).toBeNull();
    expect(lazy({ text: 1 })).toBe(false);
    expect(lazy.errors?.[0]).toMatchObject({ instancePath: "/text", keyword: "type" });
    const env = lazy.schemaEnv;
    expect(lazy({ text: "ok" })).toBe(true);
    expect(lazy.errors).toBeNull();
    expect(lazy.schemaEnv).toBe(env); // not compiled again
    expect(lazy.schema).toBe(schema);
  });

  it("production refuses to start with a schema Ajv refuses; dev mode answers its jobs with a 500", async () => {
    const agent = makeAgent();
    agent.capabilities.echo!.validateInput = inputAjv.compile(misspelt);
    expect(() => createApp(agent, { env: {}, logger: captureLogger(), ...PRODUCTION })).toThrow(
      ConfigError,
    );
    expect(() => createApp(agent, { env: {}, logger: captureLogger(), ...PRODUCTION })).toThrow(
      /capability "echo": its input schema does not compile/,
    );
    const app = await startApp(agent, { devMode: true });
    try {
      expect((await post(app.url, job("cheap", { text: "hi" }))).status).toBe(200);
      const res = await post(app.url, job("echo", { text: "hi" }));
      expect(res.status).toBe(500);
      expect(res.body.error_type).toBe("internal");
    } finally {
      await app.close();
    }
  });

  it("input ajv coerces and applies defaults; output ajv does neither", () => {
    const data = { text: "a", n: "7" };
    expect(inputAjv.compile(schema)(data)).toBe(true);
    expect(data).toEqual({ text: "a", n: 7 });
    const withDefault: Record<string, unknown> = { text: "a" };
    inputAjv.compile(schema)(withDefault);
    expect(withDefault.n).toBe(2);
    const out = { text: "a", n: "7" };
    expect(outputAjv.compile(schema)(out)).toBe(false);
    expect(out.n).toBe("7");
  });

  it("formats paths: nested keys, odd keys, formats", () => {
    const validate = outputAjv.compile(schema);
    validate({ text: "a", nested: { "odd key": 1 }, when: "yesterday" });
    const message = formatAjvErrors(validate.errors, "output");
    expect(message).toContain('output.nested["odd key"]: must be boolean');
    expect(message).toContain('output.when: must match format "date-time"');
  });

  it("has a fallback for no errors", () => {
    expect(formatAjvErrors(null)).toBe("input: does not match the schema");
  });
});

describe("errors", () => {
  it.each([
    [new ValidationError("v"), "validation", 400],
    [new PaymentError("p"), "payment", 402],
    [new DeadlineError("d"), "deadline", 408],
    [new CapabilityError("c"), "capability", 400],
    [new InternalError("i"), "internal", 500],
    [new ValidationError("too big", { status: 413 }), "validation", 413],
  ] as const)("%s -> %s %i", (err, type, status) => {
    expect(err.errorType).toBe(type);
    expect(err.status).toBe(status);
    expect(err).toBeInstanceOf(Error);
    const response = errorResponse(err);
    expect(response.status).toBe(status);
    expect(response.body).toEqual(
      errorBody(type, type === "internal" ? GENERIC_INTERNAL_MESSAGE : err.message),
    );
  });

  it("names the class", () => {
    expect(new DeadlineError("x").name).toBe("DeadlineError");
  });

  it("fromHandlerError passes typed errors, demotes the rest to internal", () => {
    const logger = captureLogger();
    const v = new ValidationError("v");
    expect(fromHandlerError(v, logger)).toBe(v);
    expect(fromHandlerError(new PaymentError("p"), logger).errorType).toBe("internal");
    expect(fromHandlerError(new Error("boom"), logger).errorType).toBe("internal");
    expect(fromHandlerError(undefined, logger).errorType).toBe("internal");
    expect(logger.lines.map((l) => l.level)).toEqual(["warn", "error", "error"]);
  });
});

describe("logger", () => {
  it("writes one JSON line per entry, honours the level, and child adds fields", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", write: (line) => lines.push(line) });
    logger.debug("hidden");
    logger.child({ job_id: "j1" }).warn("multi\nline", { n: 1 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: "warn",
      msg: "multi\nline",
      job_id: "j1",
      n: 1,
    });
  });

  it("debug level shows debug; unknown levels fall back to info", () => {
    const lines: string[] = [];
    createLogger({ level: "debug", write: (l) => lines.push(l) }).debug("shown");
    createLogger({ level: "loud", write: (l) => lines.push(l) }).debug("hidden");
    expect(lines).toHaveLength(1);
  });
});

describe("networks", () => {
  it("knows base and base-sepolia by either name", () => {
    expect(parseNetwork("base")).toMatchObject({
      caip2: "eip155:8453",
      chainId: 8453,
      usdc: { assetName: "USD Coin" },
    });
    expect(parseNetwork("eip155:84532")).toMatchObject({
      v1Name: "base-sepolia",
      usdc: { asset: KNOWN_NETWORKS["base-sepolia"].asset },
    });
  });

  it("parses other eip155 chains without a token, refuses junk", () => {
    expect(parseNetwork("eip155:31337")).toEqual({
      family: "evm",
      v1Name: "eip155:31337",
      caip2: "eip155:31337",
      chainId: 31337,
    });
    for (const bad of [
      "mainnet",
      "eip155:",
      "eip155:0",
      "eip155:01",
      "eip155:1.5",
      "solana:1",
      "eip155:99999999999999999999",
    ])
      expect(parseNetwork(bad)).toBeUndefined();
  });
});

describe("x402 decoding", () => {
  it("round-trips base64 JSON", () => {
    const value = { a: "é", b: [1] };
    expect(decodeBase64Json(encodeBase64Json(value))).toEqual({ ok: true, value });
  });

  it.each([
    ["", "not standard base64"],
    ["abc", "not standard base64"],
    ["ab c", "not standard base64"],
    ["a-b_", "not standard base64"],
    [Buffer.from([0xff, 0xfe, 0xfd]).toString("base64"), "UTF-8"],
    [Buffer.from("{oops").toString("base64"), "not base64 of JSON"],
    [Buffer.from("null").toString("base64"), "JSON object"],
    ["A".repeat(MAX_PAYMENT_HEADER_BYTES + 4), "larger than"],
  ])("refuses %j", (text, reason) => {
    const result = decodeBase64Json(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });

  it("decodes v2 and v1 payment payloads", async () => {
    const payload = await signAuthorization(anvilAccount());
    const v2 = decodePaymentHeader(b64({ x402Version: 2, accepted: offerV2(), payload }));
    expect(v2).toMatchObject({ ok: true, value: { x402Version: 2, accepted: offerV2(), payload } });
    const v1 = decodePaymentHeader(
      b64({ x402Version: 1, scheme: "exact", network: "base-sepolia", payload }),
    );
    expect(v1).toMatchObject({
      ok: true,
      value: { x402Version: 1, scheme: "exact", network: "base-sepolia", payload },
    });
  });

  it.each([
    [{ x402Version: "2" }, "unsupported x402Version"],
    [{ x402Version: 1, network: "base-sepolia", payload: "p" }, "no `payload` object"],
    [{ x402Version: 2, accepted: { ...offerV2(), amount: 10000 } }, "accepted.amount"],
    [{ x402Version: 1, network: "base-sepolia" }, "no string `scheme`"],
    [{ x402Version: 1, scheme: "exact" }, "no string `network`"],
  ])("refuses shape %j", async (partial, reason) => {
    const payload = await signAuthorization(anvilAccount());
    const result = decodePaymentHeader(b64({ payload, ...partial }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });
});
