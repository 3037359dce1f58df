/**
 * How documents and pages name the offered networks: "base-sepolia (eip155:84532)", and " on A, B or
 * C" after a price. A leaf of discovery/ (no family lookups), so transports may use it freely.
 * Part of your project: edit freely.
 */
import type { PaymentFacts } from "./facts.js";

/** "base-sepolia (eip155:84532)", or the CAIP-2 id alone when it has no other name. */
export function networkLabel(network: { caip2: string; v1Name: string }): string {
  return network.v1Name === network.caip2 ? network.caip2 : `${network.v1Name} (${network.caip2})`;
}

/** " on base-sepolia (eip155:84532)", " on A, B or C" for several networks, or "" when not configured. */
export function whereLabel(facts: PaymentFacts): string {
  const all = facts.networks ?? (facts.network ? [facts.network] : []);
  if (all.length === 0) return "";
  const labels = all.map(networkLabel);
  const last = labels.pop()!;
  return ` on ${labels.length > 0 ? `${labels.join(", ")} or ${last}` : last}`;
}
