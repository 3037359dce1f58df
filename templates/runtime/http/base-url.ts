/**
 * The service's own URL, wherever an answer names it (the 402's `resource`, the discovery documents):
 * PUBLIC_URL, else the URL the request came in on (behind a proxy TRUST_PROXY believes, the URL the
 * proxy says the client used: X-Forwarded-Proto and X-Forwarded-Host). The one place that derives it from a request, so
 * every route follows one rule. Part of your project: edit freely.
 */
import { isIPv6 } from "node:net";
import type { Request } from "express";
import { ValidationError } from "../errors.js";
import type { ResolvedConfig } from "../config.js";
import { quote } from "../ops/text.js";

/**
 * A Host header that makes a valid URL (RFC 3986 `host [":" port]`, which the documents' `format: uri`
 * promises): a name or IPv4 address of unreserved characters, or a bracketed IPv6 address; a port
 * of at most 65535. Stricter than RFC 3986's reg-name (no `%`, `!`, `'`, `;`...): every host name
 * in use fits, and what the documents show in a curl line stays safe to paste into a shell.
 */
const HOST = /^(?:([A-Za-z0-9._~-]+)|\[([0-9A-Fa-f:.]+)\])(?::(\d{1,5}))?$/;

/** True when `host` (a Host header's value) can be written into a URL. */
export function isValidHost(host: string): boolean {
  const match = HOST.exec(host);
  if (!match) return false;
  // By index: destructuring the match would make tsc check RegExpExecArray's iterator types.
  const ipv6 = match[2];
  const port = match[3];
  if (ipv6 !== undefined && !isIPv6(ipv6)) return false;
  return port === undefined || Number(port) <= 65_535;
}

/**
 * PUBLIC_URL, else `<protocol>://<Host header>`. A client chooses its Host header freely: one that
 * is not a host (e.g. `a{b}`) would be written into the answer as an invalid URL, so the request is
 * refused with a 400 validation error instead, whatever the route.
 */
export function baseUrlOf(config: ResolvedConfig, req: Request): string {
  if (config.publicUrl) return config.publicUrl;
  // req.host: the Host header, or X-Forwarded-Host when it comes from a proxy TRUST_PROXY believes
  // (as req.protocol believes X-Forwarded-Proto only then).
  const host = req.host;
  if (host === undefined || !isValidHost(host))
    throw new ValidationError(
      `the Host header ${host === undefined ? "is missing" : `${quote(host, 100)} is not a valid host name`}, so this service's URL cannot be written into the answer; send a valid Host (or set PUBLIC_URL)`,
    );
  return `${req.protocol}://${host}`;
}
