// GET /health with an EVM network and a Solana network, both settled directly: the shared anvil (Base Sepolia,
// X402_SETTLER_KEY) and the Solana kit (a real Solana runtime behind its RPC, SOLANA_FEE_PAYER_KEY). Each gets
// its record under `networks`; when the Solana node goes away, /health says degraded (503) naming solana-devnet
// while Base Sepolia's record stays ok.
import type { Server } from "node:http";
import { describe, expect, inject, it } from "vitest";
import { startServer } from "../../templates/runtime/server.js";
import { startSolanaKit, SOLANA_DEVNET } from "../solana/kit.js";
import { captureLogger, closeAfterEach, makeAgent } from "../runtime/helpers.js";
import { healthOf, healthUntil, urlOf } from "../runtime/servers.js";
import { PAYEE, SETTLER_KEY } from "./accounts.js";

const { asset, rpcUrl } = inject("chain");
const TOKEN = "a-long-enough-t0ken";

let server: Server | undefined;
closeAfterEach(() => server);

describe("GET /health with Base Sepolia and Solana devnet settled directly", () => {
  it("has a record per network, then says degraded (503) naming solana-devnet when its node goes away", async () => {
    const kit = await startSolanaKit();
    let closed = false;
    try {
      const feePayer = await kit.newAccount(3_000_000_000n);
      server = await startServer(makeAgent(), {
        env: {
          PORT: "0",
          X402_NETWORKS: "base-sepolia,solana-devnet",
          PAY_TO: PAYEE,
          X402_ASSET_BASE_SEPOLIA: asset,
          X402_RPC_URL: rpcUrl,
          X402_SETTLER_KEY: SETTLER_KEY,
          PAY_TO_SOLANA: await kit.payee(),
          SOLANA_FEE_PAYER_KEY: feePayer.secretKey,
          X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl,
          METRICS_TOKEN: TOKEN,
        },
        logger: captureLogger(),
      });
      const url = urlOf(server);
      const agent = makeAgent();
      expect(await healthOf(url)).toEqual({
        status: 200,
        body: {
          name: agent.name,
          version: agent.version,
          status: "ok",
          networks: { "eip155:84532": { status: "ok" }, [SOLANA_DEVNET]: { status: "ok" } },
        },
      });
      const metrics = await (
        await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      expect(metrics).toMatch(
        new RegExp(`^agent_fee_payer_balance_sol\\{network="${SOLANA_DEVNET}"\\} 3$`, "m"),
      );
      expect(metrics).toMatch(/^agent_settler_balance_eth\{network="eip155:84532"\} \d/m);
      expect(metrics).not.toMatch(/agent_settler_balance_eth\{network="solana:/);

      await kit.close();
      closed = true;
      const last = await healthUntil(url, (status) => status !== 200);
      expect(last).toEqual({
        status: 503,
        body: {
          name: agent.name,
          version: agent.version,
          status: "degraded",
          problems: [
            "settlement route of solana-devnet unreachable: paid jobs on that network are refused until it is back",
          ],
          networks: {
            "eip155:84532": { status: "ok" },
            [SOLANA_DEVNET]: {
              status: "degraded",
              problems: ["settlement route unreachable: paid jobs are refused until it is back"],
            },
          },
        },
      });
    } finally {
      if (!closed) await kit.close();
    }
  });
});
