// Shared test fixtures for the runtime: a hand-built agent, a capturing logger, a real server on
// port 0, and real EIP-712 payment signing with viem accounts.
import { createHash, randomBytes } from "node:crypto";
import { TRANSFER_WITH_AUTHORIZATION } from "../../templates/runtime/payments/x402.js";
import { createServer, type Server } from "node:http";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { closeServer, listenLocal } from "./servers.js";
import { inputAjv, outputAjv } from "../../templates/runtime/ajv.js";
import { createApp } from "../../templates/runtime/app.js";
import type { AppOptions } from "../../templates/runtime/config.js";
import type { SettlementResult, Settler } from "../../templates/runtime/payments/settlement.js";
import {
  DeadlineError,
  InternalError,
  PaymentError,
  CapabilityError,
  UnavailableError,
  ValidationError,
} from "../../templates/runtime/errors.js";
import type {
  AgentDefinition,
  Capability,
  CapabilityDeclaration,
  Logger,
  VerifiedPayment,
} from "../../templates/runtime/types.js";
import { afterEach, expect } from "vitest";

export const ANVIL_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
export const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
export const OTHER_ADDRESS = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields: Record<string, unknown>;
}

/** A Logger that records every line (child fields merged in). */
export function captureLogger(
  lines: LogLine[] = [],
  base: Record<string, unknown> = {},
): Logger & { lines: LogLine[] } {
  const at =
    (level: LogLine["level"]) =>
    (message: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, message, fields: { ...base, ...fields } });
    };
  return {
    lines,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: (fields) => captureLogger(lines, { ...base, ...fields }),
  };
}

/** Everything logged, as one string, for "does the log mention X" assertions. */
export const logText = (logger: { lines: LogLine[] }): string =>
  logger.lines.map((l) => `${l.level} ${l.message} ${JSON.stringify(l.fields)}`).join("\n");

function declaration(
  amount: string,
  input: CapabilityDeclaration["input_schema"],
  output: CapabilityDeclaration["output_schema"],
): CapabilityDeclaration {
  return {
    description: "test capability",
    pricing: { model: "per_job", amount, currency: "USDC" },
    input_schema: input,
    output_schema: output,
  };
}

export function capability(
  name: string,
  priceAtomic: string,
  inputSchema: object,
  outputSchema: object,
  handler: Capability["handler"],
): Capability {
  return {
    name,
    declaration: declaration(
      String(Number(priceAtomic) / 1e6),
      { text: { type: "string", required: true } },
      { text: { type: "string" } },
    ),
    priceAtomic,
    validateInput: inputAjv.compile(inputSchema),
    validateOutput: outputAjv.compile(outputSchema),
    handler,
  };
}

/** A JSON Schema object of exactly one string field, `text` (required). */
export const TEXT_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: { text: { type: "string" } },
};
const textOutput = TEXT_SCHEMA;

/** Capability `name` at `priceAtomic` units, `text` in and out: `handler` runs, counted in `runs[name]`. */
export function countedCapability(
  name: string,
  priceAtomic: bigint,
  runs: Record<string, number>,
  handler: (input: { text: string }) => Promise<unknown>,
): Capability {
  return capability(name, String(priceAtomic), TEXT_SCHEMA, TEXT_SCHEMA, async (input) => {
    runs[name] = (runs[name] ?? 0) + 1;
    return handler(input as { text: string });
  });
}

/**
 * Agent `name` (1.0.0) selling "echo" (`echo: <text>`) at `priceAtomic` and the capabilities `more` makes,
 * each counting its runs in `runs`.
 */
export function echoAgent(
  name: string,
  description: string,
  priceAtomic: bigint,
  runs: Record<string, number>,
  more: Record<string, Capability> = {},
): AgentDefinition {
  const echo = countedCapability("echo", priceAtomic, runs, async (input) => ({
    text: `echo: ${input.text}`,
  }));
  return { name, version: "1.0.0", description, capabilities: { echo, ...more } };
}

export interface TestAgent extends AgentDefinition {
  /** How many times each handler ran. */
  calls: Record<string, number>;
  /** The last input and ctx each handler saw. */
  seen: Record<string, { input: any; ctx: any }>;
  /** Resolves when the "slow" handler's signal aborts (with the abort reason). */
  aborted: Promise<unknown>;
}

/** makeAgent()'s echo input schema (also cheap, bad_output and throws). */
export const ECHO_INPUT_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: {
    text: {
      type: "string",
      description: "what to echo",
      minLength: 1,
      maxLength: 100,
      examples: ["hi"],
    },
    times: { type: "integer", minimum: 1, maximum: 5, default: 1 },
    mode: { type: "string", enum: ["fast", "slow"], default: "fast" },
    tags: { type: "array", items: { type: "string" }, maxItems: 3 },
    email: { type: "string", format: "email" },
    code: { type: "string", pattern: "^[A-Z]{3}$" },
  },
};

/**
 * echo (0.01 USDC): repeats text; exercises coercion, defaults, enum, arrays, formats.
 * cheap (0.001 USDC): same input, cheaper.
 * slow: waits for input.ms, honouring or ignoring the signal (input.ignoreSignal).
 * bad_output: returns a field the schema does not have.
 * throws: throws the error named in input.text.
 */
export function makeAgent(): TestAgent {
  const calls: Record<string, number> = {};
  const seen: TestAgent["seen"] = {};
  let onAbort!: (reason: unknown) => void;
  const aborted = new Promise<unknown>((r) => (onAbort = r));
  const track = (name: string, input: unknown, ctx: unknown): void => {
    calls[name] = (calls[name] ?? 0) + 1;
    seen[name] = { input, ctx };
  };

  const echo = async (input: any, ctx: any) => {
    track("echo", input, ctx);
    return { text: String(input.text).repeat(input.times) };
  };

  const slowInput = {
    type: "object",
    additionalProperties: false,
    required: ["ms"],
    properties: { ms: { type: "integer" }, ignoreSignal: { type: "boolean", default: false } },
  };

  const agent: TestAgent = {
    name: "test-agent",
    version: "1.2.3",
    description: "runtime tests",
    calls,
    seen,
    aborted,
    capabilities: {
      echo: capability("echo", "10000", ECHO_INPUT_SCHEMA, textOutput, echo),
      cheap: capability("cheap", "1000", ECHO_INPUT_SCHEMA, textOutput, async (input, ctx) => {
        track("cheap", input, ctx);
        return { text: input.text };
      }),
      slow: capability("slow", "10000", slowInput, textOutput, (input, ctx) => {
        track("slow", input, ctx);
        ctx.signal.addEventListener("abort", () => onAbort(ctx.signal.reason));
        return new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve({ text: "done" }), input.ms);
          if (!input.ignoreSignal)
            ctx.signal.addEventListener("abort", () => {
              clearTimeout(timer);
              reject(ctx.signal.reason);
            });
        });
      }),
      bad_output: capability(
        "bad_output",
        "10000",
        ECHO_INPUT_SCHEMA,
        textOutput,
        async (input, ctx) => {
          track("bad_output", input, ctx);
          return { text: input.text, secret: "extra" };
        },
      ),
      throws: capability("throws", "10000", ECHO_INPUT_SCHEMA, textOutput, async (input, ctx) => {
        track("throws", input, ctx);
        switch (input.text) {
          case "validation":
            throw new ValidationError("text: the handler does not like it");
          case "deadline":
            throw new DeadlineError("upstream too slow");
          case "internal":
            throw new InternalError("db password is hunter2");
          case "payment":
            throw new PaymentError("handler says pay more");
          case "capability":
            throw new CapabilityError("handler says no such capability");
          case "unavailable": // 503: a service the handler needs is down (Retry-After 30)
            throw new UnavailableError("the upstream model is down: try again later", 30);
          case "string":
            throw "a thrown string with /etc/secret";
          default:
            throw new TypeError("Cannot read properties of undefined (reading 'secretKey')");
        }
      }),
    },
  };
  return agent;
}

// ---- an agent whose handlers misbehave the ways a hostile tester found ----

const plainTextInput = {
  type: "object",
  additionalProperties: false,
  required: ["text"],
  properties: { text: { type: "string" } },
};
/** `data` is a free-form object: the schema cannot see a BigInt or a cycle inside it. */
const freeFormOutput = {
  type: "object",
  additionalProperties: false,
  required: ["data"],
  properties: { data: { type: "object" } },
};

export type HostileAgent = TestAgent & {
  /** Handler starts, per added capability (echo's are in `calls`). */
  starts: Record<string, number>;
  /** "stubborn" handlers running right now. */
  running: () => number;
  /** Adds a capability (price 0.01, input `{text}`, free-form output `{data}`) that counts its starts. */
  add(name: string, handler: (input: any) => Promise<unknown>): void;
};

/**
 * makeAgent() plus: unserializable (a cycle, or a BigInt with text "bigint"), big (an output of
 * `text` characters), busy (a CPU-bound loop of `text` ms), stubborn (waits `text` ms ignoring ctx.signal).
 */
export function hostileAgent(): HostileAgent {
  const agent = makeAgent() as HostileAgent;
  const starts: Record<string, number> = {};
  let running = 0;
  const add: HostileAgent["add"] = (name, handler) => {
    agent.capabilities[name] = capability(
      name,
      "10000",
      plainTextInput,
      freeFormOutput,
      (input) => {
        starts[name] = (starts[name] ?? 0) + 1;
        return handler(input);
      },
    );
  };
  add("unserializable", async (input) => {
    if (input.text === "bigint") return { data: { n: 10n } };
    const data: Record<string, unknown> = {};
    data.self = data;
    return { data };
  });
  add("big", async (input) => ({ data: { blob: "x".repeat(Number(input.text)) } }));
  add("busy", async (input) => {
    const until = Date.now() + Number(input.text);
    while (Date.now() < until); // CPU-bound: no timer can fire meanwhile
    return { data: {} };
  });
  add("stubborn", async (input) => {
    running++;
    try {
      await new Promise((r) => setTimeout(r, Number(input.text))); // ignores ctx.signal
      return { data: {} };
    } finally {
      running--;
    }
  });
  return Object.assign(agent, { starts, running: () => running, add });
}

export interface Running {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function listen(app: ReturnType<typeof createApp>): Promise<Running> {
  const server = createServer(app);
  return { url: await listenLocal(server), server, close: () => closeServer(server) };
}

/** After each test, closes the server `current()` names (one closed already is left alone). */
export function closeAfterEach(current: () => Server | undefined): void {
  afterEach(() => closeServer(current()));
}

/** createApp + listen, with a hermetic env and a capturing logger unless given. */
export async function startApp(agent: AgentDefinition, options: AppOptions = {}) {
  const logger = captureLogger();
  const app = createApp(agent, { env: {}, logger, ...options });
  return { ...(await listen(app)), logger };
}

/** startApp(makeAgent(), options), `use` on it, then closed whatever happened. */
export async function withApp<T>(
  options: AppOptions,
  use: (app: Running & { logger: ReturnType<typeof captureLogger> }) => Promise<T>,
): Promise<T> {
  const app = await startApp(makeAgent(), options);
  try {
    return await use(app);
  } finally {
    await app.close();
  }
}

/**
 * A Settler that settles nothing on any chain: it records what the pipeline asks of it, so unit
 * tests can check the order of steps. On-chain behaviour is tested in test/chain/.
 */
export interface RecordingSettler extends Settler {
  verify(payment: VerifiedPayment): Promise<void>;
  /** Every call, in order: "verify" before the handler runs, "settle" after it succeeded. */
  calls: Array<{ step: "verify" | "settle"; payment: VerifiedPayment }>;
  /** fail: settle() throws it; delayMs: settle() waits first; refuse: verify() refuses with it. */
  behave: { fail?: unknown; delayMs?: number; refuse?: string };
  settled(): number;
}

export function recordingSettler(): RecordingSettler {
  const calls: RecordingSettler["calls"] = [];
  const behave: RecordingSettler["behave"] = {};
  return {
    calls,
    behave,
    settled: () => calls.filter((c) => c.step === "settle").length,
    async verify(payment) {
      calls.push({ step: "verify", payment });
      if (behave.refuse !== undefined) throw new PaymentError(behave.refuse);
    },
    async settle(payment): Promise<SettlementResult> {
      calls.push({ step: "settle", payment });
      if (behave.delayMs) await new Promise((r) => setTimeout(r, behave.delayMs));
      if (behave.fail !== undefined) throw behave.fail;
      const digest = createHash("sha256").update(payment.authorization.nonce).digest("hex");
      return { transaction: `0x${digest}`, network: payment.network, payer: payment.payer };
    },
  };
}

/** Production options with a fresh recording settler (production needs a settlement route). */
export function production(settler = recordingSettler()) {
  return {
    devMode: false,
    payment: { payTo: PAY_TO, network: "base-sepolia", settler },
  } satisfies AppOptions;
}

export const PRODUCTION: AppOptions = production();

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function job(capability: string, input: unknown, extra: Record<string, unknown> = {}) {
  return {
    service_version: "1.0",
    job_id: `job-${randomBytes(4).toString("hex")}`,
    task: { capability, input },
    deadline: nowSeconds() + 60,
    ...extra,
  };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: json, text };
}

// ---- payments ----

export const BASE_SEPOLIA_DOMAIN = {
  name: "USDC",
  version: "2",
  chainId: 84532,
  verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
} as const;

export const anvilAccount = (): PrivateKeyAccount => privateKeyToAccount(ANVIL_KEY);

export interface AuthorizationParams {
  to?: string;
  value?: string;
  validAfter?: string;
  validBefore?: string;
  nonce?: `0x${string}`;
  domain?: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
}

/** A real EIP-3009 TransferWithAuthorization, signed offline. */
export async function signAuthorization(account: PrivateKeyAccount, p: AuthorizationParams = {}) {
  const authorization = {
    from: account.address,
    to: (p.to ?? PAY_TO) as `0x${string}`,
    value: p.value ?? "10000",
    validAfter: p.validAfter ?? "0",
    validBefore: p.validBefore ?? String(nowSeconds() + 300),
    nonce: p.nonce ?? (`0x${randomBytes(32).toString("hex")}` as `0x${string}`),
  };
  const signature = await account.signTypedData({
    domain: p.domain ?? BASE_SEPOLIA_DOMAIN,
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: "TransferWithAuthorization",
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { signature, authorization };
}

export const b64 = (value: unknown): string =>
  Buffer.from(JSON.stringify(value)).toString("base64");
export const unb64 = (value: string): any =>
  JSON.parse(Buffer.from(value, "base64").toString("utf8"));

/** The x402 receipt (PAYMENT-RESPONSE) of `payer`'s payment settled on `network`, in any transaction. */
export const settledReceipt = (payer: string, network = "eip155:84532") => ({
  success: true,
  transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
  network,
  payer,
});

/** What a v2 client would send: the chosen requirement verbatim + the signed payload. */
export function v2Header(accepted: Record<string, unknown>, payload: unknown): string {
  return b64({
    x402Version: 2,
    resource: { url: "http://example.test/execute" },
    accepted,
    payload,
  });
}

export function v1Header(payload: unknown, network = "base-sepolia"): string {
  return b64({ x402Version: 1, scheme: "exact", network, payload });
}

/** The v2 requirement we offer for base-sepolia at `amount`, as a client would copy it. */
export function offerV2(
  amount = "10000",
): Record<string, unknown> & { extra: { name: string; version: string } } {
  return {
    scheme: "exact",
    network: "eip155:84532",
    amount,
    asset: BASE_SEPOLIA_DOMAIN.verifyingContract,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" },
  };
}

/** A v2 PAYMENT-SIGNATURE value: `account`'s signed authorization (`p`) for our base-sepolia offer. */
export async function paymentSignature(
  account: PrivateKeyAccount,
  p: AuthorizationParams = {},
): Promise<string> {
  return v2Header(offerV2(), await signAuthorization(account, p));
}
