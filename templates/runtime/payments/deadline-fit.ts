/**
 * Deadlines the offered networks can be paid for: a network family may pay only for jobs due soon
 * (Solana: payableWithinSeconds, payments/svm/life.ts; PaymentConfig.payableWithinSeconds, read with
 * the configuration). A transport that gives a job a default deadline
 * (MCP_DEADLINE_SECONDS) beyond what every offered network takes would answer every call that sends no
 * deadline of its own with a PaymentRequired offering nothing: start-up warns of it (unpayableDefaults),
 * and the console page picks a deadline that fits (fittingDeadline). Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../config.js";
import type { Transport } from "../transport.js";

/** `wanted` seconds, or less when every offered network pays only for jobs due sooner. */
export function fittingDeadline(config: ResolvedConfig, wanted: number): number {
  const limit = config.payment?.payableWithinSeconds;
  return limit === undefined ? wanted : Math.min(wanted, limit);
}

/** One warning per served transport whose default deadline no offered network can be paid for. */
export function unpayableDefaults(
  transports: readonly Transport[],
  config: ResolvedConfig,
): string[] {
  if (config.devMode || !config.payment) return [];
  const limit = config.payment.payableWithinSeconds;
  if (limit === undefined) return [];
  const networks = config.payment.networks.map((n) => n.network.caip2).join(", ");
  return transports.flatMap((t) => {
    const fallback = t.defaultDeadline?.(config);
    if (!fallback || fallback.seconds <= limit) return [];
    return [
      `${t.name}: a call that sends no deadline of its own gets one ${fallback.seconds} s away (${fallback.setting}), ` +
        `but ${networks} pays only for jobs due within ${limit} s: such calls are answered with a payment request ` +
        `that offers nothing (it says why). Set ${fallback.setting}=${limit} or less, or offer a network that takes any deadline (an EVM one) too`,
    ];
  });
}
