/**
 * One job call (spec section 4): POST {baseUrl}/execute with a job request, paying when the service asks
 * (within the price guard), and the answer decoded into a typed result or an AgentCallError.
 */
import type { PrivateKeyAccount } from "viem/accounts";
import {
  networkId,
  PAYER_FAMILIES,
  payerFamily,
  rpcUrlVariable,
} from "../../src/caller/payer-families.js";
import type { PayerFamilyId } from "../../src/caller/guard.js";
import { SOLANA_MAX_DEADLINE_SECONDS } from "../../src/caller/guard-svm.js";
import { type AllowedAsset } from "../../src/caller/guard-asset.js";
import { type Payers, sendPaying } from "./pay.js";
import { payerAccount } from "./pay-evm.js";
import { parseUsdc, type PaymentLimit } from "./pay-limit.js";
import { decodeAnswer, environment } from "./answer.js";
import { pollAccepted } from "./poll.js";
import { type FetchLike, retryingFetch } from "./retry.js";

/** What the service declared when this client was generated. */
export interface ServiceInfo {
  name: string;
  /** The protocol version sent as `service_version` (spec section 9). */
  serviceVersion: string;
  /** The URL the client was generated from (the default `baseUrl`), if it was generated from one. */
  baseUrl: string | undefined;
  /** Per capability name: its declared price per job, in decimal USDC. */
  capabilities: Record<string, { price: string }>;
}

export interface AgentClientOptions {
  /** The service's base URL (default: the URL this client was generated from). */
  baseUrl?: string;
  /**
   * Hex private key of the account that pays (default: the X402_PAYER_KEY environment variable). Read only
   * when a service asks for payment, so a free (dev-mode) service needs none. Never logged.
   */
  payerKey?: string;
  /**
   * Solana secret key of the account that pays on Solana networks (default: the SOLANA_PAYER_KEY
   * environment variable): base58 text, or the JSON byte array that solana-keygen writes. Read only when
   * a Solana offer is taken; the Solana packages (@x402/svm, @solana/kit, @solana-program/token) are
   * imported only then. Never logged.
   */
  solanaPayerKey?: string;
  /**
   * The offered network to pay on: a name ("base", "base-sepolia", "solana", "solana-devnet", ...) or a
   * CAIP-2 id. Default: the first network the service offers that this client holds a key for (Solana
   * only for jobs due within 30 s). A service that does not offer it is refused before anything is signed.
   */
  network?: string;
  /**
   * RPC endpoints of Solana networks, keyed by name or CAIP-2 id (the Solana payer reads the mint and a
   * recent blockhash). Default: the X402_RPC_URL_<NET> environment variable (X402_RPC_URL_SOLANA_DEVNET,
   * X402_RPC_URL_SOLANA), else the network's public endpoint.
   */
  rpcUrls?: Record<string, string>;
  /**
   * The most one job may cost, in decimal USDC ("0.05"). A payment above it is refused before anything is
   * signed. Payments above a capability's declared price are always refused, whatever this says.
   */
  maxPrice?: string;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: FetchLike;
  /**
   * Seconds from the call to the job's deadline (default 300; 30 when this client pays on Solana up front:
   * `network` is a Solana one, or only a Solana key is held). A Solana payment lives about 60 s: a job
   * paid on Solana must be due within 30 s, and a longer deadline is refused before anything is signed.
   */
  deadlineSeconds?: number;
  /** Re-sends of the identical request after a network failure or a 429/502/503/504 (default 3). */
  retries?: number;
  /** Tokens other than the well-known USDC deployments that may be paid with, e.g. a test USDC. */
  allowedAssets?: AllowedAsset[];
}

export interface CallOptions {
  /** The job's id (default: a random UUID). Sent as `job_id` and echoed in the result. */
  jobId?: string;
  /** When the job must be done: a Date, or a Unix timestamp in seconds (default: deadlineSeconds from now). */
  deadline?: Date | number;
  /** Aborts the call (waiting, retrying, polling, or the request itself). */
  signal?: AbortSignal;
  /**
   * Run the job asynchronously, for jobs longer than a proxy waits (`Prefer: respond-async`): the service
   * answers 202 once it checked the job and its payment, and this polls the job until its answer arrives
   * (1 s, growing to 15 s, honouring Retry-After; until the deadline plus a minute), then returns it as a
   * synchronous call does. The payment is settled only when the job completed. A service without async
   * jobs answers at once. EVM payments only (a Solana payment cannot wait for a queued job).
   */
  async?: boolean;
}

/** The receipt of a settled payment (the service's PAYMENT-RESPONSE or X-PAYMENT-RESPONSE header). */
export interface PaymentReceipt {
  /** The settlement transaction hash. */
  transaction: string;
  /** The network it was settled on, e.g. "eip155:84532" or "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1". */
  network: string;
  /** The address that paid (the payer of the signed authorization, or the Solana transfer's authority). */
  payer: string;
  /** Decimal USDC this client signed for the job (e.g. "0.01"): what its authorization says, never what the service claims. */
  amount: string;
}

export interface JobResult<Output> {
  jobId: string;
  output: Output;
  /** When the service completed the job: Unix timestamp in seconds. */
  completedAt: number;
  /** Present when the job was paid for. */
  payment?: PaymentReceipt;
}

/** Runs one job of `capability`; the generated methods give `input` and the result their types. */
export type CallCapability = <Output>(
  capability: string,
  input: unknown,
  options?: CallOptions,
) => Promise<JobResult<Output>>;

const DEFAULT_DEADLINE_SECONDS = 300;
const DEFAULT_RETRIES = 3;
/** How long after the deadline to keep asking while a dropped first attempt still holds the payment. */
const IN_USE_GRACE_MS = 60_000;

/** Checks the options once; throws TypeError for a wrong one. */
export function createCaller(service: ServiceInfo, options: AgentClientOptions): CallCapability {
  const baseUrl = checkBaseUrl(options.baseUrl ?? service.baseUrl);
  const maxPrice = options.maxPrice === undefined ? undefined : parseUsdc(options.maxPrice);
  if (options.maxPrice !== undefined && maxPrice === undefined)
    throw new TypeError(
      `maxPrice ${JSON.stringify(options.maxPrice)} is not a decimal USDC amount such as "0.05" (at most 6 decimals)`,
    );
  const network = options.network;
  const family = network === undefined ? undefined : payerFamily(network);
  if (network !== undefined && family === undefined)
    throw new TypeError(
      `network ${JSON.stringify(network)} is not a network this client knows: give a name such as "base" or "solana-devnet", or a CAIP-2 id (eip155:<chainId>, solana:<genesis hash prefix>)`,
    );
  const evmKey = options.payerKey ?? environment("X402_PAYER_KEY");
  const solanaKey = options.solanaPayerKey ?? environment("SOLANA_PAYER_KEY");
  // The family chosen up front (by `network`, or by holding only its key): a default deadline it can cover.
  const keys: Record<PayerFamilyId, boolean> = { evm: !!evmKey, svm: !!solanaKey };
  const held = PAYER_FAMILIES.filter((f) => keys[f.id]);
  const upFront = family ?? (held.length === 1 ? held[0] : undefined);
  const deadlineSeconds =
    options.deadlineSeconds ?? upFront?.maxDeadlineSeconds ?? DEFAULT_DEADLINE_SECONDS;
  if (!Number.isFinite(deadlineSeconds) || deadlineSeconds <= 0)
    throw new TypeError(`deadlineSeconds must be a positive number, not ${deadlineSeconds}`);
  const max = family?.maxDeadlineSeconds;
  if (max !== undefined && deadlineSeconds > max)
    throw new TypeError(
      `deadlineSeconds ${deadlineSeconds} is longer than a Solana payment can cover: a job paid on Solana must be due within ${SOLANA_MAX_DEADLINE_SECONDS} s (its transaction lives about 60 s, settlement included); choose an EVM network with \`network\`, or a shorter deadline`,
    );
  const rpcUrls = new Map(
    Object.entries(options.rpcUrls ?? {}).map(([name, url]) => [networkId(name), url]),
  );
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!Number.isInteger(retries) || retries < 0)
    throw new TypeError(`retries must be a whole number >= 0, not ${retries}`);
  const fetchImpl: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const allowedAssets = options.allowedAssets ?? [];

  let account: PrivateKeyAccount | undefined;
  const payer = (capability: string, jobId: string) =>
    (account ??= payerAccount(evmKey, capability, jobId));

  return async <Output>(capability: string, input: unknown, call: CallOptions = {}) => {
    const jobId = call.jobId ?? globalThis.crypto.randomUUID();
    const deadline = deadlineOf(call.deadline, deadlineSeconds);
    const limit = jobLimit(service, capability, jobId, maxPrice, allowedAssets);
    const send = retryingFetch(fetchImpl, {
      retries,
      waitUntilMs: deadline * 1000 + IN_USE_GRACE_MS,
      signal: call.signal,
      capability,
      jobId,
    });
    const init = jobRequest(service, { jobId, capability, input, deadline, async: !!call.async });
    const payers: Payers = {
      network,
      evm: { held: !!evmKey, account: () => payer(capability, jobId) },
      solana: {
        key: solanaKey || undefined,
        source: options.solanaPayerKey !== undefined ? "solanaPayerKey" : "SOLANA_PAYER_KEY",
      },
      rpcUrl: (id) => rpcUrls.get(networkId(id)) ?? (environment(rpcUrlVariable(id)) || undefined),
      deadlineSeconds: deadline - Date.now() / 1000,
      queued: !!call.async,
    };
    const url = `${baseUrl}/execute`;
    const { response, signed, resend } = await sendPaying(send, url, init, limit, payers);
    // Queued (202): its answer is polled; a lost 202 was re-sent with the same payment (the same job), and
    // so is the request once if a poll answers 404 (the service lost the job).
    const answer =
      call.async && response.status === 202
        ? await pollAccepted(response, {
            url,
            send,
            untilMs: deadline * 1000 + IN_USE_GRACE_MS,
            signal: call.signal,
            capability,
            jobId,
            resend,
          })
        : response;
    return decodeAnswer<Output>(answer, url, capability, jobId, signed);
  };
}

/**
 * What one job of `capability` may pay: the price the service declared when this client was generated, or
 * maxPrice when that is lower. Throws TypeError for a capability with no declared price.
 */
function jobLimit(
  service: ServiceInfo,
  capability: string,
  jobId: string,
  maxPrice: bigint | undefined,
  allowedAssets: readonly AllowedAsset[],
): PaymentLimit {
  const declared = Object.prototype.hasOwnProperty.call(service.capabilities, capability)
    ? service.capabilities[capability]
    : undefined;
  const declaredAtomic = declared ? parseUsdc(declared.price) : undefined;
  if (declaredAtomic === undefined)
    throw new TypeError(`${service.name} declared no price for capability "${capability}"`);
  const byMaxPrice = maxPrice !== undefined && maxPrice < declaredAtomic;
  return {
    capability,
    jobId,
    maxAtomic: byMaxPrice ? maxPrice : declaredAtomic,
    limitSource: byMaxPrice
      ? "maxPrice"
      : `the price ${service.name} declared for ${capability} when this client was generated; regenerate the client to accept a new price`,
    allowedAssets,
  };
}

/** The POST /execute request of one job (spec section 4); `async` asks for a 202 to poll (RFC 7240). */
function jobRequest(
  service: ServiceInfo,
  job: { jobId: string; capability: string; input: unknown; deadline: number; async: boolean },
): RequestInit {
  return {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      ...(job.async ? { prefer: "respond-async" } : {}),
    },
    body: JSON.stringify({
      service_version: service.serviceVersion,
      job_id: job.jobId,
      task: { capability: job.capability, input: job.input },
      deadline: job.deadline,
    }),
  };
}

function checkBaseUrl(baseUrl: string | undefined): string {
  if (baseUrl === undefined)
    throw new TypeError("baseUrl is required: this client was not generated from a service URL");
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new TypeError(`baseUrl ${JSON.stringify(baseUrl)} is not an http(s) URL`);
  return baseUrl.replace(/\/+$/, "");
}

function deadlineOf(deadline: Date | number | undefined, defaultSeconds: number): number {
  if (deadline === undefined) return Math.floor(Date.now() / 1000 + defaultSeconds);
  const seconds = deadline instanceof Date ? Math.floor(deadline.getTime() / 1000) : deadline;
  if (!Number.isFinite(seconds))
    throw new TypeError(`deadline ${String(deadline)} is not a Date or a Unix time in seconds`);
  return seconds;
}
