/**
 * Keeping secrets out of what this server says: every message, log line and answer that may hold a URL or
 * something a third party wrote back.
 *   - redactUrl: a URL as messages show it: scheme, host and path, never its user info or query (an RPC or
 *     facilitator URL often carries a password or an `api-key`), path segments that look like keys
 *     (Alchemy's /v2/<key>, Infura's /v3/<key>) replaced.
 *   - scrubUrl: a text (an error message) with that URL, and each secret part of it, taken out.
 *   - redactText / redactDeep: a text, or every string of a parsed JSON answer (keys included), with the
 *     secrets replaced, in whatever encoding they were written: as is, percent-encoded, JSON/JS `\u`
 *     escapes, HTML character references (decoded before matching, up to 4 layers), base64 (at every byte
 *     alignment, so inside a longer base64 text too) or hex.
 * Part of your project: edit freely.
 */

/** What replaces a secret. */
export const REDACTED = "[redacted]";

/** A path segment that looks like a key: 20+ URL-safe characters, letters and digits mixed. */
const KEY_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_~.-]{20,}$/;

/** A URL as messages show it ("origin": scheme and host only); "(not a URL)" when it cannot be read. */
export function redactUrl(url: string, parts: "path" | "origin" = "path"): string {
  if (!URL.canParse(url)) return "(not a URL)";
  const u = new URL(url);
  const base = `${u.protocol}//${u.host}`;
  if (parts === "origin") return base;
  const path = u.pathname
    .split("/")
    .map((segment) => (KEY_LIKE.test(safeDecode(segment)) ? REDACTED : segment))
    .join("/");
  return `${base}${path}`;
}

/** A query parameter whose name says it holds a credential (api-key, apikey, key, token, access_token...). */
const SECRET_PARAM = /key|token|secret|pass|auth|sig|session|cred/i;

/**
 * The secret parts of a URL: user, password, the values of credential-like query parameters (and any
 * key-like value), key-like path segments. Other query values ("network=base") are not: they would be
 * taken out of every answer.
 */
export function urlSecrets(url: string): string[] {
  if (!URL.canParse(url)) return [url];
  const u = new URL(url);
  const parts = [u.username, u.password, safeDecode(u.username), safeDecode(u.password)];
  for (const [name, value] of u.searchParams)
    if (SECRET_PARAM.test(name) || KEY_LIKE.test(value)) parts.push(value);
  for (const segment of u.pathname.split("/"))
    if (KEY_LIKE.test(safeDecode(segment))) parts.push(segment, safeDecode(segment));
  return parts.filter((p) => p.length >= 4);
}

/** `text` without `url`: the URL itself as redactUrl shows it, and any of its secret parts elsewhere. */
export function scrubUrl(text: string, url: string): string {
  let out = text;
  const spellings = URL.canParse(url) ? [url, new URL(url).href] : [url];
  for (const s of spellings.sort((a, b) => b.length - a.length))
    out = out.replaceAll(s, redactUrl(url));
  return redactText(out, urlSecrets(url));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Base64 of `bytes` as it appears inside any base64 text that holds them at a byte offset of `k` mod 3. */
function base64Core(bytes: Buffer, k: number, url: boolean): string {
  const all = Buffer.concat([Buffer.alloc(k), bytes]);
  let text = all.toString(url ? "base64url" : "base64").replace(/=+$/, "");
  const tail = all.length % 3; // the last character also holds bits of what follows
  if (tail !== 0) text = text.slice(0, -1);
  return text.slice([0, 2, 3][k]);
}

/** Every spelling of each secret that is matched in a text, longest first. */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    forms.add(secret);
    const bytes = Buffer.from(secret, "utf8");
    const derived = [
      encodeURIComponent(secret),
      JSON.stringify(secret).slice(1, -1),
      bytes.toString("hex"),
      bytes.toString("hex").toUpperCase(),
    ];
    for (const k of [0, 1, 2])
      derived.push(base64Core(bytes, k, false), base64Core(bytes, k, true));
    for (const form of derived) if (form.length >= 8) forms.add(form);
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  plus: "+",
  sol: "/",
  equals: "=",
  colon: ":",
};

/** One layer of escapes undone: \uXXXX, \xXX, \/, percent-encoding, HTML character references. */
function decodeOnce(text: string): string {
  return text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\\//g, "/")
    .replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => safeDecode(run))
    .replace(/&#(\d{1,7});/g, (m, dec: string) => fromCodePoint(Number(dec), m))
    .replace(/&#x([0-9a-fA-F]{1,6});/gi, (m, hex: string) => fromCodePoint(parseInt(hex, 16), m))
    .replace(/&([a-z]+);/gi, (m, name: string) => NAMED[name.toLowerCase()] ?? m);
}

function fromCodePoint(code: number, otherwise: string): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : otherwise;
}

function replaceForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.replaceAll(form, REDACTED);
  return out;
}

/**
 * `text` with every secret replaced. When a secret only shows once an escape layer is undone, the text
 * is shown decoded to that layer, with the secret replaced; a text that holds no secret is unchanged.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  return secrets.length === 0 ? text : redactForms(text, secretForms(secrets));
}

function redactForms(text: string, forms: readonly string[]): string {
  let out = replaceForms(text, forms);
  let layer = out;
  for (let i = 0; i < 4; i++) {
    const next = decodeOnce(layer);
    if (next === layer) break;
    layer = replaceForms(next, forms);
    if (layer !== next) out = layer;
  }
  return out;
}

/** Nesting past this depth is dropped from a redacted value (a real answer is a few levels deep). */
const MAX_DEPTH = 64;

/** A parsed JSON value with every string in it (object keys included) passed through redactText. */
export function redactDeep(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  const forms = secretForms(secrets);
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return redactForms(v, forms);
    if (typeof v !== "object" || v === null) return v;
    if (depth >= MAX_DEPTH) return undefined;
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    // fromEntries: a "__proto__" key stays an own property.
    return Object.fromEntries(
      Object.entries(v).map(([key, item]) => [redactForms(key, forms), walk(item, depth + 1)]),
    );
  };
  return walk(value, 0);
}
