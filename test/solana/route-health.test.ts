// GET /health and the metrics scrape watch a Solana network's route as they watch an EVM one's, against the kit's
// RPC (a real Solana runtime): the endpoint still answers for the network's genesis, the direct route's fee payer
// can still pay one more settlement's fee (its balance is agent_fee_payer_balance_sol{network}), and a Solana
// network settled through facilitators is degraded when they stop answering.
import type { AddressInfo } from "node:net";
import { createServer } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../templates/runtime/app.js";
import { agentHealth } from "../runtime/answers.js";
import { captureLogger, listen, makeAgent, type Running } from "../runtime/helpers.js";
import { type SolanaKit, SOLANA_DEVNET, startSolanaKit } from "./kit.js";

const MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuqCNXDHhPTP";
const TOKEN = "a-long-enough-t0ken";
let kit: SolanaKit;
let payTo: string;

beforeAll(async () => {
  kit = await startSolanaKit();
  payTo = await kit.payee();
});
afterAll(async () => {
  await kit?.close();
});

let server: Running | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server offering solana-devnet only (createApp: no start-up check, so /health alone judges the route). */
async function start(env: Record<string, string>) {
  const logger = captureLogger();
  server = await listen(
    createApp(makeAgent(), {
      devMode: false,
      env: { X402_NETWORK: "solana-devnet", PAY_TO_SOLANA: payTo, METRICS_TOKEN: TOKEN, ...env },
      logger,
    }),
  );
  return { url: server.url, logger };
}

const direct = (feePayerKey: string, rpcUrl = kit.rpcUrl) => ({
  SOLANA_FEE_PAYER_KEY: feePayerKey,
  X402_RPC_URL_SOLANA_DEVNET: rpcUrl,
});

async function health(url: string) {
  const res = await fetch(`${url}/health`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** agent_fee_payer_balance_sol (or _low_sol) for devnet, as a scrape shows it (NaN when absent). */
async function feePayerGauge(url: string, name = "agent_fee_payer_balance_sol") {
  const text = await (
    await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  return Number(
    new RegExp(`^${name}\\{network="${SOLANA_DEVNET}"\\} (\\S+)$`, "m").exec(text)?.[1],
  );
}

describe("GET /health and metrics with a direct Solana route", () => {
  it("is ok while the fee payer can pay, and the scrape shows its SOL and the warning threshold", async () => {
    const fee = await kit.newAccount(2_500_000_000n);
    const { url } = await start(direct(fee.secretKey));
    expect(await health(url)).toEqual(agentHealth());
    expect(await feePayerGauge(url)).toBe(2.5);
    expect(await feePayerGauge(url, "agent_fee_payer_balance_low_sol")).toBe(0.005);
    expect(kit.rpcCalls).toContain("getGenesisHash"); // the probe asked which network the RPC serves
  });

  it("is degraded (503) when the fee payer cannot pay one more settlement's fee, naming the fee payer", async () => {
    const fee = await kit.newAccount(4_999n); // one lamport short of one signature's fee
    const { url, logger } = await start(direct(fee.secretKey));
    expect(await health(url)).toEqual(
      agentHealth(["Solana fee payer out of SOL: paid jobs cannot settle until it is funded"]),
    );
    expect(await feePayerGauge(url)).toBe(0.000004999);
    const warned = logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warned).toContainEqual(
      expect.stringContaining(
        `the Solana fee payer ${fee.address} (SOLANA_FEE_PAYER_KEY) holds 0.000004999 SOL`,
      ),
    );
    expect(JSON.stringify(logger.lines)).not.toContain(fee.secretKey.slice(0, 16));
  });

  it("is degraded (503) when the RPC serves another network, and never shows the RPC URL's path", async () => {
    const mainnet = await startSolanaKit({ genesisHash: MAINNET_GENESIS });
    try {
      const fee = await kit.newAccount();
      const { url, logger } = await start(direct(fee.secretKey, `${mainnet.rpcUrl}/secret-path`));
      const { status, body } = await health(url);
      expect(status).toBe(503);
      expect(body.problems).toEqual([
        "settlement route on another chain: paid jobs are refused until it is fixed",
      ]);
      const log = JSON.stringify(logger.lines);
      expect(log).toContain('genesis hash is \\"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
      expect(log).not.toContain("secret-path");
      expect(await feePayerGauge(url)).toBeNaN(); // its balance on another network means nothing
    } finally {
      await mainnet.close();
    }
  });
});

describe("GET /health with Solana settled through facilitators", () => {
  it("is degraded (503) when no facilitator answers", async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((r) => probe.close(r));
    const { url } = await start({
      X402_FACILITATOR_URL: closed,
      X402_RPC_URL_SOLANA_DEVNET: kit.rpcUrl,
    });
    const { status, body } = await health(url);
    expect(status).toBe(503);
    expect(body.problems).toEqual([
      "settlement route unreachable: paid jobs are refused until it is back",
    ]);
  });
});
