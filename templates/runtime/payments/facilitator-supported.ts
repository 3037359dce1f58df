/**
 * GET /supported of an x402 facilitator, checked once at startup (checkFacilitator, called by
 * server.ts): some configured facilitator must list the "exact" scheme on our network, or it would
 * refuse every payment, or fail to settle it after the job ran. The answers are kept: the payment gate
 * routes each payment with them (facilitator-router.ts).
 * Part of your project: edit freely.
 */
import type { Authenticate } from "./facilitator-credentials.js";
import { ask, displayUrl, FacilitatorError, isTransient } from "./facilitator-http.js";
import type { ResolvedConfig } from "../config.js";
import { isObject } from "../ops/json-object.js";
import { ConfigError } from "../ops/settings.js";
import { clip, oneLine } from "../ops/text.js";
import type { ResolvedNetwork } from "./networks.js";
import type { Logger } from "../types.js";

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
  const { status, body } = await ask(
    endpoint,
    { headers: { accept: "application/json" } },
    timeoutMs,
    authenticate,
  );
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

/** The other fix a refusal names: settling from this server (the EVM family says when that needs a feature). */
export const SETTLE_DIRECTLY =
  "settle directly from this server: X402_RPC_URL and X402_SETTLER_KEY (that account pays the gas) instead of X402_FACILITATOR_URL";

/**
 * Startup check for the facilitator route (fail closed): some facilitator's GET /supported must
 * list our network (with several in X402_FACILITATOR_URL, every one must answer). Throws
 * ConfigError when a facilitator cannot be asked, gives no usable answer, or none settles our
 * network; logs the kinds that matched. No-op in dev mode and for the other routes. The answers
 * are kept: the payment gate routes each payment with them (facilitator-router.ts).
 */
export async function checkFacilitator(
  config: ResolvedConfig,
  logger: Logger,
  settleDirectly = SETTLE_DIRECTLY,
): Promise<void> {
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
    `, or ${settleDirectly}`;

  try {
    await router.initialize();
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    const failed = router.facilitators.find((f) => detail.includes(f.shown.replace(/\/+$/, "")));
    const shown = failed?.shown ?? displayUrl(settlement.url);
    throw new ConfigError(
      [
        `could not ask the x402 facilitator (X402_FACILITATOR_URL) at ${shown} which networks it settles: ${detail}. ` +
          `The server does not start without knowing that payments on ${ours} can be settled: ` +
          `check the URL${several ? " (every facilitator listed must answer)" : ""} and that the facilitator is up, or ${instead}`,
      ],
      isTransient(err),
    );
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
