/**
 * The Solana side of a generated client's payer: the official @x402/svm exact scheme, signing with the
 * Solana key. In a client for a service that takes Solana payments; a client for one that does not gets
 * pay-solana-none.ts in its place (same names, no Solana package).
 */
import type { SchemeNetworkClient } from "@x402/fetch";
import { PaymentGuardError } from "../../src/caller/guard.js";
import type { SolanaReader } from "../../src/caller/guard-svm.js";
import { solanaKeyBytes, solanaReader } from "../../src/caller/solana-payer.js";
import { AgentCallError } from "./errors.js";
import type { Payers, PaymentLimit } from "./pay.js";

/** Whether this client can pay on Solana. */
export const SOLANA_PAYMENTS = true;

/** A Solana payer: its address, the x402 schemes that sign (v2, v1) and the guard's transaction reader. */
export interface SolanaPayer {
  address: string;
  scheme: SchemeNetworkClient;
  schemeV1: SchemeNetworkClient;
  reader: SolanaReader;
}

/**
 * The official Solana payer for `network`: @x402/svm's exact scheme (v2, and v1 under its name) signing
 * with the Solana key, reading the mint and a blockhash from the network's RPC, and the guard's reader.
 */
export async function solanaPayer(
  network: string,
  payers: Payers,
  limit: PaymentLimit,
): Promise<SolanaPayer> {
  const svm = await import("@x402/svm/exact/client");
  const svmV1 = await import("@x402/svm/exact/v1/client");
  const kit = await import("@solana/kit");
  const token = await import("@solana-program/token");
  let signer: Awaited<ReturnType<typeof kit.createKeyPairSignerFromBytes>>;
  try {
    signer = await kit.createKeyPairSignerFromBytes(
      solanaKeyBytes(payers.solana.key ?? "", payers.solana.source, kit.getBase58Encoder()),
    );
  } catch (error) {
    throw new AgentCallError(
      error instanceof PaymentGuardError
        ? error.message
        : `${payers.solana.source} is not a valid Solana key pair: its public half does not match its secret; nothing was signed`,
      { errorType: "payer", status: 402, capability: limit.capability, jobId: limit.jobId },
    );
  }
  const rpcUrl = payers.rpcUrl(network);
  const config = rpcUrl === undefined ? undefined : { rpcUrl };
  return {
    address: String(signer.address),
    scheme: new svm.ExactSvmScheme(signer, config),
    schemeV1: new svmV1.ExactSvmSchemeV1(signer, config),
    reader: solanaReader(kit, token),
  };
}
