// The chain every chain test shares: the global setup's anvil with Circle's FiatTokenV2_2 (inject("chain")),
// a viem client on it, its USDC's EIP-712 domain and balances, funded payers, and a real v2 payment for
// what a server's 402 offers, signed as a v2 client signs it.
import { createPublicClient, http, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { expect, inject } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import type { AppOptions } from "../../templates/runtime/config.js";
import {
  type AuthorizationParams,
  captureLogger,
  job,
  listen,
  post,
  type Running,
  signAuthorization,
  type TestAgent,
  unb64,
  v2Header,
} from "../runtime/helpers.js";
import { localChain } from "./anvil.js";
import { freshPayer as fundedPayer, nonceUsed as nonceUsedOn, usdcBalance } from "./usdc.js";

export const { rpcUrl, chainId, asset, facilitatorUrl } = inject("chain");
export const chain = localChain(rpcUrl, chainId);
export const client = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 20 });
export const domain = { name: "USDC", version: "2", chainId, verifyingContract: asset } as const;

/** `address`'s USDC, read from the chain. */
export const balance = (address: Hex) => usdcBalance(rpcUrl, asset, address);
/** Whether `from`'s authorization `nonce` is used on chain. */
export const nonceUsed = (from: Hex, nonce: Hex) => nonceUsedOn(rpcUrl, asset, from, nonce);
/** A fresh account with `usdc` atomic units of USDC and some ETH for gas. */
export const freshPayer = (usdc: bigint) => fundedPayer(rpcUrl, asset, usdc);

/** The first offer of the 402 that the server at `url` answers to the unpaid `request`. */
export async function firstOffer(url: string, request: ReturnType<typeof job>): Promise<any> {
  const first = await post(url, request);
  expect(first.status).toBe(402);
  return unb64(first.headers.get("payment-required")!).accepts[0];
}

/**
 * `payer`'s real EIP-3009 authorization of `accepted` (its payee and amount unless `p` says otherwise), as
 * the PAYMENT-SIGNATURE header a v2 client sends; its payload and nonce too.
 */
export async function signOffer(
  payer: PrivateKeyAccount,
  accepted: Record<string, any>,
  p: AuthorizationParams = {},
) {
  const payload = await signAuthorization(payer, {
    to: accepted.payTo,
    value: accepted.amount,
    domain,
    ...p,
  });
  return { header: v2Header(accepted, payload), payload, nonce: payload.authorization.nonce };
}

/** How an app settles: with its own settler key through the chain's RPC, or through the x402 facilitator. */
export type RouteName = "direct" | "facilitator";

/** A production app on one settlement route, paying a payee of its own. */
export interface RouteApp<A extends TestAgent> {
  name: RouteName;
  app: Running;
  agent: A;
  logger: ReturnType<typeof captureLogger>;
  payee: Hex;
  /** PAYMENT-REQUIRED accepts[0] for an echo job (0.01 USDC), as a v2 client copies it. */
  accepted: Record<string, any>;
}

/**
 * Starts `agent` in production, selling for this chain's USDC on Base Sepolia to a fresh payee, settled as
 * `settlement` says (a settler key, or a facilitator URL, and the URLs to reach them), `options` over the
 * defaults; reads its offer for an echo job.
 */
export async function startRouteApp<A extends TestAgent>(
  name: RouteName,
  agent: A,
  settlement: AppOptions["payment"],
  options: Omit<AppOptions, "payment"> = {},
): Promise<RouteApp<A>> {
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const logger = captureLogger();
  const app = await listen(
    createApp(agent, {
      devMode: false,
      env: {},
      logger,
      ...options,
      payment: { payTo: payee, network: "base-sepolia", asset, ...settlement },
    }),
  );
  const accepted = await firstOffer(app.url, job("echo", { text: "how do I pay?" }));
  expect(accepted).toMatchObject({ network: "eip155:84532", amount: "10000", payTo: payee });
  return { name, app, agent, logger, payee, accepted };
}
