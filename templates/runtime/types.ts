/**
 * Types shared by the runtime, the generated registry and your handlers.
 * Part of your project: edit freely.
 */
import type { ValidateFunction } from "ajv";
import type { DiscoveryData } from "./discovery/data.js";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

/** What a handler receives besides its input. */
export interface HandlerContext {
  /** The caller's job_id, echoed in the result. */
  jobId: string;
  /** The capability being run. */
  capability: string;
  /** The job's deadline, Unix seconds (from the request). */
  deadline: number;
  /**
   * Aborts when the deadline passes (reason: a DeadlineError), or when the caller cancels the job
   * (A2A CancelTask; reason: an UnavailableError). Pass it to fetch() and other
   * cancellable work. Made when first read (a getter: `{ ...ctx }` leaves it out; pass ctx itself).
   */
  readonly signal: AbortSignal;
  /** Logger tagged with the job id and capability. */
  logger: Logger;
  /** The verified payment, absent in dev mode. */
  payment?: PaidPayment;
}

export type Handler<I, O> = (input: I, ctx: HandlerContext) => Promise<O>;

/** A field descriptor as declared in GET /about (spec 2.2). */
export interface FieldDescriptor {
  type: "string" | "number" | "integer" | "boolean" | "array" | "object";
  required?: boolean;
  description?: string;
  [keyword: string]: unknown;
}

/** One capability entry of GET /about: the manifest entry, verbatim. */
export interface CapabilityDeclaration {
  description?: string;
  pricing: { model: "per_job"; amount: string; currency: "USDC" };
  input_schema: Record<string, FieldDescriptor>;
  output_schema: Record<string, FieldDescriptor>;
}

/** A capability as the app runs it: declaration, price, validators and handler. */
export interface Capability<I = any, O = any> {
  name: string;
  declaration: CapabilityDeclaration;
  /** Price in USDC atomic units (6 decimals), e.g. "10000" for "0.01". */
  priceAtomic: string;
  /** Validates and coerces the input in place (Ajv, coerceTypes + useDefaults). */
  validateInput: ValidateFunction<I>;
  /** Validates the output without changing it. */
  validateOutput: ValidateFunction<O>;
  handler: Handler<I, O>;
}

/** Everything the app needs to know about the agent; src/generated/registry.ts exports one. */
export interface AgentDefinition {
  name: string;
  version: string;
  description?: string;
  capabilities: Record<string, Capability>;
  /**
   * What the discovery documents (agent card, OpenAPI, llms.txt) and the 402's Bazaar extension are
   * built from (src/generated/discovery.ts). Absent in registries generated before them: those
   * documents are 404s and 402s carry no extension.
   */
  discovery?: DiscoveryData;
  /**
   * The same data, imported when first needed (what registries generate: the data is large, and a
   * service should start as fast with 100 capabilities as with one). Production loads it before it
   * listens; dev mode on the first discovery request. `discovery`, when set, wins.
   */
  loadDiscovery?: () => Promise<DiscoveryData>;
}

/** A payment authorization that passed verification (EVM: EIP-3009's transferWithAuthorization). */
export interface VerifiedPayment extends PaidPayment {
  family: "evm";
  /** x402 protocol version the client spoke (1 or 2). */
  x402Version: number;
  scheme: "exact";
  /** Network as the client named it (e.g. "base-sepolia" or "eip155:84532"). */
  network: string;
  /** Payer address (authorization.from), EIP-55 checksummed. */
  payer: `0x${string}`;
  /** Amount authorized, USDC atomic units. */
  amount: string;
  /** authorization.validBefore as a number (Unix seconds). */
  validBefore: number;
  /** The EIP-3009 authorization, verbatim (decimal strings), and its signature. */
  authorization: {
    from: `0x${string}`;
    to: `0x${string}`;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: `0x${string}`;
  };
  signature: `0x${string}`;
  /** Chain id and token contract the authorization is for (our network's). */
  chainId: number;
  asset: `0x${string}`;
  /**
   * The decoded payment header as a facilitator is sent it: what the client sent, with the network
   * spelled as the client's x402 version spells it (either name of our network is accepted here).
   */
  payload: Record<string, unknown>;
  /** The requirement we offered for this job, in the client's x402 version's shape (sent to a facilitator). */
  requirement: Record<string, unknown>;
}

/**
 * A payment that passed verification, on any network family: the head every payment carries, so
 * jobs/ and ledger/ never look inside one (its family's scheme does: VerifiedPayment for EVM,
 * payments/svm/payment.ts for Solana). Its replay key is its scheme's replayKey() (the gate's).
 */
export interface PaidPayment {
  /** The id of its network family (features.ts's FAMILIES). */
  family: string;
  /** x402 protocol version the client spoke (1 or 2). */
  x402Version: number;
  /** Network as the client named it. */
  network: string;
  /** Who pays, one spelling per payer (EVM: EIP-55 checksummed 0x address; Solana: base58). */
  payer: string;
  /** Amount, USDC atomic units. */
  amount: string;
  /** Unix seconds after which the payment can no longer be charged (EVM: validBefore; Solana: its blockhash's end). */
  validBefore: number;
  /** What reconcile() needs besides the transaction, kept with an unconfirmed settlement (Solana: the blockhash). */
  blockhash?: string;
  /** The decoded payment as a facilitator is sent it. */
  payload: Record<string, unknown>;
  /** The requirement we offered for this job, in the client's x402 version's shape. */
  requirement: Record<string, unknown>;
}
