/**
 * The Solana family's configuration: who is paid (PAY_TO_SOLANA), each network's mint
 * (X402_ASSET_<NET>, over the network's known USDC) and RPC (X402_RPC_URL_<NET> only: the global
 * X402_RPC_URL is an EVM node), the compute-budget caps, and how it settles: directly with
 * SOLANA_FEE_PAYER_KEY through that RPC, else through the facilitators. Part of your project: edit freely.
 */
import type { Setting } from "../../ops/settings.js";
import type { FacilitatorRoute, NetworkPaymentConfig } from "../config.js";
import {
  type FamilyConfigInput,
  type FamilyConfigReader,
  networkEntry,
  type ResolvedListing,
} from "../family.js";
import { networkSettingSuffix } from "../networks.js";
import { readComputeBudgetCaps } from "./compute-config.js";
import { isSolanaAddress, parseSolanaSecretKey } from "./keys.js";
import { parseSolanaNetwork, type SolanaNetwork } from "./networks.js";
import type { ComputeBudgetCaps } from "./transaction.js";

/**
 * How a Solana network's payments settle: through the facilitator router (its fee payer, from its
 * /supported), or directly: this server co-signs as fee payer (SOLANA_FEE_PAYER_KEY) and sends the
 * transaction through the network's RPC.
 */
export type SolanaSettlementRoute =
  | FacilitatorRoute
  | {
      kind: "direct";
      rpcUrl: string;
      /** The 64-byte secret key (never logged). */
      feePayerKey: Uint8Array;
      /** Its public address (base58): the 402's extra.feePayer. */
      feePayer: string;
    };

/** One offered Solana network: its mint, who is paid there (PAY_TO_SOLANA), its RPC and route. */
export interface SolanaNetworkPaymentConfig extends NetworkPaymentConfig {
  family: "svm";
  network: SolanaNetwork;
  /** Base58 address; USDC goes to its associated token account, which must exist. */
  payTo: string;
  /** X402_RPC_URL_<NET> (the global X402_RPC_URL is an EVM endpoint, never used for Solana). */
  rpcUrl?: string;
  settlement?: SolanaSettlementRoute;
  /** SOLANA_MAX_COMPUTE_UNITS and SOLANA_MAX_PRIORITY_FEE_MICROLAMPORTS (defaults when absent). */
  computeBudget?: ComputeBudgetCaps;
}

/** Reads the Solana settings of one configuration. */
export function readSolanaConfig(input: FamilyConfigInput): FamilyConfigReader {
  const { options, devMode, read, used } = input;
  const payToSolana = read.text(options.payToSolana, "payment.payToSolana", "PAY_TO_SOLANA");
  if (!devMode && used && payToSolana.value === undefined)
    read.problems.push(
      "PAY_TO_SOLANA is not set: set it to the Solana address (base58) that should receive payments on Solana networks; its USDC token account must exist",
    );
  if (payToSolana.value !== undefined && !isSolanaAddress(payToSolana.value))
    read.problems.push(
      `${payToSolana.name} is ${JSON.stringify(payToSolana.value.slice(0, 60))}: set it to a Solana address (base58 of 32 bytes, e.g. from solana-keygen pubkey)`,
    );
  const payTo =
    payToSolana.value !== undefined && isSolanaAddress(payToSolana.value)
      ? payToSolana.value
      : undefined;
  const routeFor = solanaRoutes(input);
  const computeBudget = used ? readComputeBudgetCaps(read) : undefined;
  return {
    network: (written, setting) => resolveSolanaNetwork(written, setting, input),
    entry(written, listing) {
      if (payTo === undefined) return undefined; // reported above (production) or dev mode without it
      return networkEntry<SolanaNetworkPaymentConfig>(
        {
          family: "svm",
          written,
          network: listing.network as SolanaNetwork,
          payTo,
          computeBudget: computeBudget!,
        },
        listing.rpcUrl,
        routeFor(written, listing.rpcUrl),
      );
    },
  };
}

/** Solana: SOLANA_FEE_PAYER_KEY settles directly (with the network's RPC), else the facilitators. */
function solanaRoutes(input: FamilyConfigInput) {
  const { options, devMode, read, facilitator } = input;
  const feeKey = read.text(
    options.solanaFeePayerKey,
    "payment.solanaFeePayerKey",
    "SOLANA_FEE_PAYER_KEY",
  );
  let feePayer: { bytes: Uint8Array; address: string } | undefined;
  if (feeKey.value !== undefined) {
    // Never repeat the key: messages end up in logs.
    const parsed = parseSolanaSecretKey(feeKey.value);
    if ("problem" in parsed) read.problems.push(`${feeKey.name} ${parsed.problem}`);
    else feePayer = parsed;
  }
  return (written: string, rpcUrl: string | undefined): SolanaSettlementRoute | undefined => {
    const rpcSetting = `X402_RPC_URL_${networkSettingSuffix(written)}`;
    if (feeKey.value !== undefined) {
      if (rpcUrl === undefined) {
        read.problems.push(
          `${feeKey.name} is set but ${rpcSetting} is not: direct settlement on ${written} simulates and sends its transactions through that Solana JSON-RPC endpoint (X402_RPC_URL is for EVM networks only)`,
        );
        return undefined;
      }
      return (
        feePayer && {
          kind: "direct",
          rpcUrl,
          feePayerKey: feePayer.bytes,
          feePayer: feePayer.address,
        }
      );
    }
    if (facilitator.route) return facilitator.route;
    if (!devMode && facilitator.setting.value === undefined)
      read.problems.push(
        `no settlement route for ${written}: set X402_FACILITATOR_URL to facilitators that settle Solana payments, ` +
          `or SOLANA_FEE_PAYER_KEY and ${rpcSetting} to co-sign and send them from this server (that account pays the fees, in SOL)` +
          (options.settler !== undefined
            ? " (option payment.settler settles EVM payments only)"
            : ""),
      );
    return undefined;
  };
}

/**
 * One Solana network's mint and RPC: X402_ASSET_<NET> over the network's known USDC, and
 * X402_RPC_URL_<NET> only (the global X402_RPC_URL is an EVM node; Solana has its own).
 */
function resolveSolanaNetwork(
  written: string,
  setting: Setting,
  { read }: FamilyConfigInput,
): ResolvedListing | undefined {
  const parsed = parseSolanaNetwork(written)!; // the family parsed it
  const suffix = networkSettingSuffix(written);
  const asset = read.fromEnv(`X402_ASSET_${suffix}`);
  const rpc = read.fromEnv(`X402_RPC_URL_${suffix}`);
  const rpcUrl = read.url(rpc, "the Solana network's JSON-RPC endpoint (http or https)", true);
  if (asset.value !== undefined && !isSolanaAddress(asset.value)) {
    read.problems.push(
      `${asset.name} is ${JSON.stringify(asset.value.slice(0, 60))}: set it to the token's mint address (base58 of 32 bytes)`,
    );
    return undefined;
  }
  const mint = asset.value ?? parsed.usdc?.asset;
  if (mint === undefined) {
    read.problems.push(
      `${asset.name} is not set: network ${parsed.caip2} (${setting.name}) has no built-in USDC, so set the mint address of its USDC (base58)`,
    );
    return undefined;
  }
  const network: SolanaNetwork = {
    family: "svm",
    v1Name: parsed.v1Name,
    caip2: parsed.caip2,
    asset: mint,
    decimals: parsed.usdc?.decimals ?? 6,
  };
  return rpcUrl === undefined ? { network } : { network, rpcUrl };
}
