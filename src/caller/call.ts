/**
 * `create-agent call`: one job on one capability of any running service (spec section 4), paid with the
 * official x402 client when the service asks for payment.
 *
 * Order, so that nothing is sent, signed or paid before it should be:
 *   1. read the service (GET /about) and find the capability;
 *   2. build the input and check it locally with the server's own Ajv rules: a bad input is never sent;
 *   3. refuse a declared price above --max-price: nothing is sent;
 *   4. POST /execute without payment: a dev-mode server answers 200 (nothing paid);
 *   5. on 402, choose the network (--network, else the first offered one the caller holds a key for:
 *      X402_PAYER_KEY on EVM, SOLANA_PAYER_KEY on Solana), refuse an asked amount above --max-price or
 *      above the declared price (nothing signed), then need the key and the x402 client, and only then
 *      sign ONE payment and send the identical request with it. Lost connections re-send that same
 *      request (retry.ts), never a new signature, so the server charges the job once (call-pay.ts).
 *
 * A Solana payment is a transaction that dies with its blockhash (about 60 s): a job paid on Solana must
 * be due within SOLANA_MAX_DEADLINE_SECONDS, its default deadline when Solana is the network chosen up
 * front (by --network, or by holding only a Solana key).
 */
import { randomUUID } from "node:crypto";
import { amountProblem, didYouMean, toAtomicAmount } from "../manifest/index.js";
import { type CallResult, completed, errorAnswer } from "./call-answer.js";
import { guarded, solanaDeadlineProblem } from "./call-offers.js";
import { payJob } from "./call-pay.js";
import { pollJob } from "./call-poll.js";
import { CallError } from "./errors.js";
import { PAYER_FAMILIES, PAYER_NETWORKS, payerFamily } from "./payer-families.js";
import { offersOf402, type PayerFamily, type PayerFamilyId } from "./guard.js";
import { buildInput, inputProblems, readInputFile } from "./input.js";
import { PAYER_KEY_VARIABLE } from "./payment.js";
import { retryingFetch, RETRY_DELAYS_MS } from "./retry.js";
import {
  readService,
  ServiceError,
  type ServiceCapability,
  type ServiceDescription,
} from "./service.js";
import { SOLANA_PAYER_KEY_VARIABLE } from "./solana-payment.js";

export type { CallResult } from "./call-answer.js";

export const DEFAULT_DEADLINE_SECONDS = 300;
/** The runtime's jobs/request.ts MAX_JOB_ID_LENGTH: the longest job_id, in characters (code points). */
export const MAX_JOB_ID_LENGTH = 256;
/** How long after the deadline a paid job may still be settling on the server (waiting out "in use"). */
const SETTLEMENT_GRACE_MS = 60_000;
/** Added to the time until the deadline for one attempt's answer (settlement, a slow network). */
const ANSWER_GRACE_MS = 120_000;

export interface CallParams {
  /** The service: its base URL or any of its URLs (/about, /execute). */
  url: string;
  capability: string;
  /** `--input name=value` pairs. */
  inputPairs?: readonly string[];
  /** `--json <file>`: the base input object (`-` = stdin). */
  inputFile?: string;
  /** The base input object itself (`create-agent smoke --pay`: the capability's example input). */
  input?: Record<string, unknown>;
  /** Decimal USDC: the most this call may pay. */
  maxPrice?: string;
  jobId?: string;
  deadlineSeconds?: number;
  /** `--network`: the offered network to pay on (a name such as "solana-devnet", or a CAIP-2 id). */
  network?: string;
  /**
   * `--asset`: tokens (contract or mint addresses) the user allows paying in besides the network's USDC,
   * the only token paid otherwise.
   */
  assets?: readonly string[];
  env?: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadableStream;
  /** Notes for the user (stderr): dev mode, retries. */
  note?: (line: string) => void;
  fetchImpl?: typeof fetch;
  retryDelaysMs?: readonly number[];
  /** Loads the x402 client packages (tests replace it to simulate a light install). */
  importer?: (specifier: string) => Promise<unknown>;
  /**
   * `--async`: ask for an asynchronous job (`Prefer: respond-async`); a 202 is polled at its Location
   * until the job's answer arrives (call-poll.ts). A service that answers at once is answered as usual.
   */
  async?: boolean;
}

export async function callCapability(params: CallParams): Promise<CallResult> {
  const env = params.env ?? process.env;
  const note = params.note ?? (() => {});
  const fetchImpl = params.fetchImpl ?? fetch;

  // Everything that needs no network first: a typo costs nothing.
  const { deadlineSeconds, jobId } = checkUsage(params, env);
  const base =
    params.input ?? (params.inputFile ? await readInputFile(params.inputFile, params.stdin) : {});

  // 1. The service and the capability.
  const service = await read(params.url, fetchImpl);
  const baseUrl = service.baseUrl!;
  const capability = findCapability(service, params.capability);

  // 2. The input, checked here exactly as the server will check it; 3. the price against --max-price.
  const { input, limit } = checkJob(capability, params, base);

  // 4. The job, without payment.
  const executeUrl = `${baseUrl}/execute`;
  const job = { service, capability, input, jobId, deadlineSeconds };
  const { init, send, pollUntilMs } = jobRequest(job, params, fetchImpl, note);
  const queued = params.async ? { untilMs: pollUntilMs, note, fetchImpl } : undefined;
  const first = await post(send, executeUrl, init);
  const firstText = await first.text();
  const free = (text: string): CallResult => {
    note(
      `${baseUrl} asked for no payment (a service in dev mode): the job ran and nothing was paid`,
    );
    return { ...completed(text, executeUrl, jobId, capability), payment: null };
  };
  if (queued && first.status === 202) {
    // Dev mode, asynchronously: the unpaid job was queued; its answer is polled, and never paid.
    const accepted = { headers: first.headers, text: firstText };
    const polled = await pollJob({ ...queued, executeUrl, accepted });
    if (polled.status !== 200) throw errorAnswer(polled.status, polled.text, executeUrl);
    return free(polled.text);
  }
  if (first.status === 200) return free(firstText);
  if (first.status !== 402) throw errorAnswer(first.status, firstText, executeUrl);
  const offers = guarded(() => offersOf402(first.headers, firstText), executeUrl);
  if (!offers) throw errorAnswer(first.status, firstText, executeUrl);

  // 5. The network, what it asks against what the caller allows; then pay (call-pay.ts).
  return await payJob({
    env,
    importer: params.importer,
    network: params.network,
    assets: params.assets,
    maxPrice: params.maxPrice,
    limit,
    capability,
    deadlineSeconds,
    jobId,
    executeUrl,
    init,
    send,
    first,
    firstText,
    offers,
    ...(queued ? { queued } : {}),
  });
}

/**
 * 2. The input, checked here exactly as the server will check it. 3. The declared price against
 * --max-price, in atomic units (the limit, also returned). Nothing is sent when either fails.
 */
function checkJob(
  capability: ServiceCapability,
  params: CallParams,
  base: Record<string, unknown>,
): { input: unknown; limit: bigint | undefined } {
  const input = buildInput(capability, params.inputPairs ?? [], base);
  const problems = inputProblems(capability, input);
  if (problems.length > 0)
    throw new CallError(
      "validation",
      `the input does not match the input schema of "${capability.name}"; nothing was sent:`,
      { problems, error: problems.join("; ") },
    );

  const declared = BigInt(capability.priceAtomic);
  const limit = params.maxPrice === undefined ? undefined : BigInt(toAtomicAmount(params.maxPrice));
  if (limit !== undefined && declared > limit)
    throw new CallError(
      "price",
      `"${capability.name}" costs ${capability.price} USDC per job, more than --max-price ${params.maxPrice}; nothing was sent`,
    );
  return { input, limit };
}

/** The options checked before anything is sent: --max-price, --network, the deadline, the job id. */
function checkUsage(
  params: CallParams,
  env: NodeJS.ProcessEnv,
): { deadlineSeconds: number; jobId: string } {
  if (params.maxPrice !== undefined) {
    const problem = amountProblem(params.maxPrice);
    if (problem) throw new CallError("usage", `--max-price: ${problem}`);
  }
  const wanted = params.network === undefined ? undefined : wantedNetwork(params.network);
  // The family chosen up front (by --network, or by holding only its key): a deadline it can cover.
  const keys: Record<PayerFamilyId, boolean> = {
    evm: !!env[PAYER_KEY_VARIABLE],
    svm: !!env[SOLANA_PAYER_KEY_VARIABLE],
  };
  const held = PAYER_FAMILIES.filter((f) => keys[f.id]);
  const upFront = wanted ?? (held.length === 1 ? held[0] : undefined);
  const deadlineSeconds =
    params.deadlineSeconds ?? upFront?.maxDeadlineSeconds ?? DEFAULT_DEADLINE_SECONDS;
  if (!Number.isSafeInteger(deadlineSeconds) || deadlineSeconds < 1)
    throw new CallError(
      "usage",
      `--deadline-seconds: "${params.deadlineSeconds}" is not a whole number of seconds above 0`,
    );
  const max = wanted?.maxDeadlineSeconds;
  if (max !== undefined && deadlineSeconds > max)
    throw new CallError("usage", `${solanaDeadlineProblem(deadlineSeconds)}; nothing was sent`);
  const jobId = params.jobId ?? `call-${randomUUID()}`;
  // Characters as the service's OpenAPI document (JobId maxLength) counts them: code points.
  const jobIdLength = [...jobId].length;
  if (jobIdLength === 0 || jobIdLength > MAX_JOB_ID_LENGTH)
    throw new CallError("usage", `--job-id: must be 1 to ${MAX_JOB_ID_LENGTH} characters`);
  return { deadlineSeconds, jobId };
}

/**
 * The job request (sent as it is, then again with the payment) and the retrying fetch it goes through,
 * which resends it while a paid job may still be settling, never past its deadline plus the grace.
 */
function jobRequest(
  job: {
    service: ServiceDescription;
    capability: ServiceCapability;
    input: unknown;
    jobId: string;
    deadlineSeconds: number;
  },
  params: CallParams,
  fetchImpl: typeof fetch,
  note: (line: string) => void,
): { init: RequestInit; send: typeof fetch; pollUntilMs: number } {
  const deadline = Math.floor(Date.now() / 1000) + job.deadlineSeconds;
  const body = JSON.stringify({
    service_version: job.service.serviceVersion,
    job_id: job.jobId,
    task: { capability: job.capability.name, input: job.input },
    deadline,
  });
  const init: RequestInit = {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      // RFC 7240: a service with async jobs answers 202 and a Location to poll; others ignore it.
      ...(params.async ? { prefer: "respond-async" } : {}),
    },
    body,
  };
  const send = retryingFetch({
    fetchImpl,
    delaysMs: params.retryDelaysMs ?? RETRY_DELAYS_MS,
    inUseUntilMs: deadline * 1000 + SETTLEMENT_GRACE_MS,
    attemptTimeoutMs: job.deadlineSeconds * 1000 + ANSWER_GRACE_MS,
    onRetry: note,
  });
  return { init, send, pollUntilMs: deadline * 1000 + SETTLEMENT_GRACE_MS };
}

/** `--network`, checked: a known name or a CAIP-2 id of a network a payer family pays on. */
function wantedNetwork(network: string): PayerFamily {
  const family = payerFamily(network);
  if (!family)
    throw new CallError(
      "usage",
      `--network: "${network}" is not a network this payer knows: give a name (${Object.keys(PAYER_NETWORKS).join(", ")}) or a CAIP-2 id (eip155:<chainId>, solana:<genesis hash prefix>)`,
    );
  return family;
}

async function read(url: string, fetchImpl: typeof fetch): Promise<ServiceDescription> {
  try {
    return await readService(url, fetchImpl);
  } catch (error) {
    if (error instanceof ServiceError)
      throw new CallError(
        /^cannot reach /.test(error.message) ? "network" : "service",
        error.message,
      );
    throw error;
  }
}

function findCapability(service: ServiceDescription, name: string): ServiceCapability {
  const found = service.capabilities.find((c) => c.name === name);
  if (found) return found;
  const names = service.capabilities.map((c) => c.name);
  throw new CallError(
    "capability",
    `${service.name} (${service.baseUrl}) has no capability "${name}" (it has: ${names.join(", ") || "none"})${didYouMean(name, names)}`,
  );
}

async function post(send: typeof fetch, url: string, init: RequestInit): Promise<Response> {
  try {
    return await send(url, init);
  } catch (error) {
    if (error instanceof CallError) throw error;
    throw new CallError(
      "network",
      `POST ${url} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
