/**
 * TRUST_PROXY: which reverse proxies in front of the server are believed when they say who the client
 * is (X-Forwarded-For) and how it came in (X-Forwarded-Proto, X-Forwarded-Host). Unset or "off":
 * none, so a client cannot make itself look like another address by sending those headers. Set, it
 * becomes Express's `trust proxy` (app.ts): a number of proxy hops in front of the server (1: one
 * nginx/Caddy), or a comma-separated list of the proxies' addresses: IPs, CIDR ranges, and the names
 * loopback (127.0.0.1/8, ::1), linklocal and uniquelocal (10/8, 172.16/12, 192.168/16, fc00::/7; where
 * container networks live). "true" (believe anyone) is refused: the client would choose its address.
 * Part of your project: edit freely.
 */
import { isIP } from "node:net";
import type { Reader } from "./settings.js";

/** false: no proxy believed; a number: that many hops; a list: the proxies' addresses and ranges. */
export type TrustProxy = false | number | string[];

const NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** One entry of the list: a name Express knows, an IP, or an IP/prefix within the address's bits. */
function validEntry(entry: string): boolean {
  if (NAMES.has(entry)) return true;
  const [address = "", prefix, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** TRUST_PROXY read and checked; a problem names the variable and the forms it takes. */
export function resolveTrustProxy(read: Reader): TrustProxy {
  const value = read.fromEnv("TRUST_PROXY").value?.trim();
  if (value === undefined || value === "" || value === "off" || value === "false") return false;
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 10) return Number(value);
  const entries = value
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  const bad = entries.filter((e) => !validEntry(e));
  if (entries.length > 0 && bad.length === 0) return entries;
  read.problems.push(
    `TRUST_PROXY is ${JSON.stringify(value.slice(0, 80))}: set it to the number of proxies in front of this server (1 to 10), ` +
      "or their addresses separated by commas (IPs, CIDR ranges such as 10.0.0.0/8, or loopback, linklocal, uniquelocal); " +
      'unset or "off", X-Forwarded-For is ignored ("true", believing any sender, is not accepted)',
  );
  return false;
}
