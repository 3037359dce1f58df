// Shared by test/cli/call.test.ts and test/chain/call.test.ts: a test agent whose GET /about declares
// exactly the schemas its validators use, a server that counts what reaches it, and the real CLI.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { execa } from "execa";
import { expect } from "vitest";
import { toJsonSchema } from "../../src/manifest/index.js";
import { inputAjv, outputAjv } from "../../templates/runtime/ajv.js";
import { createApp } from "../../templates/runtime/app.js";
import { UnavailableError, ValidationError } from "../../templates/runtime/errors.js";
import type { AppOptions } from "../../templates/runtime/config.js";
import type {
  AgentDefinition,
  Capability,
  CapabilityDeclaration,
  Handler,
} from "../../templates/runtime/types.js";
import { captureLogger } from "../runtime/helpers.js";
import { closeServer, listenLocal } from "../runtime/servers.js";

export const CLI = join(import.meta.dirname, "../../bin/create-agent.js");

function capability(
  name: string,
  declaration: CapabilityDeclaration,
  handler: Handler<any, any>,
  /** What the server asks in its 402, when it differs from what /about declares (a dishonest server). */
  askedAtomic?: string,
): Capability {
  const [whole = "0", fraction = ""] = declaration.pricing.amount.split(".");
  return {
    name,
    declaration,
    priceAtomic: askedAtomic ?? String(BigInt(whole + fraction.padEnd(6, "0"))),
    validateInput: inputAjv.compile(toJsonSchema(declaration.input_schema, "input")),
    validateOutput: outputAjv.compile(toJsonSchema(declaration.output_schema, "output")),
    handler,
  };
}

export interface CallAgent extends AgentDefinition {
  /** Every input each handler received, in order. */
  seen: Record<string, unknown[]>;
}

/**
 * echo (0.01 USDC): message (required), times, loud, tags, meta -> { text }.
 * greet (0.002 USDC): name -> { greeting }.
 * refuse (0.01 USDC): the handler throws a ValidationError (an error answer from the service).
 * greedy: /about declares 0.01 USDC but the 402 asks 0.02 (only with `greedy: true`).
 * slow: echo after `slowMs` ms (only with `slowMs`).
 * unavailable: the handler throws an UnavailableError, a 503 (only with `unavailable: true`).
 */
export function callAgent(
  options: { greedy?: boolean; slowMs?: number; unavailable?: boolean } = {},
): CallAgent {
  const seen: Record<string, unknown[]> = {};
  const track = (name: string, input: unknown) => (seen[name] ??= []).push(input);
  const price = (amount: string) => ({
    model: "per_job" as const,
    amount,
    currency: "USDC" as const,
  });
  const echoDeclaration: CapabilityDeclaration = {
    description: "repeats a message",
    pricing: price("0.01"),
    input_schema: {
      message: { type: "string", required: true, minLength: 1 },
      times: { type: "integer", minimum: 1, maximum: 5, default: 1 },
      loud: { type: "boolean" },
      tags: { type: "array", items: { type: "string" }, maxItems: 3 },
      meta: { type: "object" },
    },
    output_schema: { text: { type: "string" } },
  };
  const echo: Handler<any, any> = async (input) => {
    track("echo", input);
    const text = String(input.message).repeat(input.times);
    return { text: input.loud ? text.toUpperCase() : text };
  };
  const capabilities: Record<string, Capability> = {
    echo: capability("echo", echoDeclaration, echo),
    greet: capability(
      "greet",
      {
        pricing: price("0.002"),
        input_schema: { name: { type: "string", required: true } },
        output_schema: { greeting: { type: "string" } },
      },
      async (input) => {
        track("greet", input);
        return { greeting: `hello ${input.name}` };
      },
    ),
    refuse: capability("refuse", echoDeclaration, async (input) => {
      track("refuse", input);
      throw new ValidationError("message: the handler does not like it");
    }),
  };
  if (options.greedy) capabilities.greedy = capability("greedy", echoDeclaration, echo, "20000");
  if (options.unavailable)
    capabilities.unavailable = capability("unavailable", echoDeclaration, async (input) => {
      track("unavailable", input);
      throw new UnavailableError("the upstream model is down: try again later", 30);
    });
  const slowMs = options.slowMs;
  if (slowMs !== undefined)
    capabilities.slow = capability("slow", echoDeclaration, async (input) => {
      track("slow", input);
      await new Promise((resolve) => setTimeout(resolve, slowMs));
      return { text: String(input.message).repeat(input.times) };
    });
  return { name: "call-test-agent", version: "1.0.0", capabilities, seen };
}

export interface SeenRequest {
  method: string;
  path: string;
  paid: boolean;
}

export interface CountingServer {
  url: string;
  /** Every request that reached the server. */
  requests: SeenRequest[];
  /** Requests to POST /execute, and those that carried a payment header. */
  executes(): number;
  paidExecutes(): number;
  logger: ReturnType<typeof captureLogger>;
  close(): Promise<void>;
}

const paymentHeader = (req: IncomingMessage) =>
  req.headers["payment-signature"] !== undefined || req.headers["x-payment"] !== undefined;

/** createApp(agent) on 127.0.0.1:0 behind a counter of every request that reaches it. */
export async function startCounted(
  agent: AgentDefinition,
  options: AppOptions = { devMode: true },
  { v1Only = false }: { v1Only?: boolean } = {},
): Promise<CountingServer> {
  const logger = captureLogger();
  const app = createApp(agent, { env: {}, logger, ...options });
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", path: req.url ?? "", paid: paymentHeader(req) });
    if (v1Only) {
      // An x402 v1 server: its 402 says how to pay in the body only (no PAYMENT-REQUIRED header).
      const setHeader = res.setHeader.bind(res);
      res.setHeader = (name, value) =>
        name.toLowerCase() === "payment-required" ? res : setHeader(name, value);
    }
    app(req, res);
  });
  const url = await listenLocal(server);
  const isExecute = (r: SeenRequest) => r.method === "POST" && r.path.startsWith("/execute");
  return {
    url,
    requests,
    executes: () => requests.filter(isExecute).length,
    paidExecutes: () => requests.filter((r) => isExecute(r) && r.paid).length,
    logger,
    close: () => closeServer(server),
  };
}

/**
 * The real CLI, `create-agent call ...`, with only the environment given (plus PATH and HOME):
 * no AGENT_URL, PORT or X402_PAYER_KEY leaks in from the test runner.
 */
export function runCall(args: string[], options: CliRunOptions = {}) {
  return runCli("call", args, options);
}

export interface CliRunOptions {
  env?: Record<string, string>;
  cwd?: string;
  input?: string;
  cli?: string;
}

/** The real CLI's `command` (call, smoke), with only the environment given, as runCall. */
export function runCli(command: string, args: string[], options: CliRunOptions = {}) {
  return execa("node", [options.cli ?? CLI, command, ...args], {
    cwd: options.cwd,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
    ...(options.input !== undefined ? { input: options.input } : { stdin: "ignore" as const }),
    timeout: 60_000,
  });
}

/**
 * `create-agent call <server> ...args` refused before sending a job: exit 1 and no POST /execute reached
 * `server`. Its result, for what it said.
 */
export async function refusedBeforeSending(
  server: CountingServer,
  args: string[],
  options: Parameters<typeof runCall>[1] = {},
) {
  const before = server.executes();
  const r = await runCall([server.url, ...args], options);
  expect(r.exitCode).toBe(1);
  expect(server.executes()).toBe(before);
  return r;
}

/**
 * A plain service for `call` to meet: GET /about declares one capability `name` (one string input `text`) at
 * `amount` USDC; every other request is answered by `answer` (status and JSON body; headers optional).
 * Its URL, the POSTs it received, and close().
 */
export async function plainService(
  name: string,
  amount: string,
  answer: (req: IncomingMessage) => {
    status: number;
    body: unknown;
    headers?: Record<string, string>;
  },
) {
  const posts: string[] = [];
  const about = {
    service_version: "1.0",
    name: "plain",
    capabilities: {
      [name]: {
        pricing: { model: "per_job", amount, currency: "USDC" },
        input_schema: { text: { type: "string", required: true } },
        output_schema: { text: { type: "string" } },
      },
    },
  };
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    if (req.method === "POST") posts.push(req.url ?? "");
    const { status, body, headers } =
      req.method === "GET" && req.url === "/about" ? { status: 200, body: about } : answer(req);
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  });
  const url = await listenLocal(server);
  return { url, posts, close: () => closeServer(server) };
}
