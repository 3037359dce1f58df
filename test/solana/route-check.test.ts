// Start-up fails closed for a direct Solana route (SOLANA_FEE_PAYER_KEY): the network's RPC must serve the
// network the CAIP-2 id names (getGenesisHash), and the fee payer must hold SOL. Against the kit's RPC.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../templates/runtime/config.js";
import { checkRoutes } from "../../templates/runtime/payments/routes.js";
import { captureLogger } from "../runtime/helpers.js";
import { type SolanaKit, startSolanaKit } from "./kit.js";

const MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuqCNXDHhPTP";
let kit: SolanaKit;
let mainnet: SolanaKit;

beforeAll(async () => {
  kit = await startSolanaKit();
  mainnet = await startSolanaKit({ genesisHash: MAINNET_GENESIS });
});
afterAll(async () => {
  await kit?.close();
  await mainnet?.close();
});

async function check(rpcUrl: string, feePayerKey: string) {
  const config = resolveConfig({
    devMode: false,
    env: {
      X402_NETWORK: "solana-devnet",
      PAY_TO_SOLANA: await kit.payee(),
      SOLANA_FEE_PAYER_KEY: feePayerKey,
      X402_RPC_URL_SOLANA_DEVNET: `${rpcUrl}/secret-path`,
    },
  });
  const logger = captureLogger();
  const error = await checkRoutes(config, logger).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { error, logger };
}

describe("start-up checks of a direct Solana route", () => {
  it("refuses an RPC that serves another network, naming X402_RPC_URL_<NET> and never its path", async () => {
    const fee = await kit.newAccount();
    const { error } = await check(`${mainnet.rpcUrl}`, fee.secretKey);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).problems.join("\n");
    expect(message).toMatch(/X402_RPC_URL_SOLANA_DEVNET/);
    expect(message).toMatch(
      /genesis hash is "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp.*not solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/,
    );
    expect(message).not.toContain("secret-path");
  });

  it("refuses an unreachable RPC", async () => {
    const fee = await kit.newAccount();
    const { error } = await check("http://127.0.0.1:9", fee.secretKey);
    expect((error as ConfigError).problems[0]).toMatch(
      /X402_RPC_URL_SOLANA_DEVNET.*gave no usable answer to getGenesisHash/,
    );
  });

  it("never prints the RPC URL's user and password or query keys", async () => {
    const fee = await kit.newAccount();
    const { error } = await check(
      "http://bob:s0lanaPW@127.0.0.1:9/?api-key=solKEY123",
      fee.secretKey,
    );
    const message = (error as ConfigError).problems.join("\n");
    expect(message).toMatch(/X402_RPC_URL_SOLANA_DEVNET.*gave no usable answer to getGenesisHash/);
    expect(message).not.toMatch(/bob|s0lanaPW|solKEY123/);
  });

  it("refuses a fee payer without SOL or short of one fee, warns when low, says the balance when funded (no key in any line)", async () => {
    const empty = await kit.fundedPayer(0n); // a token account but no SOL
    const { error } = await check(kit.rpcUrl, empty.secretKey);
    expect((error as ConfigError).problems[0]).toMatch(
      new RegExp(
        `^the Solana fee payer ${empty.address} \\(SOLANA_FEE_PAYER_KEY\\) holds no SOL on solana:EtWT`,
      ),
    );

    const short = await kit.newAccount(4_999n); // some SOL, but not one settlement's fee
    const refused = await check(kit.rpcUrl, short.secretKey);
    expect((refused.error as ConfigError).problems[0]).toMatch(
      /^the Solana fee payer \S+ \(SOLANA_FEE_PAYER_KEY\) holds 0.000004999 SOL, less than one settlement's fee \(0.000005 SOL\), on solana:EtWT/,
    );

    const low = await kit.newAccount(1_000_000n);
    const warned = await check(kit.rpcUrl, low.secretKey);
    expect(warned.error).toBeUndefined();
    expect(warned.logger.lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      expect.stringMatching(/fee payer .* is low on SOL: 0.001 SOL, about 200 settlements/),
    ]);

    const funded = await kit.newAccount();
    const ok = await check(kit.rpcUrl, funded.secretKey);
    expect(ok.error).toBeUndefined();
    const lines = JSON.stringify(ok.logger.lines);
    expect(lines).toMatch(/holds 10 SOL for fees/);
    for (const key of [empty.secretKey, low.secretKey, funded.secretKey])
      expect(lines + JSON.stringify(warned.logger.lines)).not.toContain(key.slice(0, 16));
  });
});
