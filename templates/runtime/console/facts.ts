/**
 * What the console page states about where and how it is paid, read from the configuration: each
 * offered network with its payee, its token (the only offers the page pays: console/offer-script.ts)
 * and whether its chain is local (an RPC endpoint on this machine, or only facilitators on this
 * machine, as `dev:paid`'s: no public explorer has seen its transactions), the deadline its jobs are
 * given (one every offered network can be paid for: payments/deadline-fit.ts), and the endpoints its
 * footer lists. Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import { networkLabel } from "../discovery/labels.js";
import { isLoopbackUrl } from "../ops/config-hosts.js";
import { fittingDeadline } from "../payments/deadline-fit.js";
import type { NetworkPaymentConfig } from "../payments/config.js";
import type { NetworkFacts } from "../payments/family.js";

/** The deadline the page asks for when every network takes it (a person waits about this long at most). */
const CONSOLE_DEADLINE_SECONDS = 120;

export interface ConsoleNetwork {
  caip2: string;
  /** "base-sepolia (eip155:84532)". */
  label: string;
  payTo: string;
  /** Its RPC endpoint is on this machine (dev:paid's chain): transactions are shown without an explorer link. */
  local: boolean;
  /** EVM: the chain id. */
  chainId?: number;
  /** Its token as configured (address, and EVM's EIP-712 name and version): the only one the page pays in. */
  asset?: { address: string; name?: string; version?: string };
}

export interface ConsoleFacts {
  /** Seconds from now a job's deadline is. */
  deadlineSeconds: number;
  /** The offered networks, in the seller's order (none in dev mode without payment settings). */
  networks: ConsoleNetwork[];
  /** The public endpoints, with their methods, for the footer. */
  endpoints: ReadonlyArray<{ path: string; methods: string }>;
}

export function consoleFacts(
  config: ResolvedConfig,
  endpoints: ConsoleFacts["endpoints"] = [],
  networkFacts?: (net: NetworkPaymentConfig) => NetworkFacts,
): ConsoleFacts {
  const networks = (config.payment?.networks ?? []).map((n) => {
    const route = n.settlement as { kind: string; rpcUrl?: string; urls?: string[] } | undefined;
    // dev:paid without the onchain feature settles through a facilitator it runs on 127.0.0.1.
    const localFacilitators =
      route?.kind === "facilitator" && (route.urls ?? []).every(isLoopbackUrl);
    // Its family says its chain id and token (EVM: with the EIP-712 domain the page signs for); not
    // told, the page pays nothing there.
    const { chainId, asset } = networkFacts?.(n) ?? {};
    return {
      caip2: n.network.caip2,
      label: networkLabel(n.network),
      payTo: n.payTo,
      local: isLoopbackUrl(n.rpcUrl) || isLoopbackUrl(route?.rpcUrl) || localFacilitators,
      ...(chainId !== undefined && { chainId }),
      asset,
    };
  });
  return {
    deadlineSeconds: fittingDeadline(config, CONSOLE_DEADLINE_SECONDS),
    networks,
    endpoints,
  };
}
