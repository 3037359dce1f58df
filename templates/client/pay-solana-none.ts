/**
 * The Solana side of a client for a service without Solana payments: the same name as pay-solana.ts and no
 * Solana package, so the client installs and compiles without them. It never holds a Solana key, so it
 * never chooses a Solana offer.
 */
import { AgentCallError } from "./errors.js";
import type { ClientFamily } from "./pay.js";

/** The Solana payer family of this client: none. It refuses, saying how to get a client that pays on Solana. */
export const SVM_CLIENT: ClientFamily = {
  held: () => false,
  payer: async (network, _payers, limit) => {
    throw new AgentCallError(
      `the service asks for payment on ${network}, and this client was generated without Solana payments: regenerate it with create-agent client from a service (or agent.json) that takes them`,
      { errorType: "payer", status: 402, capability: limit.capability, jobId: limit.jobId },
    );
  },
  noKey: (offered, _payers, limit) =>
    new AgentCallError(
      `the service asks for payment on ${offered}, and this client was generated without Solana payments: regenerate it from a service (or agent.json) that takes them; nothing was signed`,
      { errorType: "payer", status: 402, capability: limit.capability, jobId: limit.jobId },
    ),
};
