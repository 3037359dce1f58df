/**
 * The Host check of POST /mcp (DNS-rebinding protection, which the MCP specification asks of HTTP
 * servers): on every interface, the Host header must name this server: a loopback name (localhost,
 * 127.0.0.1, [::1]), PUBLIC_URL's host, a name listed in ALLOWED_HOSTS, or an IP address (a rebinding
 * page can only send its own DNS name), with any port. ALLOWED_HOSTS=* turns the check off.
 *
 * Why /mcp only: a rebinding page gets the reach of a same-origin script. /execute, /about and the
 * discovery documents are open to scripts of every site already (CORS, Access-Control-Allow-Origin *
 * by default), and a paid job's credential is the buyer's own signed payment, which no page gets
 * from the server's network position; the console page at GET / only calls /execute. MCP clients
 * and the SDK expect the check on /mcp. Checking every route would break every deployment that
 * names itself by a Host it was not told about (no PUBLIC_URL) for no gain.
 * Part of your project: edit freely.
 */
import { isIP } from "node:net";
import type { ResolvedConfig } from "../config.js";
import { quote } from "../ops/text.js";
import { isValidHost } from "./base-url.js";

/** Host names every server answers to on /mcp. */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/** The host name of a Host header (no port, lowercase, no final dot); undefined for no valid host. */
function hostNameOf(header: string): string | undefined {
  if (!isValidHost(header)) return undefined;
  return header.replace(/:\d+$/, "").toLowerCase().replace(/\.$/, "");
}

/** An IPv4 address, or an IPv6 address in brackets. */
const isAddress = (name: string): boolean =>
  isIP(name) === 4 || (name.startsWith("[") && isIP(name.slice(1, -1)) === 6);

/**
 * A function that says why a Host header is refused on /mcp, or undefined when it is allowed.
 */
export function createHostCheck(
  config: Pick<ResolvedConfig, "publicUrl" | "allowedHosts">,
): (host: string | undefined) => string | undefined {
  if (config.allowedHosts === "*") return () => undefined;
  const allowed = new Set<string>([...LOOPBACK_HOSTS, ...config.allowedHosts]);
  if (config.publicUrl) allowed.add(new URL(config.publicUrl).hostname.toLowerCase());
  return (host) => {
    const name = host === undefined ? undefined : hostNameOf(host);
    if (name !== undefined && (allowed.has(name) || isAddress(name))) return undefined;
    const what = host === undefined ? "no Host header" : `the Host ${quote(host, 100)}`;
    return (
      `${what} is not a name of this server: /mcp answers only to localhost, 127.0.0.1, [::1], an IP address, ` +
      "PUBLIC_URL's host and the names in ALLOWED_HOSTS " +
      "(DNS-rebinding protection); set PUBLIC_URL to the URL clients use, or list the name in ALLOWED_HOSTS"
    );
  };
}
