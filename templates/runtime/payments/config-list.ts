/**
 * Which networks payments are taken on, in the seller's order: X402_NETWORK (one) or X402_NETWORKS
 * (several, comma-separated), never both, and what a name no family knows is told. The names come
 * from the families of features.ts. Part of your project: edit freely.
 */
import type { Reader, Setting } from "../ops/settings.js";
import { networkNames, perNetworkSettings } from "./families.js";
import { networkSettingSuffix } from "./networks.js";
import type { PaymentOptions } from "./config.js";

/** One listed network as written, and the setting that listed it. */
export interface Listed {
  written: string;
  setting: Setting;
}

/** X402_NETWORKS or X402_NETWORK (never both): the networks as written, in order. */
export function readNetworkList(
  options: Partial<PaymentOptions>,
  devMode: boolean,
  read: Reader,
): Listed[] {
  const problems = read.problems;
  const one = read.text(options.network, "payment.network", "X402_NETWORK");
  const listSetting: Setting =
    options.networks !== undefined
      ? { value: options.networks.join(","), name: "option payment.networks" }
      : read.fromEnv("X402_NETWORKS");
  if (one.value !== undefined && listSetting.value !== undefined) {
    problems.push(
      `${one.name} and ${listSetting.name} are both set: keep one (X402_NETWORKS lists several networks in preference order, X402_NETWORK names one)`,
    );
    return [];
  }
  if (one.value !== undefined) return [{ written: one.value, setting: one }];
  if (listSetting.value === undefined) {
    if (!devMode)
      problems.push(
        `X402_NETWORK is not set: set it to ${networkNames().replace(" or ", ", ")} (or X402_NETWORKS to several, comma-separated, in preference order); there is deliberately no default`,
      );
    return [];
  }
  const entries = listSetting.value.split(",").map((e) => e.trim());
  if (entries.some((e) => e === "")) {
    problems.push(
      `${listSetting.name} is ${JSON.stringify(listSetting.value)}: list networks separated by single commas, e.g. "base,arbitrum"`,
    );
    return [];
  }
  return entries.map((written) => ({ written, setting: listSetting }));
}

/** A listed name no family knows: say which names there are. */
export function unknownNetwork(written: string, setting: Setting, several: boolean, read: Reader) {
  read.problems.push(
    several
      ? `${setting.name} lists ${JSON.stringify(written)}: use ${networkNames()}`
      : `${setting.name} is ${JSON.stringify(written)}: use ${networkNames()}`,
  );
}

/**
 * A network's own setting (one of its family's perNetworkSettings) naming no listed network
 * (X402_RPC_URL_BASESEPOLIA for base-sepolia): read by nothing, it would silently leave that network
 * on its defaults (no RPC: no on-chain checks).
 */
export function strayNetworkSettings(listed: readonly Listed[], read: Reader): void {
  if (listed.length === 0) return;
  const suffixes = listed.map((l) => networkSettingSuffix(l.written));
  const own = perNetworkSettings(); // the families' (`<setting>_<NET>`), the longer names first
  for (const name of read.names()) {
    const prefix = own.find((p) => name.startsWith(`${p}_`));
    if (!prefix || own.includes(name)) continue;
    if (suffixes.includes(name.slice(prefix.length + 1))) continue;
    read.problems.push(
      `${name} is set, but no listed network's settings end in _${name.slice(prefix.length + 1)} (${listed[0]!.setting.name}: ${listed.map((l) => l.written).join(", ")}; their ${prefix} settings: ${suffixes.map((s) => `${prefix}_${s}`).join(", ")}): rename it, list its network, or unset it`,
    );
  }
}
