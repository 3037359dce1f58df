/**
 * Settlement through an x402 facilitator (X402_FACILITATOR_URL): the standard HTTP API,
 * POST /verify and POST /settle, each with {x402Version, paymentPayload, paymentRequirements}.
 * The facilitator submits the transfer and pays the gas; this server holds no key.
 * At startup (checkFacilitator, called by server.ts) its GET /supported must list our network:
 * otherwise it would refuse every payment, or fail to settle it after the job ran.
 * Part of your project: edit freely.
 */
import { PaymentError } from "../errors.js";
import { type Authenticate, redact } from "./facilitator-auth.js";
import type { ResolvedConfig } from "../ops/config.js";
import { ConfigError } from "../ops/settings.js";
import { clip, oneLine } from "../ops/text.js";
import type { ResolvedNetwork } from "./networks.js";
import { SettlementError, type Settler } from "./settlement.js";
import type { Logger, VerifiedPayment } from "../types.js";

/** What a facilitator is sent: the payment as the client sent it, and the requirement we offered. */
export type FacilitatorRequest = Pick<VerifiedPayment, "x402Version" | "payload" | "requirement">;

type Hex = `0x${string}`;

/**
 * The facilitator could not be asked, or gave no usable answer. `uncertain`: the request may have
 * reached it and been acted on (a timeout, a dropped connection, an unreadable 2xx answer).
 */
export class FacilitatorError extends Error {
  constructor(
    message: string,
    readonly uncertain: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "FacilitatorError";
  }
}

/** Connection errors that prove the request never left this machine or reached the facilitator. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** fetch() wraps network failures as TypeError("fetch failed") with the system error as cause. */
function errorCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? err.cause : undefined;
  return isObject(cause) && typeof cause.code === "string" ? cause.code : undefined;
}

/** A URL as messages and logs show it: origin and path only (no credentials, no query). */
export function displayUrl(url: string): string {
  if (!URL.canParse(url)) return "(not a URL)";
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname}`;
}

/**
 * The FacilitatorError for a request that got no answer (a timeout or a connection failure). The
 * message never repeats the full URL (fetch's own messages may: credentials, query).
 */
function noAnswer(endpoint: string, err: unknown, timeoutMs: number): FacilitatorError {
  const shown = displayUrl(endpoint);
  if (err instanceof Error && err.name === "TimeoutError")
    return new FacilitatorError(
      `facilitator ${shown} did not answer within ${timeoutMs / 1000} s`,
      true,
      { cause: err },
    );
  const code = errorCode(err);
  const cause = err instanceof Error ? err.cause : undefined;
  const message =
    err instanceof Error
      ? err.message + (cause instanceof Error ? `: ${cause.message}` : "") // "fetch failed: bad port"
      : String(err);
  const detail = (code ?? message).replaceAll(endpoint, shown).replace(/\/\/[^/@\s]*@/g, "//");
  return new FacilitatorError(
    `facilitator ${shown} is unreachable (${detail})`,
    code === undefined || !NOT_SENT.has(code),
    { cause: err },
  );
}

/** Where a request goes: the URL without credentials (fetch refuses them; they become a header). */
function target(endpoint: string): URL {
  const url = new URL(endpoint);
  url.username = "";
  url.password = "";
  return url;
}

/**
 * One request to the facilitator: its 2xx answer as text, or a FacilitatorError saying whether the
 * request may have been acted on (no answer) or surely was not (an error status). `authenticate`
 * adds the facilitator's credentials (built per request); no secret is ever put in a message.
 * `authFailureUncertain`: a 401/403 answer counts as no answer (for /settle: see settle()).
 */
async function ask(
  endpoint: string,
  init: RequestInit & { headers: Record<string, string> },
  timeoutMs: number,
  authenticate: Authenticate | undefined,
  authFailureUncertain = false,
): Promise<{ status: number; text: string }> {
  const method = init.method ?? "GET";
  let secrets: string[] = [];
  let headers: Record<string, string> = init.headers; // named: RequestInit's HeadersInit is costly to spread
  if (authenticate) {
    try {
      const auth = await authenticate(method, new URL(endpoint));
      secrets = auth.secrets;
      headers = { ...headers, ...auth.headers };
    } catch (err) {
      // Nothing was sent: the credentials could not be made (e.g. a bad key).
      const detail = err instanceof Error ? err.message : String(err);
      throw new FacilitatorError(
        `could not make the credentials for facilitator ${displayUrl(endpoint)}: ${detail}`,
        false,
      );
    }
  }
  let status: number;
  let text: string;
  try {
    // The timeout covers reading the body too.
    const res = await fetch(target(endpoint), {
      ...init,
      headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const failure = noAnswer(endpoint, err, timeoutMs);
    if (secrets.length === 0) throw failure;
    throw new FacilitatorError(redact(failure.message, secrets), failure.uncertain);
  }
  if (status < 200 || status > 299) {
    const refused = status === 401 || status === 403;
    throw new FacilitatorError(
      `facilitator ${displayUrl(endpoint)} answered HTTP ${status}: ${clip(oneLine(redact(text, secrets)), 300)}` +
        (refused ? credentialsHint(authenticate !== undefined) : ""),
      refused && authFailureUncertain,
    );
  }
  return { status, text: secrets.length === 0 ? text : redact(text, secrets) };
}

/** What a 401/403 from a facilitator suggests. */
function credentialsHint(sent: boolean): string {
  return sent
    ? " (it refused the credentials sent: check CDP_API_KEY_ID / CDP_API_KEY_SECRET, X402_FACILITATOR_HEADERS, and the server's clock)"
    : " (it wants credentials: set CDP_API_KEY_ID and CDP_API_KEY_SECRET for Coinbase's facilitator, or X402_FACILITATOR_HEADERS)";
}

/** An x402 facilitator's /verify and /settle. */
export type FacilitatorClient = ReturnType<typeof createFacilitatorClient>;

export function createFacilitatorClient(
  url: string,
  timeoutMs: number,
  authenticate?: Authenticate,
) {
  const base = url.replace(/\/+$/, "");

  async function call(path: "verify" | "settle", p: FacilitatorRequest) {
    const endpoint = `${base}/${path}`;
    const shown = displayUrl(endpoint);
    const request = {
      x402Version: p.x402Version,
      paymentPayload: p.payload, // verbatim: what the client signed and sent
      paymentRequirements: p.requirement,
    };
    const { status, text } = await ask(
      endpoint,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request),
      },
      timeoutMs,
      authenticate,
      // A settle request refused for its credentials is treated as unconfirmed, like a timeout:
      // a proxy or load balancer may answer 401/403 after the facilitator acted (never run again).
      path === "settle",
    );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!isObject(body))
      throw new FacilitatorError(
        `facilitator ${shown} answered HTTP ${status} with something that is not a JSON object`,
        true,
      );
    return body;
  }

  return {
    /** The facilitator's base URL (may hold credentials: show it with displayUrl). */
    url,
    /** POST /verify: {isValid, invalidReason?, invalidMessage?, payer?}. */
    async verify(p: FacilitatorRequest) {
      const body = await call("verify", p);
      if (typeof body.isValid !== "boolean")
        throw new FacilitatorError(
          `facilitator ${displayUrl(`${base}/verify`)} answered without isValid`,
          false,
        );
      return body as { isValid: boolean; invalidReason?: string; invalidMessage?: string };
    },
    /** POST /settle: {success, transaction, network, payer?, errorReason?, errorMessage?}. */
    async settle(p: FacilitatorRequest) {
      const body = await call("settle", p);
      if (typeof body.success !== "boolean")
        throw new FacilitatorError(
          `facilitator ${displayUrl(`${base}/settle`)} answered without success`,
          true,
        );
      return body as {
        success: boolean;
        transaction?: string;
        network?: string;
        payer?: string;
        errorReason?: string;
        errorMessage?: string;
      };
    },
  };
}

/**
 * "code: message" from a facilitator's answer, on one line. Only the first paragraph of the
 * message is kept: the reference facilitator passes on viem's multi-paragraph error texts.
 */
function reason(code: unknown, message: unknown): string {
  const text = (s: unknown) =>
    typeof s === "string"
      ? (s.split("\n\n")[0] ?? "").replace(/\s+/g, " ").trim().slice(0, 300)
      : "";
  return [text(code), text(message)].filter((s) => s !== "").join(": ") || "no reason given";
}

export function createFacilitatorSettler(url: string, timeoutMs: number): Settler {
  const client = createFacilitatorClient(url, timeoutMs);
  return settlerFor(() => client);
}

/**
 * A Settler over the facilitator `pick` returns for each payment (a FacilitatorClient, or a
 * PaymentError refusing the payment before anything runs when no facilitator settles its kind).
 */
export function settlerFor(
  pick: (payment: VerifiedPayment) => FacilitatorClient | Promise<FacilitatorClient>,
): Settler {
  return {
    async verify(payment) {
      // No facilitator for this kind of payment: pick refuses it (PaymentError), nothing runs.
      const client = await pick(payment);
      let answer: Awaited<ReturnType<FacilitatorClient["verify"]>>;
      try {
        answer = await client.verify(payment);
      } catch (err) {
        // Fail closed: without the facilitator's word the job is not run.
        const message = err instanceof Error ? err.message : String(err);
        throw new PaymentError(
          `payment could not be verified, so the job was not run: ${message}; try again later`,
          { cause: err, code: "facilitator_unavailable" },
        );
      }
      if (!answer.isValid)
        throw new PaymentError(
          `the facilitator refused the payment: ${reason(answer.invalidReason, answer.invalidMessage)}`,
          { code: "facilitator_refused" },
        );
    },

    async settle(payment) {
      let client: FacilitatorClient;
      try {
        client = await pick(payment);
      } catch (err) {
        // Nothing was sent anywhere: not charged.
        throw new SettlementError(err instanceof Error ? err.message : String(err), { cause: err });
      }
      let answer: Awaited<ReturnType<FacilitatorClient["settle"]>>;
      try {
        answer = await client.settle(payment);
      } catch (err) {
        if (!(err instanceof FacilitatorError)) throw err;
        throw new SettlementError(
          err.uncertain
            ? `${err.message}; the payment may or may not have been settled`
            : err.message,
          { uncertain: err.uncertain, cause: err },
        );
      }
      const tx = answer.transaction;
      // An answer of success: false is the facilitator's verdict on this authorization (it
      // simulates the transfer first): not an outage, so the authorization is not run again.
      if (!answer.success)
        throw new SettlementError(
          `the facilitator could not settle the payment: ${reason(answer.errorReason, answer.errorMessage)}` +
            (tx ? ` (transaction ${tx})` : ""),
          { permanent: true },
        );
      if (typeof tx !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(tx))
        throw new SettlementError(
          `the facilitator reported success without a transaction hash (${JSON.stringify(tx)}); the payment may or may not have been settled`,
          { uncertain: true },
        );
      return {
        transaction: tx as Hex,
        network: typeof answer.network === "string" ? answer.network : payment.network,
        payer: (typeof answer.payer === "string" ? answer.payer : payment.payer) as Hex,
      };
    },
  };
}

// ---- GET /supported, checked once at startup ----

/** One entry of GET /supported's `kinds`: a payment scheme on a network, for one x402 version. */
export interface SupportedKind {
  x402Version: number;
  scheme: string;
  network: string;
  /** What the scheme needs besides (Solana: `feePayer`, the account that pays the fees). */
  extra?: Record<string, unknown>;
}

/** At most this many kinds are read from a /supported answer (a real one lists a few dozen). */
const MAX_KINDS = 1_000;

function asKind(entry: unknown): SupportedKind | undefined {
  if (!isObject(entry)) return undefined;
  const { x402Version, scheme, network } = entry;
  const version =
    typeof x402Version === "string" && /^\d{1,3}$/.test(x402Version)
      ? Number(x402Version)
      : x402Version;
  if (typeof version !== "number" || !Number.isInteger(version)) return undefined;
  if (typeof scheme !== "string" || typeof network !== "string") return undefined;
  return isObject(entry.extra)
    ? { x402Version: version, scheme, network, extra: entry.extra }
    : { x402Version: version, scheme, network };
}

/**
 * GET <url>/supported: the kinds of payment the facilitator verifies and settles. Entries that are
 * not {x402Version, scheme, network} are skipped. Throws FacilitatorError when the facilitator
 * cannot be reached within `timeoutMs`, answers with a non-2xx status, or without a `kinds` list.
 */
export async function fetchSupported(
  url: string,
  timeoutMs: number,
  authenticate?: Authenticate,
): Promise<SupportedKind[]> {
  const endpoint = `${url.replace(/\/+$/, "")}/supported`;
  const shown = displayUrl(endpoint);
  const { status, text } = await ask(
    endpoint,
    { headers: { accept: "application/json" } },
    timeoutMs,
    authenticate,
  );
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!isObject(body) || !Array.isArray(body.kinds))
    throw new FacilitatorError(
      `facilitator ${shown} answered HTTP ${status} without a "kinds" list ` +
        '(expected {"kinds": [{"x402Version", "scheme", "network"}, ...]})',
      false,
    );
  return body.kinds
    .slice(0, MAX_KINDS)
    .map(asKind)
    .filter((k) => k !== undefined);
}

/** The network as messages name it: "base (eip155:8453)", or just the CAIP-2 id of a custom chain. */
export function networkLabel(network: Pick<ResolvedNetwork, "v1Name" | "caip2">): string {
  return network.v1Name === network.caip2 ? network.caip2 : `${network.v1Name} (${network.caip2})`;
}

/** The kinds that settle "exact" payments on `network`, named by its CAIP-2 id or its v1 name. */
export function matchingKinds(
  kinds: readonly SupportedKind[],
  network: Pick<ResolvedNetwork, "v1Name" | "caip2">,
): SupportedKind[] {
  return kinds.filter(
    (k) => k.scheme === "exact" && (k.network === network.caip2 || k.network === network.v1Name),
  );
}

/** Networks listed in a message, at most; the rest are counted. */
const MAX_LISTED = 30;

/** What the kinds say, grouped and bounded: "x402 v2 exact on eip155:84532; x402 v1 exact on base-sepolia, base". */
export function describeKinds(kinds: readonly SupportedKind[], max = MAX_LISTED): string {
  if (kinds.length === 0) return "nothing (an empty kinds list)";
  const groups = new Map<string, string[]>();
  for (const k of kinds.slice(0, max)) {
    const group = `x402 v${k.x402Version} ${clip(oneLine(k.scheme), 40)}`;
    const networks = groups.get(group) ?? [];
    networks.push(clip(oneLine(k.network), 80));
    groups.set(group, networks);
  }
  const parts = [...groups].map(([group, networks]) => `${group} on ${networks.join(", ")}`);
  const more = kinds.length - Math.min(kinds.length, max);
  return parts.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

/**
 * Why the facilitator cannot settle our payments, or undefined when it can. It must list the
 * "exact" scheme on our network (CAIP-2 id or v1 name). A facilitator that speaks x402 v2 must list
 * it among its v2 kinds: that is what v2 clients pay with, and the reference facilitator lists every
 * v1 network name it knows, whatever chains it can actually reach, so a v1 entry alone proves
 * nothing. A v1-only facilitator is taken at its v1 word.
 */
export function supportProblem(
  kinds: readonly SupportedKind[],
  network: Pick<ResolvedNetwork, "v1Name" | "caip2">,
): string | undefined {
  const matched = matchingKinds(kinds, network);
  const speaksV2 = kinds.some((k) => k.x402Version >= 2);
  if (matched.some((k) => k.x402Version >= 2)) return undefined;
  if (!speaksV2 && matched.length > 0) return undefined;
  const ours = networkLabel(network);
  const supports = `It supports: ${describeKinds(kinds)}`;
  if (matched.length > 0)
    return (
      `lists "exact" payments on the configured network, ${ours}, only for x402 v1, not among its x402 v2 kinds, ` +
      "which v2 clients pay with (reference facilitators list every v1 network name they know, whatever chains they can reach). " +
      supports
    );
  return `does not settle "exact" payments on the configured network, ${ours}. ${supports}`;
}

/** How long startup waits for GET /supported, at most (and never longer than the settle timeout). */
export const SUPPORTED_TIMEOUT_MS = 10_000;

/**
 * Startup check for the facilitator route (fail closed): some facilitator's GET /supported must
 * list our network (with several in X402_FACILITATOR_URL, every one must answer). Throws
 * ConfigError when a facilitator cannot be asked, gives no usable answer, or none settles our
 * network; logs the kinds that matched. No-op in dev mode and for the other routes. The answers
 * are kept: the payment gate routes each payment with them (facilitator-router.ts).
 */
export async function checkFacilitator(config: ResolvedConfig, logger: Logger): Promise<void> {
  if (config.devMode) return;
  const { settlement, network, settleTimeoutSeconds } = config.payment;
  if (settlement?.kind !== "facilitator" || network === undefined) return;
  const { routerFor } = await import("./facilitator-router.js");
  const router = routerFor(settlement, settleTimeoutSeconds * 1000);
  const ours = networkLabel(network);
  const several = settlement.urls.length > 1;
  const instead =
    `set X402_FACILITATOR_URL to a facilitator that settles "exact" payments on ${ours}` +
    (several ? " (or add one to the list)" : "") +
    ", or settle directly from this server: X402_RPC_URL and X402_SETTLER_KEY (that account pays the gas) instead of X402_FACILITATOR_URL";

  try {
    await router.initialize();
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    const failed = router.facilitators.find((f) => detail.includes(f.shown.replace(/\/+$/, "")));
    const shown = failed?.shown ?? displayUrl(settlement.url);
    throw new ConfigError([
      `could not ask the x402 facilitator (X402_FACILITATOR_URL) at ${shown} which networks it settles: ${detail}. ` +
        `The server does not start without knowing that payments on ${ours} can be settled: ` +
        `check the URL${several ? " (every facilitator listed must answer)" : ""} and that the facilitator is up, or ${instead}`,
    ]);
  }
  const routed = router.facilitators.filter((f) => supportProblem(f.kinds, network) === undefined);
  if (routed.length === 0) {
    const why = router.facilitators.map((f) => `at ${f.shown} ${supportProblem(f.kinds, network)}`);
    throw new ConfigError([
      several
        ? `no x402 facilitator in X402_FACILITATOR_URL settles "exact" payments on ${ours}: the one ${why.join("; the one ")}. To fix it, ${instead}`
        : `the x402 facilitator (X402_FACILITATOR_URL) ${why[0]}. To fix it, ${instead}`,
    ]);
  }

  const v2 = router.clientFor(2, network, "exact");
  const v1 = router.clientFor(1, network, "exact");
  const first = routed[0]!;
  const routes = [v2, v1].map((c) => router.facilitators.find((f) => f.url === c?.url));
  logger.info(`the x402 facilitator settles "exact" payments on ${ours}`, {
    facilitator: (routes[0] ?? routes[1] ?? first).shown,
    kinds: router.facilitators.flatMap((f, i) =>
      matchingKinds(f.kinds, network)
        .filter((k) => routes[k.x402Version >= 2 ? 0 : 1] === f || (!several && i === 0))
        .map(
          (k) =>
            `x402 v${k.x402Version} ${k.scheme} on ${k.network}` +
            (several ? ` via ${f.shown}` : ""),
        ),
    ),
  });
  if (v1 === undefined)
    logger.warn(
      `the x402 facilitator lists no x402 v1 kind for ${ours}: payments from v1 clients (X-PAYMENT) will be refused by it`,
      { facilitator: first.shown },
    );
  else if (v2 === undefined)
    logger.warn(
      `the x402 facilitator lists no x402 v2 kind for ${ours}: payments from v2 clients (PAYMENT-SIGNATURE) will be refused by it`,
      { facilitator: first.shown },
    );
}
