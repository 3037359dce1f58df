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
 *      request (retry.ts), never a new signature, so the server charges the job once.
 *
 * A Solana payment is a transaction that dies with its blockhash (about 60 s): a job paid on Solana must
 * be due within SOLANA_MAX_DEADLINE_SECONDS, its default deadline when Solana is the network chosen up
 * front (by --network, or by holding only a Solana key).
 */
import { randomUUID } from "node:crypto";
import { amountProblem, didYouMean, toAtomicAmount } from "../manifest/index.js";
import { CallError } from "./errors.js";
import { buildInput, inputProblems, readInputFile } from "./input.js";
import {
  checkPaymentToSend,
  choosePaymentNetwork,
  networkFamily,
  networkId,
  networkName,
  offersOf402,
  PAYER_NETWORKS,
  paymentHeaderOf,
  PaymentGuardError,
  type PaymentOffer,
  signableAmount,
  type SignedPayment,
  SOLANA_MAX_DEADLINE_SECONDS,
  type SolanaReader,
} from "./guard.js";
import {
  explorerUrl,
  fromAtomicAmount,
  loadX402,
  PAYER_KEY_VARIABLE,
  type PaymentReceipt,
  payerKey,
  readReceiptHeader,
  type X402Client,
} from "./payment.js";
import {
  hideUrlSecrets,
  loadSolana,
  SOLANA_PAYER_KEY_VARIABLE,
  solanaKeyText,
  solanaRpcUrl,
  solanaSigner,
} from "./solana-payment.js";
import { type AllowedAsset, assetAllowed, assetProblem, isNetworkUsdc } from "./guard-asset.js";
import { addPaymentIdentifier, newPaymentId } from "./payment-id.js";
import { retryingFetch, RETRY_DELAYS_MS } from "./retry.js";
import {
  readService,
  ServiceError,
  type ServiceCapability,
  type ServiceDescription,
} from "./service.js";
import { isObject } from "../json-object.js";

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
}

export interface CallResult {
  jobId: string;
  capability: string;
  output: unknown;
  completedAt: number | null;
  /** null when nothing was paid (a dev-mode service). */
  payment: PaymentReceipt | null;
}

export async function callCapability(params: CallParams): Promise<CallResult> {
  const env = params.env ?? process.env;
  const note = params.note ?? (() => {});
  const fetchImpl = params.fetchImpl ?? fetch;

  // Everything that needs no network first: a typo costs nothing.
  if (params.maxPrice !== undefined) {
    const problem = amountProblem(params.maxPrice);
    if (problem) throw new CallError("usage", `--max-price: ${problem}`);
  }
  const wanted = params.network === undefined ? undefined : wantedNetwork(params.network);
  // Solana chosen up front (by --network, or by holding only a Solana key): a deadline it can cover.
  const solanaFirst = wanted
    ? wanted.family === "svm"
    : !env[PAYER_KEY_VARIABLE] && !!env[SOLANA_PAYER_KEY_VARIABLE];
  const deadlineSeconds =
    params.deadlineSeconds ??
    (solanaFirst ? SOLANA_MAX_DEADLINE_SECONDS : DEFAULT_DEADLINE_SECONDS);
  if (!Number.isSafeInteger(deadlineSeconds) || deadlineSeconds < 1)
    throw new CallError(
      "usage",
      `--deadline-seconds: "${params.deadlineSeconds}" is not a whole number of seconds above 0`,
    );
  if (wanted?.family === "svm" && deadlineSeconds > SOLANA_MAX_DEADLINE_SECONDS)
    throw new CallError("usage", `${solanaDeadlineProblem(deadlineSeconds)}; nothing was sent`);
  const jobId = params.jobId ?? `call-${randomUUID()}`;
  // Characters as the service's OpenAPI document (JobId maxLength) counts them: code points.
  const jobIdLength = [...jobId].length;
  if (jobIdLength === 0 || jobIdLength > MAX_JOB_ID_LENGTH)
    throw new CallError("usage", `--job-id: must be 1 to ${MAX_JOB_ID_LENGTH} characters`);
  const base = params.inputFile ? await readInputFile(params.inputFile, params.stdin) : {};

  // 1. The service and the capability.
  const service = await read(params.url, fetchImpl);
  const baseUrl = service.baseUrl!;
  const capability = findCapability(service, params.capability);

  // 2. The input, checked here exactly as the server will check it.
  const input = buildInput(capability, params.inputPairs ?? [], base);
  const problems = inputProblems(capability, input);
  if (problems.length > 0)
    throw new CallError(
      "validation",
      `the input does not match the input schema of "${capability.name}"; nothing was sent:`,
      { problems, error: problems.join("; ") },
    );

  // 3. The declared price against --max-price, in atomic units.
  const declared = BigInt(capability.priceAtomic);
  const limit = params.maxPrice === undefined ? undefined : BigInt(toAtomicAmount(params.maxPrice));
  if (limit !== undefined && declared > limit)
    throw new CallError(
      "price",
      `"${capability.name}" costs ${capability.price} USDC per job, more than --max-price ${params.maxPrice}; nothing was sent`,
    );

  // 4. The job, without payment.
  const executeUrl = `${baseUrl}/execute`;
  const deadline = Math.floor(Date.now() / 1000) + deadlineSeconds;
  const body = JSON.stringify({
    service_version: service.serviceVersion,
    job_id: jobId,
    task: { capability: capability.name, input },
    deadline,
  });
  const init: RequestInit = {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body,
  };
  const send = retryingFetch({
    fetchImpl,
    delaysMs: params.retryDelaysMs ?? RETRY_DELAYS_MS,
    inUseUntilMs: deadline * 1000 + SETTLEMENT_GRACE_MS,
    attemptTimeoutMs: deadlineSeconds * 1000 + ANSWER_GRACE_MS,
    onRetry: note,
  });
  const first = await post(send, executeUrl, init);
  const firstText = await first.text();
  if (first.status === 200) {
    note(
      `${baseUrl} asked for no payment (a service in dev mode): the job ran and nothing was paid`,
    );
    return { ...completed(firstText, executeUrl, jobId, capability), payment: null };
  }
  if (first.status !== 402) throw errorAnswer(first.status, firstText, executeUrl);
  const offers = guarded(() => offersOf402(first.headers, firstText), executeUrl);
  if (!offers) throw errorAnswer(first.status, firstText, executeUrl);

  // 5. The network, what it asks against what the caller allows; then pay.
  const allowed = limit !== undefined && limit < declared ? limit : declared;
  const chosen = chooseNetwork(offers, params.network, env, deadlineSeconds, executeUrl);
  const allowedAssets: AllowedAsset[] = (params.assets ?? []).map((asset) => ({ asset }));
  // Only offers in the network's USDC (or a token allowed with --asset) are ever signed or checked.
  const usable = payableOffers(offers, chosen.id, allowedAssets, executeUrl);
  const payable = checkAsk(usable, allowed, capability, params.maxPrice, executeUrl);
  const why = `${executeUrl} asks ${describePayment(payable.amount, payable.network, payable.asset)} for "${capability.name}"`;
  // Keeps the requirements of the chosen network, in an allowed token, within the allowed amount, read as
  // the scheme of their version signs it.
  const policy = <R extends { network: string; asset?: string }>(
    version: number,
    requirements: R[],
  ): R[] =>
    requirements.filter(
      (r) =>
        networkId(r.network) === chosen.id &&
        assetAllowed(r.network, r.asset ?? "", allowedAssets) &&
        signableAmount(version, r) <= allowed,
    );

  let client: X402Client;
  let payer: string;
  let reader: SolanaReader | undefined;
  let wrap: (fetch: typeof globalThis.fetch) => typeof globalThis.fetch;
  let rpcUrl: string | undefined;
  if (chosen.family === "svm") {
    const keyText = solanaKeyText(env, why);
    const solana = await loadSolana(params.importer);
    const signer = await solanaSigner(solana, keyText);
    rpcUrl = solanaRpcUrl(env, chosen.id);
    const config = rpcUrl ? { rpcUrl } : undefined;
    const svmClient = new solana.fetch.x402Client();
    // The official exact SVM scheme, on the chosen network only, reading it through its own RPC.
    svmClient.register(chosen.id, new solana.svm.ExactSvmScheme(signer as never, config));
    const v1Name = networkName(chosen.id);
    if (v1Name)
      svmClient.registerV1(v1Name, new solana.svmV1.ExactSvmSchemeV1(signer as never, config));
    svmClient.registerPolicy(policy);
    client = svmClient;
    payer = signer.address;
    reader = solana.reader;
    wrap = (fetch) => solana.fetch.wrapFetchWithPayment(fetch, svmClient);
  } else {
    const key = payerKey(env, why);
    const x402 = await loadX402(params.importer);
    let account;
    try {
      account = x402.accounts.privateKeyToAccount(key);
    } catch {
      throw new CallError(
        "payment",
        "X402_PAYER_KEY is not a valid private key (its value is not shown); nothing was signed",
      );
    }
    const evmClient = new x402.fetch.x402Client();
    // The official registration helper: x402 v2 (eip155:*) and every v1 EVM network name.
    x402.evm.registerExactEvmScheme(evmClient, { signer: account, policies: [policy] });
    client = evmClient;
    payer = account.address;
    wrap = (fetch) => x402.fetch.wrapFetchWithPayment(fetch, evmClient);
  }
  // Our policy is the price cap and the token rule; the client's own controls pass what --asset allows.
  client.setSpendControls({
    maxAmountPerPayment: false,
    ...(allowedAssets.length > 0
      ? {
          allowedAssets: allowedAssets.map((a) => ({
            network: chosen.id as `${string}:${string}`,
            asset: a.asset,
          })),
        }
      : {}),
  });
  let created = 0;
  const paymentId = newPaymentId();
  client.onBeforePaymentCreation(async ({ paymentRequired, selectedRequirements }) => {
    // One authorization per job, ever: a second signature could pay the job twice.
    if (created > 0) return { abort: true, reason: "this job already has a signed authorization" };
    if (signableAmount(paymentRequired.x402Version, selectedRequirements) > allowed)
      return { abort: true, reason: "the chosen requirement is above the allowed amount" };
    // x402 payment-identifier: when the 402 declares it, the payment carries an id, so the server
    // answers a resend of it (after a lost answer) with the answer it already paid for.
    addPaymentIdentifier(paymentRequired.extensions, paymentId);
    return undefined;
  });
  client.onAfterPaymentCreation(async () => {
    created++;
  });

  // The client reads the 402 already checked above (the first answer, replayed once) and pays
  // exactly that. The payment it made is checked itself before it leaves (guard.ts), then every
  // request goes through the retrying fetch.
  let replay: Response | undefined = new Response(firstText, {
    status: first.status,
    headers: first.headers,
  });
  let sent: SignedPayment | undefined;
  const clientFetch: typeof fetch = async (input, requestInit) => {
    const header = paymentHeaderOf(
      new Headers(requestInit?.headers ?? (input instanceof Request ? input.headers : undefined)),
    );
    if (header === undefined && replay) {
      const answer = replay;
      replay = undefined;
      return answer;
    }
    if (header !== undefined) {
      const checked = await guardedAsync(
        () => checkPaymentToSend(header, usable, { maxAtomic: allowed, payer }, reader),
        executeUrl,
      );
      if (sent && sent.amount !== checked.amount)
        throw new CallError("payment", "refused to send a second, different payment for this job");
      sent = checked;
    }
    return send(input, requestInit);
  };
  const pay = wrap(clientFetch);
  let paid: Response;
  try {
    paid = await pay(executeUrl, init);
  } catch (error) {
    if (error instanceof CallError) throw error;
    // The Solana client's messages may repeat the RPC URL, credentials included: never printed.
    const message = hideUrlSecrets(error instanceof Error ? error.message : String(error), rpcUrl);
    throw new CallError(
      "payment",
      sent
        ? `paying ${executeUrl} failed after a payment of ${describePayment(sent.amount, sent.network, sent.asset)} was signed and sent: ${message}`
        : `the x402 client did not pay ${executeUrl}: ${clientRefusal(message, payable)}; nothing was sent`,
    );
  }
  const paidText = await paid.text();
  if (paid.status !== 200) throw errorAnswer(paid.status, paidText, executeUrl, sent);
  const result = completed(paidText, executeUrl, jobId, capability);
  if (!sent) return { ...result, payment: null }; // answered without the payment being sent
  // What was signed, never what the receipt claims; the receipt only names the transaction.
  const transaction = readReceiptHeader(paid.headers)?.transaction ?? null;
  const explorer = explorerUrl(sent.network, transaction);
  const usdc = isNetworkUsdc(sent.network, sent.asset);
  return {
    ...result,
    payment: {
      transaction,
      network: sent.network,
      payer: sent.payer,
      // The token signed: USDC in decimal, any other (allowed with --asset) in its atomic units.
      amount: usdc ? fromAtomicAmount(sent.amount) : sent.amount.toString(),
      currency: usdc ? "USDC" : sent.asset,
      asset: sent.asset,
      ...(explorer ? { explorer } : {}),
    },
  };
}

/** What a payment is, in words: "0.01 USDC", or "10000 atomic units of the token <address>". */
export function describePayment(amount: bigint, network: string, asset: string): string {
  return isNetworkUsdc(network, asset)
    ? `${fromAtomicAmount(amount)} USDC`
    : `${amount} atomic units of the token ${asset}`;
}

/**
 * The offers of the chosen network in its USDC or a token allowed with --asset; none: refused, naming the
 * tokens asked and how to allow one (nothing signed).
 */
function payableOffers(
  offers: readonly PaymentOffer[],
  network: string,
  allowedAssets: readonly AllowedAsset[],
  executeUrl: string,
): PaymentOffer[] {
  const onNetwork = offers.filter((o) => networkId(o.network) === network);
  const usable = onNetwork.filter((o) => assetAllowed(o.network, o.asset, allowedAssets));
  if (usable.length > 0) return usable;
  throw new CallError(
    "payment",
    `refused to pay ${executeUrl}: ${assetProblem(onNetwork, "pass --asset <address> (create-agent call --help)")}; nothing was signed`,
    { status: 402 },
  );
}

/** Runs a guard check; its refusal becomes the caller's error, saying that nothing was paid. */
function guarded<T>(check: () => T, executeUrl: string): T {
  try {
    return check();
  } catch (error) {
    throw guardRefusal(error, executeUrl);
  }
}

async function guardedAsync<T>(check: () => Promise<T>, executeUrl: string): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw guardRefusal(error, executeUrl);
  }
}

function guardRefusal(error: unknown, executeUrl: string): unknown {
  if (!(error instanceof PaymentGuardError)) return error;
  return new CallError(
    "payment",
    error.reason === "signed"
      ? `refused to pay ${executeUrl}: ${error.message}; nothing was paid`
      : `refused to pay ${executeUrl}: ${error.message}; nothing was signed`,
    { status: 402 },
  );
}

/** `--network`, checked: a known name or a CAIP-2 id of an EVM or Solana network. */
function wantedNetwork(network: string): { id: string; family: "evm" | "svm" } {
  const id = networkId(network);
  const family = networkFamily(id);
  if (!family)
    throw new CallError(
      "usage",
      `--network: "${network}" is not a network this payer knows: give a name (${Object.keys(PAYER_NETWORKS).join(", ")}) or a CAIP-2 id (eip155:<chainId>, solana:<genesis hash prefix>)`,
    );
  return { id, family };
}

function solanaDeadlineProblem(deadlineSeconds: number): string {
  return `a job paid on Solana must be due within ${SOLANA_MAX_DEADLINE_SECONDS} s (its transaction lives about 60 s, settlement included), and this one is due in ${deadlineSeconds} s: give --deadline-seconds ${SOLANA_MAX_DEADLINE_SECONDS} or less, or --network with an EVM network the service offers (paid with ${PAYER_KEY_VARIABLE})`;
}

/**
 * The network to pay on (guard.ts choosePaymentNetwork), or the refusal, before anything is signed. With no
 * key for an EVM-only offer, the EVM key's own message says what to set (payerKey, as before).
 */
function chooseNetwork(
  offers: readonly PaymentOffer[],
  asked: string | undefined,
  env: NodeJS.ProcessEnv,
  deadlineSeconds: number,
  executeUrl: string,
): { id: string; family: "evm" | "svm" } {
  const keys = { evm: !!env[PAYER_KEY_VARIABLE], svm: !!env[SOLANA_PAYER_KEY_VARIABLE] };
  const choice = choosePaymentNetwork(offers, asked, keys, deadlineSeconds);
  if (choice.ok) return choice;
  const offered = choice.offered.join(", ");
  const refuse = (message: string) => new CallError("payment", message, { status: 402 });
  if (choice.problem === "not-offered")
    throw refuse(
      `${executeUrl} does not offer payment on --network ${asked}; it offers: ${offered}; nothing was signed`,
    );
  if (choice.problem === "solana-deadline")
    throw refuse(
      `${executeUrl} can be paid with the caller's key only on Solana, and ${solanaDeadlineProblem(deadlineSeconds)}; nothing was signed`,
    );
  if (choice.family === undefined)
    throw refuse(
      `${executeUrl} asks for payment on ${offered}, and no payer key for these networks is set: put the payer's key in ${PAYER_KEY_VARIABLE} (EVM networks: 0x followed by 64 hex digits) or ${SOLANA_PAYER_KEY_VARIABLE} (Solana: base58, or the JSON byte array solana-keygen writes); nothing was signed`,
    );
  // One family offered and no key for it: that family's key reader says what to set.
  const first = offers.find((o) => networkFamily(o.network) === choice.family) ?? offers[0]!;
  return { id: networkId(first.network), family: choice.family };
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

/** The cheapest requirement within `allowed`, or a refusal naming the limit it breaks (nothing signed). */
function checkAsk(
  offers: readonly PaymentOffer[],
  allowed: bigint,
  capability: ServiceCapability,
  maxPrice: string | undefined,
  executeUrl: string,
): PaymentOffer {
  const cheapest = [...offers].sort((a, b) => (a.amount < b.amount ? -1 : 1))[0]!;
  if (cheapest.amount <= allowed) return cheapest;
  const asked = fromAtomicAmount(cheapest.amount);
  const declared = BigInt(capability.priceAtomic);
  const broken =
    cheapest.amount > declared
      ? `the ${capability.price} USDC its /about declares for "${capability.name}" (a service asking more than it declares is refused)`
      : `--max-price ${maxPrice}`;
  throw new CallError(
    "price",
    `${executeUrl} asks ${asked} USDC, more than ${broken}; nothing was signed`,
    { status: 402 },
  );
}

/** The x402 client's refusal, in the caller's terms when it is a known one. */
function clientRefusal(message: string, payable: PaymentOffer): string {
  if (/spendControls/.test(message))
    return `it pays only the USDC contracts it knows, and the service asks for asset ${payable.asset} on ${payable.network}`;
  if (/No network\/scheme registered|No client registered/.test(message))
    return `it cannot pay scheme "${payable.scheme}" on network "${payable.network}" (it pays "exact" on EVM and Solana networks)`;
  return message;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-200 answer: the spec's error body as `HTTP <status> <error_type>: <error>`. */
function errorAnswer(status: number, text: string, url: string, sent?: SignedPayment): CallError {
  const body = parseJson(text);
  const signed = sent
    ? ` (a payment authorization of ${describePayment(sent.amount, sent.network, sent.asset)} was sent with this request)`
    : "";
  if (isObject(body) && typeof body.error_type === "string" && typeof body.error === "string")
    return new CallError(
      body.error_type,
      `HTTP ${status} ${body.error_type}: ${body.error}${signed}`,
      { status, error: body.error },
    );
  const shown = text.trim().replace(/\s+/g, " ");
  const excerpt = shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
  return new CallError(
    "service",
    `HTTP ${status} from POST ${url}, not a job result or an error body (spec 2.4, 2.5)${excerpt ? `: ${excerpt}` : ""}${signed}`,
    { status },
  );
}

/** A 200 answer: the job result (spec 2.4). */
function completed(
  text: string,
  url: string,
  jobId: string,
  capability: ServiceCapability,
): Omit<CallResult, "payment"> {
  const body = parseJson(text);
  if (!isObject(body) || !("output" in body))
    throw new CallError(
      "service",
      `POST ${url} answered 200 without a job result (spec 2.4: no "output" field)`,
      { status: 200 },
    );
  return {
    jobId: typeof body.job_id === "string" ? body.job_id : jobId,
    capability: capability.name,
    output: body.output,
    completedAt: typeof body.completed_at === "number" ? body.completed_at : null,
  };
}
