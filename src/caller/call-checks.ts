/**
 * The checks of `create-agent call` (call.ts) made before anything is sent: the options (--max-price,
 * --network, the deadline, the job id, --async with --mcp), then the input against the capability's schema
 * and its declared price against --max-price.
 */
import { randomUUID } from "node:crypto";
import { amountProblem, toAtomicAmount } from "../manifest/index.js";
import { solanaDeadlineProblem } from "./call-offers.js";
import { CallError } from "./errors.js";
import { type PayerFamily, type PayerFamilyId } from "./guard.js";
import { buildInput, inputProblems } from "./input.js";
import { PAYER_FAMILIES, PAYER_NETWORKS, payerFamily } from "./payer-families.js";
import { PAYER_KEY_VARIABLE } from "./payment.js";
import type { ServiceCapability } from "./service.js";
import { SOLANA_PAYER_KEY_VARIABLE } from "./solana-payment.js";
import type { CallParams } from "./call.js";

export const DEFAULT_DEADLINE_SECONDS = 300;
/** The most a job costs without --max-price, in USDC (the official x402 client's default cap is $1). */
export const DEFAULT_MAX_PRICE = "1";
/** The runtime's jobs/request.ts MAX_JOB_ID_LENGTH: the longest job_id, in characters (code points). */
export const MAX_JOB_ID_LENGTH = 256;

/**
 * 2. The input, checked here exactly as the server will check it. 3. The declared price against
 * --max-price, in atomic units (the limit, also returned). Nothing is sent when either fails.
 */
export function checkJob(
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
  // Without --max-price the service's own /about sets the price: a mistyped or hostile URL could declare
  // any amount. Above the official x402 client's default cap, the user says the price once.
  if (limit === undefined && declared > BigInt(toAtomicAmount(DEFAULT_MAX_PRICE)))
    throw new CallError(
      "price",
      `"${capability.name}" costs ${capability.price} USDC per job, more than call pays without --max-price (${DEFAULT_MAX_PRICE} USDC, as the x402 client's default cap): pass --max-price ${capability.price} to pay it; nothing was sent`,
    );
  return { input, limit };
}

/** The options checked before anything is sent: --max-price, --network, the deadline, the job id. */
export function checkUsage(
  params: CallParams,
  env: NodeJS.ProcessEnv,
): { deadlineSeconds: number; jobId: string } {
  if (params.maxPrice !== undefined) {
    const problem = amountProblem(params.maxPrice);
    if (problem) throw new CallError("usage", `--max-price: ${problem}`);
  }
  if (params.mcp && params.async)
    throw new CallError(
      "usage",
      "--async with --mcp: an MCP tool call has no async jobs (its answer comes on the call); send a long job without --mcp (POST /execute, Prefer: respond-async), or with --mcp without --async",
    );
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
