// A real x402 facilitator (the reference @x402/core + @x402/evm "exact" scheme) served over HTTP for tests.
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createPublicClient, createWalletClient, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { serveFacilitator as serve } from "../../src/cli/dev-facilitator.js";
import { localChain } from "./anvil.js";

export interface Facilitator {
  url: string;
  stop(): Promise<void>;
}

/**
 * v2 payments verify and settle on `eip155:<chainId>` (84532 by default). registerExactEvmScheme also registers
 * the v1 scheme for every v1 network name it knows, "base-sepolia" among them; v1 maps that name to chain id 84532,
 * so on an 84532 anvil v1 payments settle locally too.
 */
export async function startFacilitator(
  rpcUrl: string,
  privateKey: `0x${string}`,
  options: EvmFacilitatorOptions = {},
): Promise<Facilitator> {
  return serveFacilitator(await registerEvm(new x402Facilitator(), rpcUrl, privateKey, options));
}

export interface EvmFacilitatorOptions {
  /** How long the facilitator waits for a settlement's receipt (viem's default: 180 s), then answers settlement_pending. */
  receiptTimeoutMs?: number;
}

/** Registers the reference EVM "exact" scheme for the chain at rpcUrl (its id read from it) on a facilitator. */
export async function registerEvm(
  facilitator: x402Facilitator,
  rpcUrl: string,
  privateKey: `0x${string}`,
  { receiptTimeoutMs }: EvmFacilitatorOptions = {},
): Promise<x402Facilitator> {
  const chainId = await createPublicClient({ transport: http(rpcUrl) }).getChainId();
  const client = createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: localChain(rpcUrl, chainId),
    transport: http(rpcUrl),
    pollingInterval: 20, // anvil automines; viem's default 4 s interval would slow every settlement
  }).extend(publicActions);
  return registerExactEvmScheme(facilitator, {
    // viem 2.57's verifyTypedData parameter type is a union (blockHash/blockNumber variants) that x402's narrower
    // signer type does not fit; the call itself is the same, so only the parameter type is adapted.
    signer: toFacilitatorEvmSigner({
      ...client,
      address: client.account.address,
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
      ...(receiptTimeoutMs !== undefined && {
        waitForTransactionReceipt: (args: { hash: `0x${string}` }) =>
          client.waitForTransactionReceipt({ ...args, timeout: receiptTimeoutMs }),
      }),
    }),
    networks: `eip155:${chainId}`,
  });
}

/** Serves a facilitator over HTTP on 127.0.0.1: GET /supported, POST /verify, POST /settle (dev:paid's server). */
export async function serveFacilitator(facilitator: x402Facilitator): Promise<Facilitator> {
  return serve(facilitator);
}
