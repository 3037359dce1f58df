/**
 * The Solana family, as the core sees it (../family.ts): its network ids (svm/networks.ts), its
 * settings (svm/config.ts), its scheme (svm/scheme.ts), its route checks (svm/route-check.ts, loaded
 * when first used) and its discovery facts. features.ts registers it (`feature: solana`). Part of
 * your project: edit freely.
 */
import type { NetworkFamily } from "../family.js";
import { SETTLEMENT_MARGIN_SECONDS } from "../settlement.js";
import { readSolanaConfig } from "./config.js";
import { SOLANA_PAYABLE_WITHIN_SECONDS, SOLANA_PAYMENT_LIFE_SECONDS } from "./life.js";
import { parseSolanaNetwork, SOLANA_NETWORKS } from "./networks.js";
import { createSvmScheme, describeSolanaRoute, type RoutedSolanaNetwork } from "./scheme.js";

export const svmFamily: NetworkFamily = {
  id: "svm",
  names: { known: Object.keys(SOLANA_NETWORKS), shapes: ["solana:<genesis hash prefix>"] },
  perNetworkSettings: ["X402_RPC_URL", "X402_ASSET"],
  parse: parseSolanaNetwork,
  payableWithinSeconds: SOLANA_PAYABLE_WITHIN_SECONDS,
  readConfig: readSolanaConfig,
  createScheme: (net, settings, deps) =>
    createSvmScheme(net as RoutedSolanaNetwork, settings, deps),
  describeRoute: (net) => describeSolanaRoute(net as RoutedSolanaNetwork),
  async checkRoute(net, config, logger) {
    const { checkSolanaRoute } = await import("./route-check.js");
    await checkSolanaRoute(
      net as RoutedSolanaNetwork,
      config.payment!.settleTimeoutSeconds,
      logger,
    );
  },
  // Every Solana network has an RPC endpoint (direct) or a facilitator route: all are watched.
  watch: (_nets, _config, deps) => ({
    probe: (net, timeoutMs) => async () => {
      const { probeSolanaRoute } = await import("./route-check.js");
      return probeSolanaRoute(net as RoutedSolanaNetwork, timeoutMs, deps);
    },
    texts: {
      fee_payer_unfunded: (where) =>
        `Solana fee payer${where === undefined ? "" : ` on ${where}`} out of SOL: ${where === undefined ? "paid jobs" : "paid jobs on that network"} cannot settle until it is funded`,
    },
  }),
  facts: (net) => ({ asset: { address: net.network.asset } }),
  llmsNote: () =>
    `   On Solana, the payment is a USDC transfer transaction signed by the payer, whose fee payer is the 402's \`extra.feePayer\` (the official \`@x402/svm\` client builds it; x402 v1 clients such as \`x402-fetch\` pay on \`solana\` and \`solana-devnet\` from the v1 body). It lives about ${SOLANA_PAYMENT_LIFE_SECONDS} s (its blockhash), so Solana is offered only for jobs due within ${SOLANA_PAYABLE_WITHIN_SECONDS} s; sign with a fresh blockhash (one whose life ends before the deadline plus ${SETTLEMENT_MARGIN_SECONDS} s is refused before the job runs) and the official client's compute budget (20000 units at 1 micro-lamport: a transaction asking more than the server's caps, SOLANA_MAX_COMPUTE_UNITS and SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS, is refused too).`,
  cannotWait:
    "are paid on EVM networks only: a Solana payment is a transaction whose blockhash expires within about 60-90 s, too soon to wait for a queued job to finish before it is settled",
};
