/**
 * Several x402 facilitators (X402_FACILITATOR_URL, comma-separated): each kind of payment
 * (x402 version, network, scheme) goes to the FIRST facilitator whose GET /supported lists it, the
 * rule of @x402/core's x402ResourceServer (an exact network name before a pattern such as
 * "eip155:*"). Every facilitator is asked once, at startup: one that cannot be asked stops the
 * start (fail closed) instead of silently sending its networks elsewhere.
 * One rule is ours: a facilitator that speaks x402 v2 but lists a network only for v1 is not
 * trusted with that network's v1 payments (reference facilitators list every v1 name they know,
 * whatever chains they can reach; see supportProblem).
 * Part of your project: edit freely.
 */
import {
  createFacilitatorClient,
  describeKinds,
  displayUrl,
  type FacilitatorClient,
  fetchSupported,
  SUPPORTED_TIMEOUT_MS,
  type SupportedKind,
} from "./facilitator.js";
import { createAuthenticator, type FacilitatorAuth, NO_AUTH } from "./facilitator-credentials.js";

/** A network by its spellings: the CAIP-2 id (x402 v2) and the v1 name. */
export interface NetworkIds {
  v1Name: string;
  caip2: string;
}

export interface FacilitatorRouter {
  /** Asks every facilitator's GET /supported (once; again after a failure). Throws FacilitatorError. */
  initialize(): Promise<void>;
  /** The facilitator for this kind of payment, or undefined when none lists it (or before initialize). */
  clientFor(
    x402Version: number,
    network: string | NetworkIds,
    scheme: string,
  ): FacilitatorClient | undefined;
  /** The kind listed by the facilitator clientFor() picks (its `extra`: Solana's feePayer), if any. */
  kindFor(
    x402Version: number,
    network: string | NetworkIds,
    scheme: string,
  ): SupportedKind | undefined;
  /**
   * Asks every facilitator's GET /supported afresh, with its credentials (a health probe); changes
   * no route. Throws FacilitatorError naming the first that fails.
   */
  probe(probeTimeoutMs: number): Promise<void>;
  /** One line per facilitator for logs: its URL (no credentials) and what it settles. */
  describe(): string;
  /** The facilitators in order, with the kinds each listed (after initialize). */
  readonly facilitators: ReadonlyArray<{ url: string; shown: string; kinds: SupportedKind[] }>;
}

/** "eip155:*" as @x402/core reads network patterns: `*` is any text, the rest literal. */
function matchesPattern(pattern: string, network: string): boolean {
  if (!pattern.includes("*")) return false;
  const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\*/g, ".*");
  return new RegExp(`^${source}$`).test(network);
}

export function createFacilitatorRouter(
  urls: readonly string[],
  auth: FacilitatorAuth = NO_AUTH,
  timeoutMs: number,
): FacilitatorRouter {
  const { prepare, authenticate } = createAuthenticator(auth);
  const withAuth = auth.cdp !== undefined || auth.headers.length > 0 || urls.some(hasCredentials);
  const facilitators = urls.map((url) => ({
    url,
    shown: displayUrl(url),
    kinds: [] as SupportedKind[],
    client: createFacilitatorClient(url, timeoutMs, withAuth ? authenticate : undefined),
  }));
  let ready: Promise<void> | undefined;

  const lists = (
    f: (typeof facilitators)[number],
    version: number,
    spellings: readonly string[],
    scheme: string,
    match: (listed: string, network: string) => boolean,
  ) =>
    f.kinds.some(
      (k) =>
        k.x402Version === version &&
        k.scheme === scheme &&
        spellings.some((n) => match(k.network, n)),
    );

  /** The facilitator for this kind of payment: an exact network listing first, then a pattern. */
  const pick = (x402Version: number, network: string | NetworkIds, scheme: string) => {
    const spellings = typeof network === "string" ? [network] : [network.caip2, network.v1Name];
    // Not trusted for a network's v1 payments: a v2 facilitator that lists it only for v1.
    const trusted = (f: (typeof facilitators)[number]) =>
      x402Version !== 1 ||
      !f.kinds.some((k) => k.x402Version >= 2) ||
      lists(f, 2, spellings, scheme, (a, b) => a === b || matchesPattern(a, b));
    const exact = facilitators.find(
      (f) => lists(f, x402Version, spellings, scheme, (a, b) => a === b) && trusted(f),
    );
    const found =
      exact ??
      facilitators.find(
        (f) => lists(f, x402Version, spellings, scheme, matchesPattern) && trusted(f),
      );
    return found;
  };

  return {
    facilitators,
    initialize() {
      ready ??= (async () => {
        await prepare(); // a CDP key that cannot sign stops the start, before anything is sent
        const supportedTimeout = Math.min(timeoutMs, SUPPORTED_TIMEOUT_MS);
        for (const f of facilitators)
          f.kinds = await fetchSupported(
            f.url,
            supportedTimeout,
            withAuth ? authenticate : undefined,
          );
      })();
      ready.catch(() => (ready = undefined));
      return ready;
    },
    clientFor(x402Version, network, scheme) {
      return pick(x402Version, network, scheme)?.client;
    },
    kindFor(x402Version, network, scheme) {
      const f = pick(x402Version, network, scheme);
      const spellings = typeof network === "string" ? [network] : [network.caip2, network.v1Name];
      const listed = (k: SupportedKind, exact: boolean) =>
        k.x402Version === x402Version &&
        k.scheme === scheme &&
        spellings.some((n) => (exact ? k.network === n : matchesPattern(k.network, n)));
      return f?.kinds.find((k) => listed(k, true)) ?? f?.kinds.find((k) => listed(k, false));
    },
    async probe(probeTimeoutMs) {
      await prepare();
      for (const f of facilitators)
        await fetchSupported(f.url, probeTimeoutMs, withAuth ? authenticate : undefined);
    },
    describe() {
      return facilitators.map((f) => `${f.shown}: ${describeKinds(f.kinds, 10)}`).join("; ");
    },
  };
}

function hasCredentials(url: string): boolean {
  return URL.canParse(url) && (new URL(url).username !== "" || new URL(url).password !== "");
}

/** One router per configured route (startup's check and the payment gate share its /supported answers). */
const routers = new WeakMap<object, FacilitatorRouter>();

export function routerFor(
  route: { urls: readonly string[]; auth: FacilitatorAuth },
  timeoutMs: number,
): FacilitatorRouter {
  let router = routers.get(route);
  if (!router) {
    router = createFacilitatorRouter(route.urls, route.auth, timeoutMs);
    routers.set(route, router);
  }
  return router;
}
