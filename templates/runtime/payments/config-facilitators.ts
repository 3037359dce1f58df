/**
 * The settlement route every family may use: the x402 facilitators of X402_FACILITATOR_URL, with
 * their credentials (CDP_API_KEY_*, X402_FACILITATOR_AUTH, X402_FACILITATOR_HEADERS), and the
 * settlement timeout. Never repeats a secret. Part of your project: edit freely.
 */
import type { Reader, Setting } from "../ops/settings.js";
import { redactUrl } from "../ops/redact.js";
import type { FacilitatorRoute, PaymentOptions } from "./config.js";
import {
  CDP_HOST,
  cdpKeyProblem,
  type FacilitatorAuth,
  missingCdpAuth,
  parseFacilitatorHeaders,
} from "./facilitator-credentials.js";

const DEFAULT_SETTLE_TIMEOUT_SECONDS = 30;

/** X402_FACILITATOR_URL (and its route when set and right) and X402_SETTLE_TIMEOUT_SECONDS. */
export function readFacilitators(options: Partial<PaymentOptions>, read: Reader) {
  const setting = read.text(
    options.facilitatorUrl,
    "payment.facilitatorUrl",
    "X402_FACILITATOR_URL",
  );
  const timeoutSeconds = read.count(
    options.settleTimeoutSeconds,
    "payment.settleTimeoutSeconds",
    "X402_SETTLE_TIMEOUT_SECONDS",
    {
      min: 1,
      max: 600,
      fallback: DEFAULT_SETTLE_TIMEOUT_SECONDS,
      hint: `set it to a whole number of seconds from 1 to 600 (default ${DEFAULT_SETTLE_TIMEOUT_SECONDS})`,
    },
  );
  const urls = facilitatorList(setting, read);
  const auth = facilitatorAuth(urls ?? [], read);
  const route: FacilitatorRoute | undefined =
    urls !== undefined && auth !== undefined
      ? { kind: "facilitator", url: urls[0]!, urls, auth }
      : undefined;
  return { facilitator: route ? { setting, route } : { setting }, timeoutSeconds };
}

/**
 * X402_FACILITATOR_URL: one facilitator base URL, or several separated by commas. Credentials in a
 * URL (https://user:pass@host/...) are sent as HTTP Basic authorization, never shown.
 */
function facilitatorList(s: Setting, read: Reader): string[] | undefined {
  if (s.value === undefined) return undefined;
  const parts = s.value.split(",").map((p) => p.trim());
  const urls: string[] = [];
  const what =
    "the facilitator's base URL (it serves /verify and /settle), e.g. https://x402.org/facilitator, or several separated by commas";
  parts.forEach((part, i) => {
    const name = parts.length > 1 ? `${s.name} entry ${i + 1}` : s.name;
    if (part === "") {
      read.problems.push(`${name} is empty: set it to ${what}`);
      return;
    }
    // A URL holding credentials is never repeated.
    const secret = URL.canParse(part) && /@/.test(part);
    const url = read.url({ value: part, name }, what, secret);
    if (url !== undefined) urls.push(url);
  });
  if (urls.length !== parts.length) return undefined;
  const where = urls
    .map((u) => new URL(u))
    .map((u) => `${u.origin}${u.pathname.replace(/\/+$/, "")}`);
  const twice = urls.find((_, i) => where.indexOf(where[i]!) !== i);
  if (twice !== undefined) {
    read.problems.push(
      `${s.name} lists ${redactUrl(twice).replace(/\/+$/, "")} twice: list each facilitator once`,
    );
    return undefined;
  }
  return urls;
}

/** CDP_API_KEY_ID + CDP_API_KEY_SECRET, X402_FACILITATOR_AUTH and X402_FACILITATOR_HEADERS. Never repeats a secret. */
function facilitatorAuth(urls: readonly string[], read: Reader): FacilitatorAuth | undefined {
  const problems = read.problems;
  const before = problems.length;
  const keyId = read.fromEnv("CDP_API_KEY_ID");
  const keySecret = read.fromEnv("CDP_API_KEY_SECRET");
  const mode = read.fromEnv("X402_FACILITATOR_AUTH");
  const headerText = read.fromEnv("X402_FACILITATOR_HEADERS");
  const absent = missingCdpAuth(
    { keyId: keyId.value, keySecret: keySecret.value, mode: mode.value },
    urls,
  );
  if (absent) return void problems.push(absent);
  if (urls.length === 0) return { headers: [] }; // no facilitator: nothing is sent anywhere

  const everywhere = mode.value === "cdp";
  checkCdpKey(urls, { keyId, keySecret, mode }, problems);
  const headers =
    headerText.value !== undefined
      ? facilitatorHeaders(headerText, headerText.value, urls, read)
      : [];
  checkOneAuthorization(urls, keyId.value !== undefined, everywhere, headers, problems);
  if (problems.length > before) return undefined;
  return {
    headers,
    ...(keyId.value !== undefined && keySecret.value !== undefined
      ? { cdp: { keyId: keyId.value, keySecret: keySecret.value, everywhere } }
      : {}),
  };
}

/** X402_FACILITATOR_AUTH's value, CDP_API_KEY_ID and _SECRET set together and wanted where they go. */
function checkCdpKey(
  urls: readonly string[],
  { keyId, keySecret, mode }: { keyId: Setting; keySecret: Setting; mode: Setting },
  problems: string[],
): void {
  const everywhere = mode.value === "cdp";
  if (mode.value !== undefined && mode.value !== "cdp")
    problems.push(
      `${mode.name} is ${JSON.stringify(mode.value)}: set it to "cdp" to send CDP JWTs to every facilitator, or leave it unset (CDP JWTs go to ${CDP_HOST} only)`,
    );
  if ((keyId.value === undefined) !== (keySecret.value === undefined))
    problems.push(
      `${keyId.value === undefined ? keyId.name : keySecret.name} is not set but ${keyId.value === undefined ? keySecret.name : keyId.name} is: set both (the CDP API key's id and its private key) or neither`,
    );
  const cdpHosts = urls.filter((u) => new URL(u).hostname === CDP_HOST);
  if (everywhere && keyId.value === undefined && keySecret.value === undefined)
    problems.push(
      `${mode.name} is "cdp" but CDP_API_KEY_ID and CDP_API_KEY_SECRET are not set: set them to your CDP API key`,
    );
  if (
    !everywhere &&
    cdpHosts.length > 0 &&
    keyId.value === undefined &&
    keySecret.value === undefined
  )
    problems.push(
      `X402_FACILITATOR_URL names Coinbase's facilitator (${CDP_HOST}), which wants a CDP API key: set CDP_API_KEY_ID and CDP_API_KEY_SECRET (create a key at portal.cdp.coinbase.com)`,
    );
  if (keySecret.value !== undefined) {
    const problem = cdpKeyProblem(keySecret.value);
    if (problem) problems.push(`${keySecret.name} ${problem}`);
  }
}

/** X402_FACILITATOR_HEADERS, each header scoped to one facilitator of X402_FACILITATOR_URL. */
function facilitatorHeaders(
  headerText: Setting,
  text: string,
  urls: readonly string[],
  read: Reader,
): FacilitatorAuth["headers"] {
  const parsed = parseFacilitatorHeaders(text, headerText.name);
  read.problems.push(...parsed.problems);
  const headers = parsed.headers;
  const hosts = urls.map((u) => new URL(u));
  for (const h of headers) {
    if (h.host === undefined && urls.length > 1)
      read.problems.push(
        `${headerText.name} sends ${h.name} without naming a facilitator, and X402_FACILITATOR_URL lists ${urls.length}: ` +
          `scope it to the facilitator that wants it, e.g. "[${hosts[0]!.host}] ${h.name}: ..." (a key for one facilitator is never sent to another)`,
      );
    if (h.host !== undefined && !hosts.some((u) => u.host === h.host || u.hostname === h.host))
      read.problems.push(
        `${headerText.name} scopes ${h.name} to ${h.host}, which is not a facilitator in X402_FACILITATOR_URL (${hosts.map((u) => u.host).join(", ")})`,
      );
  }
  return headers;
}

/** One Authorization header per request: URL credentials and CDP JWTs do not mix on one facilitator. */
function checkOneAuthorization(
  urls: readonly string[],
  cdpKey: boolean,
  everywhere: boolean,
  headers: FacilitatorAuth["headers"],
  problems: string[],
): void {
  for (const u of urls.map((x) => new URL(x))) {
    const basic = u.username !== "" || u.password !== "";
    const jwt = cdpKey && (everywhere || u.hostname === CDP_HOST);
    const header = headers.some(
      (h) =>
        h.name.toLowerCase() === "authorization" &&
        (h.host === undefined || h.host === u.host || h.host === u.hostname),
    );
    if ([basic, jwt, header].filter(Boolean).length > 1)
      problems.push(
        `the facilitator at ${redactUrl(u.href)} would get two Authorization headers (${[basic ? "credentials in X402_FACILITATOR_URL" : "", jwt ? "a CDP JWT" : "", header ? "X402_FACILITATOR_HEADERS" : ""].filter(Boolean).join(" and ")}): keep one`,
      );
  }
}
