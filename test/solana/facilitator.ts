// The reference x402 facilitator for Solana (@x402/core's x402Facilitator + @x402/svm's exact scheme) over the
// kit's RPC, served over HTTP like the EVM one (test/chain/facilitator.ts); optionally it serves an EVM chain too,
// so one facilitator can list both networks.
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { registerExactSvmScheme } from "@x402/svm/exact/facilitator";
import { type Address, createSolanaRpc, devnet } from "@solana/kit";
import { type Facilitator, registerEvm, serveFacilitator } from "../chain/facilitator.js";
import type { SolanaAccount, SolanaKit } from "./kit.js";

export interface SvmFacilitator extends Facilitator {
  /** The fee payer the facilitator lists in /supported `extra.feePayer` and co-signs with. */
  feePayer: Address;
}

export interface SvmFacilitatorOptions {
  /** The fee payer's account (a new one with SOL by default). */
  feePayer?: SolanaAccount;
  /** Also settle "exact" on this EVM chain (the reference EVM scheme, as test/chain/facilitator.ts). */
  evm?: { rpcUrl: string; privateKey: `0x${string}` };
}

export async function startSvmFacilitator(
  kit: SolanaKit,
  options: SvmFacilitatorOptions = {},
): Promise<SvmFacilitator> {
  const feePayer = options.feePayer ?? (await kit.newAccount());
  const facilitator = new x402Facilitator();
  if (options.evm) await registerEvm(facilitator, options.evm.rpcUrl, options.evm.privateKey);
  // A map keyed by network: the signer picks the RPC per network (a bare RPC client is a Proxy its
  // "is this an RPC?" test does not recognise). The x402 v1 scheme registerExactSvmScheme adds asks
  // for it by the v1 name ("solana-devnet"): without that key it would go to the public devnet.
  const rpc = createSolanaRpc(devnet(kit.rpcUrl));
  registerExactSvmScheme(facilitator, {
    signer: toFacilitatorSvmSigner(feePayer.signer, { [kit.network]: rpc, "solana-devnet": rpc }),
    networks: kit.network as `${string}:${string}`,
  });
  const served = await serveFacilitator(facilitator);
  return { ...served, feePayer: feePayer.address };
}
