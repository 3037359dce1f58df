/**
 * The Solana side of a generated client's payer: the official @x402/svm exact scheme, signing with the
 * Solana key. In a client for a service that takes Solana payments; a client for one that does not gets
 * pay-solana-none.ts in its place (same names, no Solana package).
 */
import type { Network, x402Client } from "@x402/fetch";
import { type FamilyPayer, PaymentGuardError } from "../../src/caller/guard.js";
import { networkName } from "../../src/caller/payer-families.js";
import { solanaKeyBytes, solanaReader } from "../../src/caller/solana-payer.js";
import { AgentCallError } from "./errors.js";
import type { ClientFamily, Payers } from "./pay.js";
import type { PaymentLimit } from "./pay-limit.js";

/**
 * The official Solana payer for `network`: @x402/svm's exact scheme (v2, and v1 under its name) signing
 * with the Solana key, reading the mint and a blockhash from the network's RPC, and the guard's reader.
 */
async function solanaPayer(
  network: string,
  payers: Payers,
  limit: PaymentLimit,
): Promise<FamilyPayer<x402Client>> {
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
  const scheme = new svm.ExactSvmScheme(signer, config);
  const schemeV1 = new svmV1.ExactSvmSchemeV1(signer, config);
  return {
    address: String(signer.address),
    reader: solanaReader(kit, token),
    register: (client) => {
      client.register(network as Network, scheme);
      const v1Name = networkName(network);
      if (v1Name) client.registerV1(v1Name as Network, schemeV1);
    },
  };
}

/** The Solana payer family of this client: its key, its scheme, and what it says when no key is held. */
export const SVM_CLIENT: ClientFamily = {
  held: (payers) => payers.solana.key !== undefined,
  payer: solanaPayer,
  noKey: (offered, _payers, limit) =>
    new AgentCallError(
      `the service asks for payment on ${offered}, but no Solana payer key is set: pass \`solanaPayerKey\` or set SOLANA_PAYER_KEY; nothing was signed`,
      { errorType: "payer", status: 402, capability: limit.capability, jobId: limit.jobId },
    ),
};
