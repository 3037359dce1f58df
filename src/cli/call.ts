/**
 * `create-agent call [url] <capability>`: the command-line face of src/caller/call.ts. Normal mode
 * prints the job's output on stdout and notes (dev mode, retries, the payment receipt) on stderr;
 * `--json` without a file is machine mode: stdout is exactly one JSON document, success or failure.
 */
import { callCapability, type CallResult } from "../caller/call.js";
import { CallError } from "../caller/errors.js";
import { isUrl, readService } from "../caller/service.js";
import { type DefaultUrl, defaultServiceUrl } from "../caller/target.js";
import { CliError } from "./errors.js";

/** What --asset takes: an EVM token contract, or a Solana mint (base58). */
const TOKEN_ADDRESS = /^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;

export interface CallCommandOptions {
  input: string[];
  /** `--json <file>`: input file; `--json` alone (true): machine mode. */
  json?: string | boolean;
  maxPrice?: string;
  jobId?: string;
  deadlineSeconds?: string;
  network?: string;
  /** `--asset <address>`, repeatable: tokens allowed besides the network's USDC. */
  asset?: string[];
  /** `--async`: Prefer: respond-async, then poll the 202's Location (src/caller/call-poll.ts). */
  async?: boolean;
  /** `--mcp`: the job as an MCP tools/call at the service's /mcp (also when the URL names /mcp). */
  mcp?: boolean;
}

export interface CallIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: NodeJS.ReadableStream;
}

const defaultIo = (): CallIo => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
});

export { CALL_HELP_AFTER } from "./call-help.js";

/** Runs the command; resolves to the exit code. */
export async function callCommand(
  first: string,
  second: string | undefined,
  options: CallCommandOptions,
  io: CallIo = defaultIo(),
): Promise<number> {
  const machine = options.json === true;
  try {
    const result = await run(first, second, options, io);
    if (machine)
      io.stdout(
        `${JSON.stringify({
          ok: true,
          job_id: result.jobId,
          capability: result.capability,
          output: result.output,
          completed_at: result.completedAt,
          payment: result.payment,
        })}\n`,
      );
    else {
      io.stdout(`${JSON.stringify(result.output, null, 2)}\n`);
      if (result.payment) io.stderr(receiptText(result.payment));
    }
    return 0;
  } catch (error) {
    if (!machine) {
      if (error instanceof CallError)
        throw new CliError(
          [error.message, ...error.problems.map((problem) => `  ${problem}`)].join("\n"),
        );
      throw error;
    }
    const failure =
      error instanceof CallError || error instanceof CliError
        ? error
        : new CallError(
            "internal",
            `unexpected error: ${error instanceof Error ? error.message : String(error)}`,
          );
    const callError = failure instanceof CallError ? failure : undefined;
    io.stdout(
      `${JSON.stringify({
        ok: false,
        ...(callError?.status !== undefined ? { status: callError.status } : {}),
        error_type: callError?.errorType ?? "usage",
        error: callError?.error ?? failure.message,
      })}\n`,
    );
    const lines = [failure.message, ...(callError?.problems ?? []).map((p) => `  ${p}`)];
    io.stderr(`create-agent: ${lines.join("\n")}\n`);
    return 1;
  }
}

async function run(
  first: string,
  second: string | undefined,
  options: CallCommandOptions,
  io: CallIo,
): Promise<CallResult> {
  let url: string;
  let capability: string;
  let implied: DefaultUrl | undefined; // the URL, when the command line gave none
  if (second !== undefined) {
    url = first;
    capability = second;
  } else if (isUrl(first)) {
    throw new CallError("usage", await missingCapability(first));
  } else {
    implied = defaultServiceUrl(io.env, io.cwd);
    url = implied.url;
    capability = first;
  }
  if (!isUrl(url))
    throw new CallError(
      "usage",
      `"${url}" is not an http(s) URL; give the service URL first, e.g. create-agent call http://localhost:3000 ${capability}`,
    );
  let deadlineSeconds: number | undefined;
  if (options.deadlineSeconds !== undefined) {
    if (!/^\d+$/.test(options.deadlineSeconds) || Number(options.deadlineSeconds) < 1)
      throw new CallError(
        "usage",
        `--deadline-seconds: "${options.deadlineSeconds}" is not a whole number of seconds above 0`,
      );
    deadlineSeconds = Number(options.deadlineSeconds);
  }
  for (const asset of options.asset ?? [])
    if (!TOKEN_ADDRESS.test(asset))
      throw new CallError(
        "usage",
        `--asset: "${asset}" is not a token address: give an EVM contract (0x and 40 hex digits) or a Solana mint (base58, 32 to 44 characters)`,
      );
  return callCapability({
    url,
    ...(implied && { unreachable: startHint(implied) }),
    capability,
    inputPairs: options.input,
    ...(typeof options.json === "string" ? { inputFile: options.json } : {}),
    ...(options.maxPrice !== undefined ? { maxPrice: options.maxPrice } : {}),
    ...(options.jobId !== undefined ? { jobId: options.jobId } : {}),
    ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}),
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.asset !== undefined && options.asset.length > 0 ? { assets: options.asset } : {}),
    ...(options.async ? { async: true } : {}),
    ...(options.mcp || namesMcp(url) ? { mcp: true } : {}),
    env: io.env,
    stdin: io.stdin,
    note: (line) => io.stderr(`create-agent: ${line}\n`),
  });
}

/** What to add when nothing listens at the URL the command line did not give. */
function startHint(implied: DefaultUrl): string {
  return `nothing listens there (the address comes from ${implied.source}): start the service (in its project: npm run dev), or give its URL (AGENT_URL, or create-agent call <url> <capability>)`;
}

/** A URL of the service's MCP endpoint (…/mcp): the job goes there, as with --mcp. */
function namesMcp(url: string): boolean {
  try {
    return /\/mcp\/*$/.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** `create-agent call <url>` alone: say which capabilities there are to call. */
async function missingCapability(url: string): Promise<string> {
  const usage = `name the capability to call after the URL: create-agent call ${url} <capability>`;
  try {
    const service = await readService(url);
    const names = service.capabilities.map((c) => c.name);
    return `${usage} (${service.name} has: ${names.join(", ") || "none"})`;
  } catch {
    return usage;
  }
}

function receiptText(payment: NonNullable<CallResult["payment"]>): string {
  const what =
    payment.currency === "USDC"
      ? `${payment.amount} USDC`
      : `${payment.amount} atomic units of the token ${payment.asset} (not USDC: allowed with --asset)`;
  const lines = [`create-agent: paid ${what} on ${payment.network}`];
  lines.push(
    `  transaction: ${payment.transaction ?? "(the service sent no receipt; check the payer's transfers)"}`,
  );
  if (payment.explorer) lines.push(`  explorer:    ${payment.explorer}`);
  else if (payment.localAgent && payment.transaction)
    lines.push(
      "  explorer:    none: the agent runs on this machine, so its chain may be a local one (dev:paid's) that no public explorer has seen",
    );
  if (payment.payer) lines.push(`  payer:       ${payment.payer}`);
  return `${lines.join("\n")}\n`;
}
