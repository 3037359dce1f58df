/**
 * The EVM side of a generated client's payer: the official @x402/evm exact scheme, signing EIP-3009
 * authorizations with the payer's key (payerKey or X402_PAYER_KEY), registered on the x402 client by the
 * shared payer (pay.ts) through the client family table.
 */
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import type { x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { AgentCallError } from "./errors.js";
import type { ClientFamily } from "./pay.js";

/** The payer's account from a hex private key; the message never contains the key. */
export function payerAccount(key: string | undefined, capability: string, jobId: string) {
  const fail = (problem: string) =>
    new AgentCallError(`${problem}; nothing was signed`, {
      errorType: "payer",
      status: 402,
      capability,
      jobId,
    });
  if (!key)
    throw fail(
      "the service asks for payment, but no payer key is set: pass `payerKey` or set X402_PAYER_KEY",
    );
  const hex = key.startsWith("0x") ? key : `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex))
    throw fail("the payer key is not a 32-byte hex private key (0x followed by 64 hex digits)");
  return privateKeyToAccount(hex as `0x${string}`);
}

/** The EVM payer family of this client: its key, its scheme, and what it says when no key is held. */
export const EVM_CLIENT: ClientFamily = {
  held: (payers) => payers.evm.held,
  payer: async (_network, payers) => {
    const account = payers.evm.account();
    return {
      address: account.address,
      reader: undefined,
      register: (client: x402Client) => registerExactEvmScheme(client, { signer: account }),
    };
  },
  // payers.evm.account() throws: no EVM payer key is set (pass payerKey or set X402_PAYER_KEY).
  noKey: (_offered, payers) => {
    payers.evm.account();
    return undefined;
  },
};
