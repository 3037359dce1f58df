/**
 * Where the server listens (HOST), which names it answers to on POST /mcp (ALLOWED_HOSTS, with
 * PUBLIC_URL's host and the loopback names), and which proxies in front of it are believed
 * (TRUST_PROXY): read and checked like every other setting (../config.ts). The Host check itself is
 * http/host-check.ts; TRUST_PROXY's entries are parsed in ops/trust-proxy.ts. Part of your project: edit freely.
 */
import { isIP } from "node:net";
import type { Reader } from "./settings.js";
import { resolveTrustProxy, type TrustProxy } from "./trust-proxy.js";

/** HOST: the listen address; ALLOWED_HOSTS: extra host names POST /mcp answers to. */
export interface HostConfig {
  /** The address to listen on (HOST); undefined: every interface (Node's default). */
  host?: string;
  /**
   * Host names (lowercase, IPv6 in brackets) POST /mcp accepts in the Host header besides the loopback
   * names and PUBLIC_URL's host; "*" accepts any (the DNS-rebinding check is off).
   */
  allowedHosts: string[] | "*";
  /**
   * TRUST_PROXY: which proxies' X-Forwarded-For/-Proto/-Host are believed (Express's `trust proxy`):
   * false (the default: none), a number of hops, or addresses/CIDRs/loopback|linklocal|uniquelocal.
   */
  trustProxy: TrustProxy;
}

/** One label of a DNS name (underscores too: container and compose service names use them). */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A host name as a Host header carries it, without port (a DNS name, an IPv4 or a bracketed IPv6), lowercase. */
function hostName(entry: string): string | undefined {
  const name = entry.trim().toLowerCase().replace(/\.$/, "");
  if (name.startsWith("[") && name.endsWith("]"))
    return isIP(name.slice(1, -1)) === 6 ? name : undefined;
  if (name.length === 0 || name.length > 253) return undefined;
  return name.split(".").every((label) => LABEL.test(label)) ? name : undefined;
}

/** HOST (default: every interface), TRUST_PROXY (default: none) and ALLOWED_HOSTS (names, or "*"). */
export function resolveHosts(read: Reader): HostConfig {
  const host = read.fromEnv("HOST").value;
  if (host !== undefined && isIP(host) === 0 && hostName(host) === undefined)
    read.problems.push(
      `HOST is ${JSON.stringify(host.slice(0, 80))}: set it to the address to listen on, e.g. 127.0.0.1 (this machine only, behind a local proxy) or 0.0.0.0 (every IPv4 interface); unset, the server listens on every interface`,
    );
  const listed = read.fromEnv("ALLOWED_HOSTS").value;
  const names: string[] = [];
  const config: HostConfig = { allowedHosts: names, trustProxy: resolveTrustProxy(read) };
  if (host !== undefined) config.host = host;
  if (listed === undefined) return config;
  if (listed.trim() === "*") return { ...config, allowedHosts: "*" };
  const bad: string[] = [];
  for (const entry of listed.split(",")) {
    if (entry.trim() === "") continue;
    const name = hostName(entry);
    if (name === undefined) bad.push(JSON.stringify(entry.trim().slice(0, 80)));
    else if (!names.includes(name)) names.push(name);
  }
  if (bad.length > 0)
    read.problems.push(
      `ALLOWED_HOSTS has ${bad.join(", ")}: list host names without scheme or port, separated by commas, e.g. agent.example.com,agent.internal (or "*" to accept any Host on /mcp)`,
    );
  return config;
}

/** Whether a URL points at this machine: localhost (and *.localhost), 127.0.0.0/8 or [::1]; not a URL: false. */
export function isLoopbackUrl(url: string | undefined): boolean {
  let host: string;
  try {
    host = new URL(url ?? "").hostname; // an IPv6 hostname keeps its brackets
  } catch {
    return false;
  }
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    host.startsWith("127.")
  );
}

/**
 * Production's start-up warning when PUBLIC_URL names this machine only (isLoopbackUrl): the 402
 * offers and discovery documents then give buyers elsewhere an address they cannot reach.
 */
export function loopbackPublicUrl(publicUrl: string | undefined): string | undefined {
  if (!isLoopbackUrl(publicUrl)) return undefined;
  return `PUBLIC_URL is ${publicUrl}, an address of this machine only: the 402 offers and discovery documents name it, so buyers elsewhere cannot reach the service from them; set PUBLIC_URL to the address buyers use (with compose.yaml: in .env.production), or leave it unset to name the address each request came in on`;
}
