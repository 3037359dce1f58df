/**
 * The Solana side of a client for a service without Solana payments: the same names as pay-solana.ts and
 * no Solana package, so the client installs and compiles without them. It never chooses a Solana offer.
 */
import type { SchemeNetworkClient } from "@x402/fetch";
import type { SolanaReader } from "../../src/caller/guard-svm.js";
import { AgentCallError } from "./errors.js";
import type { Payers, PaymentLimit } from "./pay.js";

/** Whether this client can pay on Solana. */
export const SOLANA_PAYMENTS = false;

/** A Solana payer (never made by this client). */
export interface SolanaPayer {
  address: string;
  scheme: SchemeNetworkClient;
  schemeV1: SchemeNetworkClient;
  reader: SolanaReader;
}

/** Refuses: this client was generated without Solana payments. */
export async function solanaPayer(
  network: string,
  _payers: Payers,
  limit: PaymentLimit,
): Promise<SolanaPayer> {
  throw new AgentCallError(
    `the service asks for payment on ${network}, and this client was generated without Solana payments: regenerate it with create-agent client from a service (or agent.json) that takes them`,
    { errorType: "payer", status: 402, capability: limit.capability, jobId: limit.jobId },
  );
}
