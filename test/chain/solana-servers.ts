// Two servers offering Base Sepolia (the shared anvil) then Solana devnet (a fresh Solana kit: LiteSVM behind a
// loopback JSON-RPC, USDC at devnet's address), one settling Solana through a facilitator, one directly:
//   viaFacilitator: X402_FACILITATOR_URL lists the EVM facilitator first (it knows no Solana) and the kit's
//                   reference facilitator second, so Solana payments (v1 and v2) go to the second;
//   direct:         this server is the Solana fee payer (SOLANA_FEE_PAYER_KEY), EVM through the facilitator.
// Shared by the Solana chain tests (v2 clients, v1 clients, call, fees), with the balances they compare, the
// 402 they are offered and the two routes for describe.each.
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { expect, inject } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { encodeBase64Json } from "../../templates/runtime/payments/x402.js";
import {
  captureLogger,
  listen,
  makeAgent,
  post,
  type Running,
  type TestAgent,
  unb64,
} from "../runtime/helpers.js";
import {
  type SolanaAccount,
  type SolanaKit,
  startSolanaKit,
  startSvmFacilitator,
  type SvmFacilitator,
} from "../solana/kit.js";
import { PAYEE } from "./accounts.js";
import { ensureBaseSepoliaUsdc, usdcBalance } from "./usdc.js";

export interface SolanaServer {
  running: Running;
  agent: TestAgent;
  /** What the server logged (servers started by start()). */
  logger?: ReturnType<typeof captureLogger>;
}

export interface SolanaServers {
  kit: SolanaKit;
  facilitator: SvmFacilitator;
  baseUsdc: `0x${string}`;
  /** PAY_TO_SOLANA: its USDC token account exists. */
  payTo: string;
  /** The direct server's fee payer. */
  feePayer: SolanaAccount;
  viaFacilitator: SolanaServer;
  direct: SolanaServer;
  /** Another server on the same kit and payee, with these settings over the shared ones (its caller closes it). */
  start(env: Record<string, string>): Promise<SolanaServer>;
  /** USDC on Solana of PAY_TO_SOLANA and of `payer`, and of PAYEE on Base Sepolia. */
  balances(payer: string): Promise<{ payTo: bigint; payer: bigint; basePayee: bigint }>;
  /**
   * The v2 PaymentRequired of the 402 `server` answers to the unpaid `body`, with its Solana offer and the
   * 402's body: asked again (100 ms apart, 50 times at most) until the Solana offer shows, as the facilitator
   * route learns its fee payer at start.
   */
  required(server: SolanaServer, body: unknown): Promise<{ required: any; offer: any; body: any }>;
  close(): Promise<void>;
}

/**
 * Base Sepolia's USDC on the shared anvil, beside a fresh Solana kit with its reference facilitator and a
 * payee whose USDC token account exists.
 */
export async function startSolanaBeside(): Promise<{
  baseUsdc: `0x${string}`;
  kit: SolanaKit;
  facilitator: SvmFacilitator;
  payTo: string;
}> {
  const baseUsdc = await ensureBaseSepoliaUsdc(inject("chain").rpcUrl);
  const kit = await startSolanaKit();
  const facilitator = await startSvmFacilitator(kit);
  return { baseUsdc, kit, facilitator, payTo: await kit.payee() };
}

/** `agent` makes each server's agent (the test agent by default). */
export async function startSolanaServers(
  agent: () => TestAgent = makeAgent,
): Promise<SolanaServers> {
  const base = inject("chain");
  const { baseUsdc, kit, facilitator, payTo } = await startSolanaBeside();
  const feePayer = await kit.newAccount();
  const start = async (env: Record<string, string>): Promise<SolanaServer> => {
    const a = agent();
    const logger = captureLogger();
    const running = await listen(
      createApp(a, {
        devMode: false,
        payment: { payTo: PAYEE },
        env: {
          X402_NETWORKS: "base-sepolia,solana-devnet",
          X402_RPC_URL: base.rpcUrl,
          X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl,
          PAY_TO_SOLANA: payTo,
          ...env,
        },
        logger,
      }),
    );
    return { running, agent: a, logger };
  };
  const viaFacilitator = await start({
    X402_FACILITATOR_URL: `${base.facilitatorUrl},${facilitator.url}`,
  });
  const direct = await start({
    X402_FACILITATOR_URL: base.facilitatorUrl,
    SOLANA_FEE_PAYER_KEY: feePayer.secretKey,
  });
  return {
    kit,
    facilitator,
    baseUsdc,
    payTo,
    feePayer,
    viaFacilitator,
    direct,
    start,
    balances: async (payer) => ({
      payTo: await kit.usdcBalance(payTo),
      payer: await kit.usdcBalance(payer),
      basePayee: await usdcBalance(base.rpcUrl, baseUsdc, PAYEE),
    }),
    required: (server, body) => solanaRequired(server.running.url, kit.network, body),
    async close() {
      await viaFacilitator.running.close();
      await direct.running.close();
      await facilitator.stop();
      await kit.close();
    },
  };
}

/** SolanaServers.required, of the server at `url` offering `network`. */
export async function solanaRequired(url: string, network: string, body: unknown) {
  for (let i = 0; ; i++) {
    const res = await post(url, body);
    expect(res.status).toBe(402);
    const required = unb64(res.headers.get("payment-required")!);
    const offer = required.accepts.find((a: { network: string }) => a.network === network);
    if (offer || i >= 50) return { required, offer, body: res.body };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The official client's payment (@x402/svm, as `by`) for the Solana offer the server at `url` makes
 * for `body`, as a PAYMENT-SIGNATURE value.
 */
export async function solanaPaymentHeader(
  url: string,
  body: unknown,
  kit: SolanaKit,
  by: SolanaAccount,
): Promise<string> {
  const { required, offer } = await solanaRequired(url, kit.network, body);
  const client = new x402Client().register(
    kit.network as `${string}:${string}`,
    new ExactSvmScheme(by.signer, { rpcUrl: kit.rpcUrl }),
  );
  return encodeBase64Json(await client.createPaymentPayload({ ...required, accepts: [offer] }));
}

/**
 * The two settlement routes of `servers()` for describe.each: the route's name, its server and the fee payer
 * its Solana offers name (read once the servers started).
 */
export function settlementRoutes(
  servers: () => SolanaServers,
): Array<[string, () => SolanaServer, () => string]> {
  return [
    [
      "through the facilitator that lists Solana",
      () => servers().viaFacilitator,
      () => servers().facilitator.feePayer,
    ],
    ["directly (SOLANA_FEE_PAYER_KEY)", () => servers().direct, () => servers().feePayer.address],
  ];
}
