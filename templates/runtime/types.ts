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
   * Aborts when the deadline passes (reason: a DeadlineError). Pass it to fetch() and other
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
export interface VerifiedPayment {
  family?: "evm";
  /** x402 protocol version the client spoke (1 or 2). */
  x402Version: number;
  scheme: "exact";
  /** Network as the client named it (e.g. "base-sepolia" or "eip155:84532"). */
  network: string;
  /** Payer address (authorization.from). */
  payer: `0x${string}`;
  /** Amount authorized, USDC atomic units. */
  amount: string;
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
 * A Solana payment that passed the offer's checks: a transaction the payer signed (a USDC transfer
 * to the payee's token account), its fee payer slot left for the facilitator or this server.
 */
export interface SolanaPayment {
  family: "svm";
  /** 2: PAYMENT-SIGNATURE (or MCP's `_meta`); 1: X-PAYMENT, on a network v1 knows by name. */
  x402Version: 1 | 2;
  scheme: "exact";
  /** The network's CAIP-2 id ("solana:..."). */
  network: string;
  /** Owner of the token account the USDC comes from (base58). */
  payer: string;
  /** Amount offered and accepted, USDC atomic units. */
  amount: string;
  /** The mint (base58). */
  asset: string;
  /** The transaction as sent (base64 wire format). */
  transaction: string;
  /** SHA-256 of the transaction's message, base64 (what @x402/svm keys duplicate settlements by). */
  messageHash: string;
  /** The transaction's recent blockhash (base58): it lands only while that is valid. */
  blockhash: string;
  /** Unix seconds the blockhash must outlive: the job's deadline plus SETTLEMENT_MARGIN_SECONDS. */
  landBy: number;
  /** Unix seconds after which the transaction can no longer land (its blockhash has expired). */
  validBefore: number;
  payload: Record<string, unknown>;
  requirement: Record<string, unknown>;
}

/** A payment that passed verification, on any network family. */
export type PaidPayment = VerifiedPayment | SolanaPayment;
