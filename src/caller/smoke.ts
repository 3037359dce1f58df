/**
 * `create-agent smoke <url>`: what a seller runs against a deployment before telling anyone about it.
 * Each check is one line: GET /health, the agent card, /openapi.json, then the 402 an unpaid job on the
 * first capability gets (its example input), offer by offer: network, asset, payee and price against the
 * seller's configuration (smoke-expect.ts). Nothing is signed here; the paid job (`--pay`) is `call`'s
 * (src/cli/smoke.ts), run only when every check passed.
 */
import { randomUUID } from "node:crypto";
import { sampleValue } from "../generate/sample-values.js";
import { offersOf402, type PaymentOffer } from "./guard.js";
import { ANSWER_LIMITS, readLimited } from "./guard-read.js";
import { networkFamily, networkId } from "./payer-families.js";
import { baseUrlOf, describeFetchError, readService, type ServiceCapability } from "./service.js";
import { type Expected, shownNetwork, type SmokeExpectations } from "./smoke-expect.js";

const TIMEOUT_MS = 15_000;
/** The unpaid job's deadline: short enough that Solana networks are offered too (they need <= 45 s). */
const OFFER_DEADLINE_SECONDS = 30;

export interface SmokeCheck {
  ok: boolean;
  /** What was checked: "/health", "402 offer network", ... */
  name: string;
  detail: string;
}

export interface SmokeReport {
  checks: SmokeCheck[];
  /** The capability whose 402 was checked, and its example input (what `--pay` pays for). */
  capability?: ServiceCapability;
  input?: unknown;
  offers: PaymentOffer[];
}

/** GET `url` and its JSON body (bounded), or why not. */
async function getJson(url: string): Promise<{ status: number; body: unknown } | string> {
  try {
    const res = await fetch(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = new TextDecoder().decode(await readLimited(res, ANSWER_LIMITS.about, url));
    try {
      return { status: res.status, body: JSON.parse(text) as unknown };
    } catch {
      return `HTTP ${res.status}, not JSON`;
    }
  } catch (error) {
    return `cannot reach it: ${describeFetchError(error)}`;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The three documents: /health ok, the card and /openapi.json served and of their kind. */
async function documents(base: string): Promise<SmokeCheck[]> {
  const checks: SmokeCheck[] = [];
  const health = await getJson(`${base}/health`);
  if (typeof health === "string") checks.push({ ok: false, name: "/health", detail: health });
  else {
    const body = isObj(health.body) ? health.body : {};
    const problems = Array.isArray(body.problems) ? `: ${body.problems.join("; ")}` : "";
    checks.push({
      ok: health.status === 200 && body.status === "ok",
      name: "/health",
      detail: `HTTP ${health.status}, status ${JSON.stringify(body.status)}${problems}`,
    });
  }
  const card = await getJson(`${base}/.well-known/agent-card.json`);
  checks.push(
    typeof card === "string"
      ? { ok: false, name: "agent card", detail: card }
      : {
          ok: card.status === 200 && isObj(card.body) && typeof card.body.name === "string",
          name: "agent card",
          detail: `HTTP ${card.status}${isObj(card.body) && typeof card.body.name === "string" ? `, ${card.body.name}` : ", no name"}`,
        },
  );
  const openapi = await getJson(`${base}/openapi.json`);
  const paths =
    typeof openapi === "string" || !isObj(openapi.body) ? undefined : openapi.body.paths;
  checks.push(
    typeof openapi === "string"
      ? { ok: false, name: "/openapi.json", detail: openapi }
      : {
          ok: openapi.status === 200 && isObj(paths) && "/execute" in paths,
          name: "/openapi.json",
          detail: `HTTP ${openapi.status}${isObj(paths) && "/execute" in paths ? ", describes POST /execute" : ", no /execute path"}`,
        },
  );
  return checks;
}

/** POST /execute without payment: the 402's offers, or a failed check saying what came instead. */
async function unpaidOffers(
  base: string,
  serviceVersion: string,
  capability: ServiceCapability,
  input: unknown,
): Promise<PaymentOffer[] | SmokeCheck> {
  const name = `402 offer (${capability.name})`;
  const body = JSON.stringify({
    service_version: serviceVersion,
    job_id: `smoke-${randomUUID()}`,
    task: { capability: capability.name, input },
    deadline: Math.floor(Date.now() / 1000) + OFFER_DEADLINE_SECONDS,
  });
  try {
    const res = await fetch(`${base}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = new TextDecoder().decode(await readLimited(res, ANSWER_LIMITS.offer, name));
    if (res.status === 200)
      return {
        ok: false,
        name,
        detail: "the job ran unpaid: the service is in dev mode (SERVICE_DEV_MODE)",
      };
    if (res.status !== 402)
      return { ok: false, name, detail: `HTTP ${res.status}: ${text.slice(0, 300)}` };
    const offers = offersOf402(res.headers, text);
    if (!offers?.length)
      return { ok: false, name, detail: `a 402 with no offer: ${text.slice(0, 300)}` };
    return offers;
  } catch (error) {
    return { ok: false, name, detail: error instanceof Error ? error.message : String(error) };
  }
}

/** One field of one offer against what is expected; no expectation is a failure that says what to give. */
function field(
  name: string,
  actual: string,
  expected: Expected<string> | undefined,
  hint: string,
  same: (a: string, b: string) => boolean = (a, b) => a === b,
): SmokeCheck {
  if (!expected)
    return { ok: false, name, detail: `${actual}: nothing to compare it with (${hint})` };
  return same(actual, expected.value)
    ? { ok: true, name, detail: `${actual} (${expected.from})` }
    : { ok: false, name, detail: `${actual}, expected ${expected.value} (${expected.from})` };
}

const sameAddress = (a: string, b: string) =>
  /^0x/i.test(a) ? a.toLowerCase() === b.toLowerCase() : a === b;

/** The checks of every offer: network list, then each offer's asset, payee and price. */
function offerChecks(
  offers: readonly PaymentOffer[],
  expect: SmokeExpectations,
  price: Expected<string>,
): SmokeCheck[] {
  const offered = [...new Set(offers.map((o) => networkId(o.network)))];
  const shown = offered.map(shownNetwork).join(", ");
  const networks = expect.networks;
  const checks: SmokeCheck[] = [
    networks
      ? {
          ok: offered.join(",") === networks.value.join(","),
          name: "402 offer network",
          detail:
            offered.join(",") === networks.value.join(",")
              ? `${shown} (${networks.from})`
              : `${shown}, expected ${networks.value.map(shownNetwork).join(", ")} (${networks.from})`,
        }
      : {
          ok: false,
          name: "402 offer network",
          detail: `${shown}: nothing to compare it with (set X402_NETWORK(S) or pass --network)`,
        },
  ];
  for (const offer of offers) {
    const where = `402 offer ${shownNetwork(offer.network)} v${offer.x402Version}`;
    const svm = networkFamily(offer.network) === "svm";
    checks.push(
      field(
        `${where} asset`,
        offer.asset,
        expect.asset(offer.network),
        "set X402_ASSET",
        sameAddress,
      ),
      field(
        `${where} payTo`,
        offer.payTo,
        svm ? expect.payTo.svm : expect.payTo.evm,
        svm ? "set PAY_TO_SOLANA or pass --pay-to-solana" : "set PAY_TO or pass --pay-to",
        sameAddress,
      ),
      field(`${where} amount`, offer.amount.toString(), price, ""),
    );
  }
  return checks;
}

/** Every check but the paid job, in order. */
export async function smokeChecks(url: string, expect: SmokeExpectations): Promise<SmokeReport> {
  const about = await readService(url).catch((error: unknown) => error as Error);
  const base = baseUrlOf(url);
  const checks = await documents(base);
  if (about instanceof Error) {
    checks.push({ ok: false, name: "/about", detail: about.message });
    return { checks, offers: [] };
  }
  const capability = about.capabilities[0];
  if (!capability) {
    checks.push({ ok: false, name: "/about", detail: "declares no capability" });
    return { checks, offers: [] };
  }
  const input = sampleValue(capability.inputSchema, true);
  const offers = await unpaidOffers(about.baseUrl!, about.serviceVersion, capability, input);
  if (!Array.isArray(offers)) return { checks: [...checks, offers], capability, input, offers: [] };
  const own = expect.manifest?.capabilities.find((c) => c.name === capability.name);
  const price: Expected<string> = own
    ? { value: own.priceAtomic, from: `agent.json: ${own.price} USDC` }
    : { value: capability.priceAtomic, from: `GET /about: ${capability.price} USDC` };
  if (expect.manifest && !own)
    checks.push({
      ok: false,
      name: "/about",
      detail: `"${capability.name}" is not in this project's agent.json`,
    });
  return { checks: [...checks, ...offerChecks(offers, expect, price)], capability, input, offers };
}
