// Two servers offering Base Sepolia (the shared anvil) then Solana devnet (a fresh Solana kit: LiteSVM behind a
// loopback JSON-RPC, USDC at devnet's address), one settling Solana through a facilitator, one directly:
//   viaFacilitator: X402_FACILITATOR_URL lists the EVM facilitator first (it knows no Solana) and the kit's
//                   reference facilitator second, so Solana payments (v1 and v2) go to the second;
//   direct:         this server is the Solana fee payer (SOLANA_FEE_PAYER_KEY), EVM through the facilitator.
// Shared by the Solana chain tests (v2 clients, v1 clients, call).
import { inject } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import {
  captureLogger,
  listen,
  makeAgent,
  type Running,
  type TestAgent,
} from "../runtime/helpers.js";
import {
  type SolanaAccount,
  type SolanaKit,
  startSolanaKit,
  startSvmFacilitator,
  type SvmFacilitator,
} from "../solana/kit.js";
import { PAYEE } from "./accounts.js";
import { ensureBaseSepoliaUsdc } from "./usdc.js";

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
  close(): Promise<void>;
}

/** `agent` makes each server's agent (the test agent by default). */
export async function startSolanaServers(
  agent: () => TestAgent = makeAgent,
): Promise<SolanaServers> {
  const base = inject("chain");
  const baseUsdc = await ensureBaseSepoliaUsdc(base.rpcUrl);
  const kit = await startSolanaKit();
  const facilitator = await startSvmFacilitator(kit);
  const payTo = await kit.payee();
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
    async close() {
      await viaFacilitator.running.close();
      await direct.running.close();
      await facilitator.stop();
      await kit.close();
    },
  };
}
