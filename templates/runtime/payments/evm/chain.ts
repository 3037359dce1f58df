/**
 * What the EVM family uses of the `onchain` feature (payments/evm/onchain/, with viem): the checks
 * that need the chain (X402_RPC_URL) and direct settlement (X402_SETTLER_KEY). features.ts hands
 * the family a loader for it, or none in a project without the feature; then configuration naming
 * either setting is refused with the fix (npm run add -- onchain). Part of your project: edit freely.
 */
import type { Metrics } from "../../ops/metrics.js";
import type { Logger, VerifiedPayment } from "../../types.js";
import type { ProductionPaymentConfig, RoutedNetworkConfig } from "../config.js";
import type { FamilyWatch } from "../family.js";
import type { ResolvedNetwork } from "../networks.js";
import type { Reconciled } from "../scheme.js";
import type { Settler } from "../settlement.js";
import type { Authorization } from "../x402.js";

type Hex = `0x${string}`;

export interface ChainChecks {
  /**
   * EIP-1271, for signatures that do not recover `from`: "eoa" if `from` has no code (so the
   * signature is simply wrong), else whether the wallet contract accepts the signature.
   */
  contractSignature(auth: Authorization, signature: Hex): Promise<"eoa" | "valid" | "invalid">;
  /**
   * What became of a settlement transaction sent but not confirmed (reconcile): confirmed once its
   * receipt is successful and deep enough, failed when it reverted, or when the authorization
   * expired, with the nonce unused either way (nothing can charge it any more).
   */
  settlementState(
    from: Hex,
    nonce: Hex,
    tx: Hex | undefined,
    validBefore: number,
    /** Without `tx`: the transaction that used the nonce counts only if it paid `amount` to `payTo`. */
    paid?: { payTo: Hex; amount: bigint },
  ): Promise<Reconciled>;
  /**
   * Throws PaymentError if the token would refuse this transfer: the payer cannot cover the value,
   * the nonce is used, or anything else `transferWithAuthorization` reverts on (a blacklisted payer,
   * a paused token, a signature the token rejects...), found by simulating it with eth_call as
   * `caller` (the account that will submit it).
   */
  checkTransfer(payment: VerifiedPayment, caller: Hex): Promise<void>;
}

export interface DirectSettlerOptions {
  rpcUrl: string;
  /** Never logged, never sent anywhere: it only signs transactions locally. */
  settlerKey: Hex;
  network: ResolvedNetwork;
  /** How long to wait for the receipt once the transaction is sent. */
  timeoutSeconds: number;
  /**
   * The ledger's lock (ledger.ts `exclusive`), shared by every instance using the same ledger:
   * one transaction at a time from the settler account, so no two pick the same account nonce.
   */
  exclusive?: <T>(name: string, holdMs: number, work: () => Promise<T>) => Promise<T>;
}

/**
 * The `onchain` feature's entry point (onchain/module.ts). Loading it loads no viem: each of these
 * that needs viem loads it when first called.
 */
export interface EvmOnchainModule {
  createChainChecks(rpcUrl: string, network: ResolvedNetwork): Promise<ChainChecks>;
  createDirectSettler(options: DirectSettlerOptions): Promise<Settler>;
  /** The address of a settler key. */
  settlerAddress(key: Hex): Promise<Hex>;
  /** The watch of the networks with an RPC endpoint (onchain/route-health.ts; watch.ts passes only those). */
  watchChain(
    nets: RoutedNetworkConfig[],
    config: ProductionPaymentConfig,
    deps: { logger: Logger; metrics: Metrics },
  ): FamilyWatch;
}

/** Loads the feature; undefined in a project without it. */
export type EvmOnchainLoader = (() => Promise<EvmOnchainModule>) | undefined;
