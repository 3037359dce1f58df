/**
 * The EVM family, as the core sees it (family.ts): its network ids (evm/networks.ts), its settings
 * (evm/config.ts), its scheme (evm/scheme.ts), its route checks (evm/watch.ts and, for the
 * facilitators, ../facilitator.ts) and its discovery facts. features.ts registers it, with the
 * `onchain` feature's loader when the project has it. Part of your project: edit freely.
 */
import type { ResolvedConfig } from "../../config.js";
import type { Logger } from "../../types.js";
import type { NetworkFamily } from "../family.js";
import { type EvmNetworkPaymentConfig, readEvmConfig, type RoutedEvmNetwork } from "./config.js";
import type { EvmOnchainLoader } from "./chain.js";
import { EVM_NETWORKS, parseEvmNetwork } from "./networks.js";
import { createEvmScheme, describeEvmRoute } from "./scheme.js";
import { watchEvm } from "./watch.js";

/**
 * The EVM family, with the `onchain` feature's loader (X402_RPC_URL, X402_SETTLER_KEY) or none in
 * a project without it; `missing` words the refusal of a setting that needs it.
 */
export const createEvmFamily = (
  onchain: EvmOnchainLoader,
  missing: (asked: string) => string,
): NetworkFamily => ({
  id: "evm",
  names: { known: Object.keys(EVM_NETWORKS), shapes: ["eip155:<chainId>"] },
  perNetworkSettings: ["X402_RPC_URL", "X402_ASSET", "X402_ASSET_NAME", "X402_ASSET_VERSION"],
  parse: parseEvmNetwork,
  readConfig: (input) => readEvmConfig(input, onchain ? undefined : missing),
  createScheme: (net, settings, deps) =>
    createEvmScheme(net as RoutedEvmNetwork, settings, deps, onchain),
  describeRoute: (net) =>
    describeEvmRoute((net as RoutedEvmNetwork).settlement, net.rpcUrl, onchain !== undefined),
  async checkRoute(net, config, logger) {
    const n = net as RoutedEvmNetwork;
    if (n.settlement.kind !== "facilitator") return;
    const { checkFacilitator, SETTLE_DIRECTLY } = await import("../facilitator.js");
    const payment = {
      ...config.payment,
      network: n.network,
      payTo: n.payTo,
      settlement: n.settlement,
    };
    // Without the onchain feature, settling directly (X402_RPC_URL, X402_SETTLER_KEY) needs it first.
    const direct = onchain
      ? SETTLE_DIRECTLY
      : `${SETTLE_DIRECTLY} (${missing("direct settlement")})`;
    await checkFacilitator({ ...config, payment } as ResolvedConfig, logger, direct);
  },
  watch: (nets, config, deps) => watchEvm(nets, config, deps, onchain),
  announce: (logger) => logRecoveryPath(logger),
  facts(net) {
    const { chainId, asset, assetName, assetVersion } = (net as EvmNetworkPaymentConfig).network;
    return { chainId, asset: { address: asset, name: assetName, version: assetVersion } };
  },
  // An EIP-3009 authorization is good until its validBefore, which outlives the deadline: it can wait.
  cannotWait: undefined,
});

/** Says once, at start-up, how payment signatures are recovered on this Node (verify.ts's self-test). */
export function logRecoveryPath(logger: Logger | undefined): void {
  import("./verify.js").then(
    ({ recoveryPath: recovery }) => {
      if (recovery.path === "failed")
        logger?.error(
          `payment signatures cannot be checked on this Node: the secp256k1 self-test failed (${recovery.problem}); every paid job will fail with a 500 and nothing is charged`,
        );
      else
        logger?.info(
          recovery.path === "openssl"
            ? "payment signatures: secp256k1 self-test passed; points decompressed by node:crypto (OpenSSL)"
            : "payment signatures: secp256k1 self-test passed; this Node's OpenSSL has no secp256k1, so points are decompressed by the runtime's own square root (pure JS)",
        );
    },
    () => undefined, // reported by the first verify() instead of crashing startup
  );
}
