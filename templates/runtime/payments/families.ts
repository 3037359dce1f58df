/**
 * The network families of this project (features.ts's FAMILIES), looked up: which family a network
 * id belongs to, the names they know, and, for the optional families this project lacks, the
 * fail-closed message naming the feature to add (features.ts's FAMILY_NAMES). Part of your project:
 * edit freely.
 */
import { FAMILIES, FAMILY_NAMES, hasFeature, missingFeature } from "../features.js";
import type { Reader } from "../ops/settings.js";
import type { PaymentOptions } from "./config.js";
import type { Listed } from "./config-list.js";
import type { NetworkFamily } from "./family.js";
import type { ParsedNetwork } from "./networks.js";

/** The family whose network `name` is (a known name or a CAIP-2 id), if any. */
export function familyOf(name: string): NetworkFamily | undefined {
  return FAMILIES.find((f) => f.parse(name) !== undefined);
}

/** The family with this id (what payments and configured networks carry). */
export function familyById(id: string): NetworkFamily {
  const family = FAMILIES.find((f) => f.id === id);
  if (!family) throw new Error(`no network family ${JSON.stringify(id)} in features.ts`); // configured by it: unreachable
  return family;
}

/** A network name parsed by its family; undefined when no family of this project knows it. */
export function parseNetwork(name: string): ParsedNetwork | undefined {
  for (const family of FAMILIES) {
    const parsed = family.parse(name);
    if (parsed) return parsed;
  }
  return undefined;
}

/** The per-network settings (`<setting>_<NET>`) of every family, the longer names first. */
export function perNetworkSettings(): string[] {
  const names = new Set(FAMILIES.flatMap((f) => f.perNetworkSettings));
  return [...names].sort((a, b) => b.length - a.length);
}

/** Every family, each saying whether a listed network is its (none listed or known: the first one is). */
export function usedFamilies(written: readonly string[]) {
  const used = FAMILIES.map((family) => ({
    family,
    used: written.some((w) => family.parse(w) !== undefined),
  }));
  if (!used.some((u) => u.used) && used[0]) used[0].used = true;
  return used;
}

/** What /llms.txt's "Pay" adds for the families of these offered networks (CAIP-2 ids). */
export function familyNotes(caip2s: readonly string[]): string[] {
  return FAMILIES.flatMap((f) =>
    f.llmsNote && caip2s.some((c) => f.parse(c) !== undefined) ? [f.llmsNote()] : [],
  );
}

/**
 * The furthest deadline (seconds from now) some of these networks can be paid for: undefined when one
 * of them takes any deadline (EVM), else the largest of their families' limits (Solana only: 30 s).
 */
export function payableWithin(networks: readonly { family: string }[]): number | undefined {
  const limits = networks.map((n) => familyById(n.family).payableWithinSeconds);
  if (limits.length === 0 || limits.some((l) => l === undefined)) return undefined;
  return Math.max(...(limits as number[]));
}

/** Every name a family knows, then every id shape: '"base", ..., "eip155:<chainId>" or "solana:<...>"'. */
export function networkNames(): string {
  const names = [
    ...FAMILIES.flatMap((f) => f.names.known),
    ...FAMILIES.flatMap((f) => f.names.shapes),
  ].map((n) => JSON.stringify(n));
  const last = names.pop()!;
  return names.length > 0 ? `${names.join(", ")} or ${last}` : last;
}

/** The optional family a network name belongs to while this project lacks it. */
export function absentFamilyOf(written: string) {
  return FAMILY_NAMES.find((f) => !hasFeature(f.feature) && f.networks.test(written));
}

/** Configuration naming a family this project lacks (a network, a setting, an option): fail closed. */
export function absentFamilyProblems(
  listed: readonly Listed[],
  options: Partial<PaymentOptions>,
  read: Reader,
): string[] {
  const problems: string[] = [];
  for (const f of FAMILY_NAMES) {
    if (hasFeature(f.feature)) continue;
    for (const { written, setting } of listed)
      if (f.networks.test(written))
        problems.push(missingFeature(f.feature, `${setting.name} names ${written}`));
    for (const env of f.settings)
      if (read.fromEnv(env).value !== undefined)
        problems.push(missingFeature(f.feature, `${env} is set: it is for ${f.label}`));
    for (const key of f.options)
      if ((options as Record<string, unknown>)[key] !== undefined)
        problems.push(
          missingFeature(f.feature, `option payment.${key} is set: it is for ${f.label}`),
        );
  }
  return problems;
}
