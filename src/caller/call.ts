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
 * With --mcp, steps 4 and 5 send the same job as an MCP tools/call to /mcp (the x402 v2 MCP transport,
 * mcp-send.ts), through the same retrying fetch, payment and guards; only the wire differs.
 *
 * A Solana payment is a transaction that dies with its blockhash (about 60 s): a job paid on Solana must
 * be due within SOLANA_MAX_DEADLINE_SECONDS, its default deadline when Solana is the network chosen up
 * front (by --network, or by holding only a Solana key).
 */
import { didYouMean } from "../manifest/index.js";
import { type CallResult, completed, errorAnswer } from "./call-answer.js";
import { checkJob, checkUsage } from "./call-checks.js";
import { guarded } from "./call-offers.js";
import { payJob } from "./call-pay.js";
import { pollJob } from "./call-poll.js";
import { CallError } from "./errors.js";
import { offersOf402 } from "./guard.js";
import { readInputFile } from "./input.js";
import { loadMcpSdk } from "./mcp-sdk.js";
import { mcpErrorAnswer, mcpSend } from "./mcp-send.js";
import { retryingFetch, RETRY_DELAYS_MS } from "./retry.js";
import {
  readService,
  ServiceError,
  type ServiceCapability,
  type ServiceDescription,
} from "./service.js";

export type { CallResult } from "./call-answer.js";

export { DEFAULT_DEADLINE_SECONDS, MAX_JOB_ID_LENGTH } from "./call-checks.js";
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
  /**
   * `--mcp`: send the job as an MCP tools/call to the service's /mcp (x402 v2 MCP transport), with the
   * official MCP SDK client (mcp-send.ts), instead of POST /execute; paid and checked the same way.
   */
  mcp?: boolean;
  /** Added to "cannot reach" when nothing listens at the URL (ECONNREFUSED): how to start or name it. */
  unreachable?: string;
}

export async function callCapability(params: CallParams): Promise<CallResult> {
  const env = params.env ?? process.env;
  const note = params.note ?? (() => {});
  const fetchImpl = params.fetchImpl ?? fetch;

  // Everything that needs no network first: a typo costs nothing.
  const { deadlineSeconds, jobId } = checkUsage(params, env);
  // --mcp: the official MCP client, loaded (or named for install) before anything is sent.
  const mcp = params.mcp ? await loadMcpSdk(params.importer) : undefined;
  const base =
    params.input ?? (params.inputFile ? await readInputFile(params.inputFile, params.stdin) : {});

  // 1. The service and the capability.
  const service = await read(params.url, fetchImpl, params.unreachable);
  const baseUrl = service.baseUrl!;
  const capability = findCapability(service, params.capability);

  // 2. The input, checked here exactly as the server will check it; 3. the price against --max-price.
  const { input, limit } = checkJob(capability, params, base);

  // 4. The job, without payment: POST /execute, or with --mcp the same job as a tools/call at /mcp.
  const executeUrl = `${baseUrl}/${mcp ? "mcp" : "execute"}`;
  const answerError = mcp ? mcpErrorAnswer : errorAnswer;
  const job = { service, capability, input, jobId, deadlineSeconds };
  const sender = mcp ? mcpSend(mcp, fetchImpl) : fetchImpl;
  const { init, send, pollUntilMs } = jobRequest(job, params, sender, note);
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
    const resend = () => post(send, executeUrl, init);
    const polled = await pollJob({ ...queued, executeUrl, accepted, resend });
    if (polled.status !== 200) throw errorAnswer(polled.status, polled.text, executeUrl);
    return free(polled.text);
  }
  if (first.status === 200) return free(firstText);
  const refused = () => answerError(first.status, firstText, executeUrl, undefined, first.headers);
  if (first.status !== 402) throw refused();
  const offers = guarded(() => offersOf402(first.headers, firstText), executeUrl);
  if (!offers) throw refused();

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
    errorAnswer: answerError,
    init,
    send,
    first,
    firstText,
    offers,
    ...(queued ? { queued } : {}),
  });
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

async function read(
  url: string,
  fetchImpl: typeof fetch,
  unreachable?: string,
): Promise<ServiceDescription> {
  try {
    return await readService(url, fetchImpl);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    if (!/^cannot reach /.test(error.message)) throw new CallError("service", error.message);
    const refused = unreachable !== undefined && /\bECONNREFUSED\b/.test(error.message);
    throw new CallError("network", refused ? `${error.message}: ${unreachable}` : error.message);
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
